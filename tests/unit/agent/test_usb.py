"""USB devices from /sys/bus/usb/devices, in IPA's `usb_devices` shape plus ids."""

from __future__ import annotations

from ironsight.agent import usb

KEYBOARD = {"idVendor": "046d", "idProduct": "c31c", "bDeviceClass": "00",
            "manufacturer": "Logitech", "product": "USB Keyboard", "busnum": "1",
            "devnum": "3"}


def test_a_device_has_its_strings_and_lshw_handle(tree):
    tree.usb_device("1-2", KEYBOARD)
    assert usb.collect(str(tree)) == [{"product": "USB Keyboard", "vendor": "Logitech",
                                       "handle": "USB:1:3", "vendor_id": "046d",
                                       "product_id": "c31c"}]


def test_a_device_without_strings_is_named_by_its_ids(tree):
    tree.usb_device("1-3", {"idVendor": "0781", "idProduct": "5581", "busnum": "1",
                            "devnum": "4"})
    (device,) = usb.collect(str(tree))
    assert (device["vendor"], device["product"]) == ("0781", "5581")


def test_hubs_and_interfaces_are_left_out(tree):
    tree.usb_device("usb1", {**KEYBOARD, "bDeviceClass": "09", "product": "root hub"})
    tree.usb_device("1-2:1.0", {"bInterfaceClass": "03"})
    tree.usb_device("1-2", KEYBOARD)
    assert [d["product"] for d in usb.collect(str(tree))] == ["USB Keyboard"]


def test_no_usb_bus_gives_no_devices(tree):
    assert usb.collect(str(tree)) == []
