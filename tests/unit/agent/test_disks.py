"""Disk collector: /sys/block without udev."""

from __future__ import annotations

from ironsight.agent import disks

IPA_DISK_FIELDS = {"name", "model", "size", "rotational", "wwn", "serial", "vendor",
                   "wwn_with_extension", "wwn_vendor_extension", "hctl", "by_path", "uuid",
                   "partuuid", "logical_sectors", "physical_sectors", "tran"}


def _by_name(root):
    return {disk["name"]: disk for disk in disks.collect(str(root))}


def test_a_virtio_disk_is_described(qemu_vm):
    assert disks.collect(str(qemu_vm)) == [{
        "name": "/dev/vda", "model": None, "size": 10 * 1024**3, "rotational": True,
        "wwn": None, "serial": None, "vendor": "0x1af4", "wwn_with_extension": None,
        "wwn_vendor_extension": None, "hctl": None, "by_path": None, "uuid": None,
        "partuuid": None, "logical_sectors": 512, "physical_sectors": 4096, "tran": None}]


def test_every_disk_has_ipas_fields(server):
    for disk in disks.collect(str(server)):
        assert set(disk) == IPA_DISK_FIELDS


def test_loop_ram_dm_sr_and_zram_devices_are_skipped(server, qemu_vm):
    assert list(_by_name(server)) == ["/dev/sda", "/dev/sdb"]
    assert list(_by_name(qemu_vm)) == ["/dev/vda"]


def test_size_is_in_bytes_from_512_byte_sectors(server):
    assert _by_name(server)["/dev/sda"]["size"] == 937703088 * 512


def test_rotational_is_a_bool(server):
    assert _by_name(server)["/dev/sda"]["rotational"] is False
    assert _by_name(server)["/dev/sdb"]["rotational"] is True


def test_scsi_model_and_vendor_are_stripped(server):
    sda = _by_name(server)["/dev/sda"]
    assert (sda["model"], sda["vendor"]) == ("PERC H740P", "DELL")


def test_scsi_serial_comes_from_vpd_page_80(server):
    assert _by_name(server)["/dev/sdb"]["serial"] == "ZC1ABCDE"


def test_naa_wwid_becomes_a_hex_wwn(server):
    assert _by_name(server)["/dev/sdb"]["wwn"] == "0x5000c500a1b2c3d4"


def test_nvme_eui_wwid_is_kept(tree):
    tree.disk("nvme0n1", "devices/pci0000:00/0000:00:05.0/nvme/nvme0", sectors=2**30,
              files={"wwid": "eui.0025388b71b3c4d5\n", "device/serial": "S4EWNX0R123456\n",
                     "device/model": "Samsung SSD 970 EVO Plus 1TB\n"})
    nvme = disks.collect(str(tree))[0]
    assert (nvme["wwn"], nvme["serial"]) == ("eui.0025388b71b3c4d5", "S4EWNX0R123456")


def test_a_t10_wwid_is_not_a_wwn(tree):
    tree.disk("sda", "devices/x/0:0:0:0", sectors=2**30,
              files={"device/wwid": "t10.ATA     QEMU HARDDISK    QM00001\n"})
    assert disks.collect(str(tree))[0]["wwn"] is None


def test_virtio_serial_is_read_from_the_block_directory(qemu_vm):
    qemu_vm.write("sys/block/vda/serial", "SER-DISK-1\n")
    assert disks.collect(str(qemu_vm))[0]["serial"] == "SER-DISK-1"


def test_hctl_is_the_scsi_address_of_the_device(server):
    assert _by_name(server)["/dev/sda"]["hctl"] == "0:2:0:0"


def test_by_path_comes_from_the_dev_disk_links(server):
    disks_ = _by_name(server)
    assert disks_["/dev/sda"]["by_path"] == "/dev/disk/by-path/pci-0000:18:00.0-scsi-0:2:0:0"
    assert disks_["/dev/sdb"]["by_path"] is None


def test_a_disk_without_size_is_skipped_with_a_warning(qemu_vm):
    qemu_vm.disk("vdb", "devices/pci0000:00/0000:00:06.0/virtio3", sectors=None)
    warnings: list[str] = []
    assert [d["name"] for d in disks.collect(str(qemu_vm), warnings)] == ["/dev/vda"]
    assert warnings == ["disk vdb: no readable size, skipped"]


def test_an_empty_card_reader_is_skipped(qemu_vm):
    qemu_vm.disk("sdc", "devices/usb/0:0:0:0", sectors=0)
    assert [d["name"] for d in disks.collect(str(qemu_vm))] == ["/dev/vda"]


def test_a_machine_without_sys_block_has_no_disks(tree):
    assert disks.collect(str(tree)) == []
