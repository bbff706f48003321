"""Realistic agent reports for a fleet of N machines of a few server models, and the facts
each one was generated from, so that a benchmark can compute every query's right answer
without the query language.

A machine: one of four models (vendor, product, board PCI devices incl. the BMC's VGA, CPU
with its ~100 flags), 256 GiB to 2 TiB of memory as 16-32 DIMMs in the `dmi` collector's
shape, 2-12 disks of a few models, 2-4 NICs at 10/25/100 Gb/s with LLDP frames naming their
rack's switch, and one in five with 1-8 NVIDIA or AMD GPUs. Deterministic in `i`.
"""

from __future__ import annotations

import random
import uuid as uuidlib
from dataclasses import dataclass, field
from typing import Any

FLAGS = ["fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "cx8", "apic", "sep", "mtrr",
         "pge", "mca", "cmov", "pat", "pse36", "clflush", "dts", "acpi", "mmx", "fxsr", "sse",
         "sse2", "ss", "ht", "tm", "pbe", "syscall", "nx", "pdpe1gb", "rdtscp", "lm",
         "constant_tsc", "art", "arch_perfmon", "pebs", "bts", "rep_good", "nopl", "xtopology",
         "nonstop_tsc", "cpuid", "aperfmperf", "pni", "pclmulqdq", "dtes64", "monitor", "ds_cpl",
         "vmx", "smx", "est", "tm2", "ssse3", "sdbg", "fma", "cx16", "xtpr", "pdcm", "pcid",
         "dca", "sse4_1", "sse4_2", "x2apic", "movbe", "popcnt", "tsc_deadline_timer", "aes",
         "xsave", "avx", "f16c", "rdrand", "lahf_lm", "abm", "3dnowprefetch", "cpuid_fault",
         "epb", "cat_l3", "cdp_l3", "invpcid_single", "intel_ppin", "ssbd", "mba", "ibrs", "ibpb",
         "stibp", "ibrs_enhanced", "tpr_shadow", "vnmi", "flexpriority", "ept", "vpid", "ept_ad",
         "fsgsbase", "tsc_adjust", "bmi1", "hle", "avx2", "smep", "bmi2", "erms", "invpcid",
         "rtm", "cqm", "mpx", "rdt_a", "avx512f", "avx512dq", "rdseed", "adx", "smap",
         "clflushopt", "clwb", "intel_pt", "avx512cd", "avx512bw", "avx512vl", "xsaveopt",
         "xsavec", "xgetbv1", "xsaves", "cqm_llc", "cqm_occup_llc"]

MODELS = [
    {"vendor": "Dell Inc.", "product": "PowerEdge R750",
     "cpu": "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", "cores": 128,
     "bios": "1.10.2", "nic": ("0x14e4", "0x16d7")},
    {"vendor": "HPE", "product": "ProLiant DL380 Gen10 Plus",
     "cpu": "Intel(R) Xeon(R) Gold 6330 CPU @ 2.00GHz", "cores": 112,
     "bios": "U46 v1.62", "nic": ("0x8086", "0x1593")},
    {"vendor": "Supermicro", "product": "SYS-2029U-TR4",
     "cpu": "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz", "cores": 80,
     "bios": "3.4", "nic": ("0x15b3", "0x1017")},
    {"vendor": "Lenovo", "product": "ThinkSystem SR650 V2",
     "cpu": "Intel(R) Xeon(R) Platinum 8358 CPU @ 2.60GHz", "cores": 128,
     "bios": "AFE120G", "nic": ("0x8086", "0x159b")},
]
DISK_MODELS = [("SAMSUNG MZ7L3480HCHQ", 480103981056, False),
               ("INTEL SSDPF2KX038T1", 3840755982336, False),
               ("ST8000NM000A-2KE1", 8001563222016, True)]
GPUS = [("10de", "2330", "NVIDIA H100"), ("10de", "20b5", "NVIDIA A100"),
        ("1002", "740c", "AMD MI250X")]
SPEEDS = (10000, 25000, 100000)


@dataclass
class Facts:
    """What machine `i` was made of (the benchmark's ground truth)."""

    index: int
    vendor: str
    product: str
    memory_gib: int
    gpus: list[str] = field(default_factory=list)  # vendor IDs
    nic_speeds: list[int] = field(default_factory=list)
    disks: list[tuple[str, int]] = field(default_factory=list)  # (model, size bytes)
    switches: set[str] = field(default_factory=set)
    traits: list[str] = field(default_factory=list)


def mac(i: int, n: int) -> str:
    return f"52:{n:02x}:{i >> 24 & 255:02x}:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:{i & 255:02x}"


def _tlv(kind: int, value: bytes) -> list[Any]:
    return [kind, value.hex()]


def _lldp(switch: str, port: str) -> list[list[Any]]:
    return [_tlv(1, b"\x04" + bytes.fromhex("0c2a5b000001")), _tlv(2, b"\x05" + port.encode()),
            _tlv(3, b"\x00\x78"), _tlv(5, switch.encode())]


def machine(i: int) -> tuple[dict[str, Any], Facts]:
    rnd = random.Random(i)
    model = MODELS[i % len(MODELS)]
    dimm_gib = rnd.choice((16, 32, 64))
    dimms = rnd.choice((16, 32))
    memory_gib = dimm_gib * dimms
    facts = Facts(i, model["vendor"], model["product"], memory_gib)
    rack = f"rack{i // 40:03d}"
    interfaces = []
    for n in range(rnd.choice((2, 2, 4))):
        speed = rnd.choice(SPEEDS)
        switch = f"{rack}-tor-{'ab'[n % 2]}.dc1.example.net"
        facts.nic_speeds.append(speed)
        facts.switches.add(switch)
        interfaces.append({
            "name": f"ens{n + 1}f0", "mac_address": mac(i, n), "ipv4_address":
            f"10.{i >> 8 & 255}.{i & 255}.{n + 10}" if n == 0 else None,
            "ipv6_address": None, "has_carrier": True, "speed_mbps": speed,
            "vendor": model["nic"][0], "product": model["nic"][1], "client_id": None,
            "biosdevname": None, "lldp": _lldp(switch, f"Ethernet{i % 40 + 1}/{n + 1}")})
    disks = []
    for n in range(rnd.choice((2, 4, 8, 12))):
        name, size, rotational = DISK_MODELS[0] if n < 2 else rnd.choice(DISK_MODELS[1:])
        facts.disks.append((name, size))
        disks.append({"name": f"/dev/sd{chr(97 + n)}", "model": name, "size": size,
                      "rotational": rotational, "wwn": f"0x5000c500{i:08x}{n:02x}",
                      "serial": f"S{i:07d}D{n:02d}", "vendor": name.split()[0],
                      "wwn_with_extension": None, "wwn_vendor_extension": None, "hctl":
                      f"{n}:0:0:0", "by_path": f"/dev/disk/by-path/pci-0000:00:17.0-ata-{n + 1}"})
    pci = [{"vendor_id": "8086", "product_id": f"{0x2020 + n:04x}", "class": "060400",
            "revision": "04", "bus": f"0000:00:{n:02x}.0", "numa_node_id": 0}
           for n in range(24)]
    pci.append({"vendor_id": "1a03", "product_id": "2000", "class": "030000",
                "revision": "52", "bus": "0000:03:00.0", "numa_node_id": 0})
    for n in range(len(interfaces)):
        pci.append({"vendor_id": model["nic"][0][2:], "product_id": model["nic"][1][2:],
                    "class": "020000", "revision": "01", "bus": f"0000:5{n}:00.0",
                    "numa_node_id": n % 2})
    if i % 5 == 0:
        vendor, product, _ = GPUS[rnd.randrange(len(GPUS))]
        for n in range(rnd.choice((1, 2, 4, 8))):
            facts.gpus.append(vendor)
            pci.append({"vendor_id": vendor, "product_id": product, "class": "030200",
                        "revision": "a1", "bus": f"0000:{0x17 + n * 16:02x}:00.0",
                        "numa_node_id": n % 2})
    memory_devices = [{"Size": f"{dimm_gib} GB", "Locator": f"DIMM_{chr(65 + n // 8)}{n % 8}",
                       "Bank Locator": f"P{n // 16}", "Serial Number": f"M{i:07d}{n:02d}",
                       "Part Number": "M393A4K40DB3-CWE", "Manufacturer": "Samsung",
                       "Speed": "3200 MT/s", "Type": "DDR4"} for n in range(dimms)]
    if i % 3 == 0:
        facts.traits = ["CUSTOM_GPU_POOL" if facts.gpus else "CUSTOM_GENERAL", "CUSTOM_RACK_" +
                        rack.upper()]
    data = {
        "inventory": {
            "interfaces": interfaces,
            "cpu": {"model_name": model["cpu"], "count": model["cores"],
                    "architecture": "x86_64", "flags": FLAGS, "frequency": "2000",
                    "socket_count": 2},
            "memory": {"total": memory_gib * 2**30 - 2**31, "physical_mb": memory_gib * 1024},
            "disks": disks,
            "bmc_address": f"10.{128 + (i >> 16 & 127)}.{i >> 8 & 255}.{i & 255}",
            "bmc_v6address": "::/0", "bmc_mac": mac(i, 15),
            "system_vendor": {"product_name": model["product"], "serial_number": f"SN{i:07d}",
                              "manufacturer": model["vendor"], "sku": "SKU-" + model["product"][:3],
                              "uuid": str(uuidlib.uuid5(uuidlib.NAMESPACE_OID, f"fleet-{i}")),
                              "firmware": {"vendor": model["vendor"], "version": model["bios"],
                                           "build_date": "03/14/2025"}},
            "boot": {"current_boot_mode": "uefi", "pxe_interface": mac(i, 0)},
            "hostname": f"node-{i}"},
        "pci_devices": pci,
        "dmi": {"memory": {"devices": memory_devices}},
        "root_disk": disks[0],
        "boot_interface": "01-" + mac(i, 0).replace(":", "-"),
        "error": None,
    }
    return data, facts
