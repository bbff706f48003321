"""The delivery manifest (manifest.py): the CSV file an operator imports, every error of it
named by row and column at once, a row's driver_info, and its password file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ironsight.common.exceptions import Invalid
from ironsight.discoverd import manifest
from ironsight.discoverd.manifest import (
    ManifestEntry,
    ManifestError,
    check_password_file,
    driver_info,
    parse,
    read_password,
)

GOOD = (
    "serial,name,macs,bmc_address,bmc_port,driver,bmc_username,bmc_password_file,"
    "resource_class,traits\n"
    "SRV-0001,rack1-n1,52:54:00:aa:00:01;52:54:00:aa:00:02,10.0.0.11,,pxe_ipmitool,admin,"
    "/etc/ironsight/bmc1,baremetal-large,CUSTOM_GPU HW_CPU_X86_AVX2\n"
    "SRV-0002,rack1-n2,52:54:00:aa:00:03,bmc2.example.com,8443,redfish,root,"
    "/etc/ironsight/bmc2,,\n"
    "SRV-0003,,,,,,,,,\n")


def entry(**fields: object) -> ManifestEntry:
    values: dict[str, object] = {
        "serial": "S1", "name": None, "macs": (), "bmc_address": None, "bmc_port": None,
        "driver": None, "bmc_username": None, "bmc_password_file": None,
        "resource_class": None, "traits": (), "row": 2}
    values.update(fields)
    return ManifestEntry(**values)  # type: ignore[arg-type]


def errors_of(text: str, **kwargs: object) -> list[str]:
    with pytest.raises(ManifestError) as caught:
        parse(text, **kwargs)  # type: ignore[arg-type]
    return caught.value.errors


# --- a good file ----------------------------------------------------------------------------


def test_a_good_file_gives_one_entry_per_row() -> None:
    entries = parse(GOOD)
    assert entries == [
        ManifestEntry(serial="SRV-0001", name="rack1-n1",
                      macs=("52:54:00:aa:00:01", "52:54:00:aa:00:02"),
                      bmc_address="10.0.0.11", bmc_port=None, driver="pxe_ipmitool",
                      bmc_username="admin", bmc_password_file="/etc/ironsight/bmc1",
                      resource_class="baremetal-large", traits=("CUSTOM_GPU", "HW_CPU_X86_AVX2"),
                      row=2),
        ManifestEntry(serial="SRV-0002", name="rack1-n2", macs=("52:54:00:aa:00:03",),
                      bmc_address="bmc2.example.com", bmc_port=8443, driver="redfish",
                      bmc_username="root", bmc_password_file="/etc/ironsight/bmc2",
                      resource_class=None, traits=(), row=3),
        ManifestEntry(serial="SRV-0003", name=None, macs=(), bmc_address=None, bmc_port=None,
                      driver=None, bmc_username=None, bmc_password_file=None,
                      resource_class=None, traits=(), row=4),
    ]


def test_header_names_are_case_insensitive_stripped_and_in_any_order() -> None:
    [found] = parse(" MACS , Serial,Name\n52:54:00:aa:00:01,S1,n1\n")
    assert (found.serial, found.name, found.macs) == ("S1", "n1", ("52:54:00:aa:00:01",))


def test_cells_are_stripped_and_an_empty_cell_is_a_missing_one() -> None:
    [found] = parse("serial,name,driver\n  S1  ,  ,\n")
    assert (found.serial, found.name, found.driver) == ("S1", None, None)


def test_a_header_alone_is_an_empty_delivery() -> None:
    assert parse("serial,name\n") == []


def test_quoted_cells_may_hold_commas() -> None:
    [found] = parse('serial,traits\n"S,1","CUSTOM_A;CUSTOM_B"\n')
    assert (found.serial, found.traits) == ("S,1", ("CUSTOM_A", "CUSTOM_B"))


def test_crlf_line_ends_are_read() -> None:
    assert [e.serial for e in parse("serial\r\nS1\r\nS2\r\n")] == ["S1", "S2"]


def test_a_utf8_bom_is_accepted() -> None:
    [found] = parse("\ufeffserial,name\nS1,n1\n")
    assert (found.serial, found.name) == ("S1", "n1")


def test_comments_and_blank_lines_are_skipped_and_rows_are_file_lines() -> None:
    text = ("# delivery 2026-12, rack 1\n"
            "serial,name\n"
            "\n"
            "S1,n1\n"
            "# the spare, \"not yet racked\"\n"
            "   \n"
            ",\n"
            "S2,n2\n")
    assert [(e.serial, e.row) for e in parse(text)] == [("S1", 4), ("S2", 8)]


def test_errors_point_at_the_file_line_past_comments() -> None:
    text = "serial,bmc_address,bmc_port\n# a comment\n\nS1,10.0.0.1,0\n"
    assert errors_of(text) == ["row 4, column 'bmc_port': '0' is not a port number "
                               "(1 to 65535)"]


def test_a_quoted_cell_over_two_lines_keeps_the_next_rows_numbers() -> None:
    text = 'serial,name\n"S\n1",n1\nS2,bad name\n'
    assert errors_of(text) == [
        "row 2, column 'serial': 'S\\n1' has control characters",
        "row 4, column 'name': 'bad name' is not a node name: use letters, digits and -._~ "
        "only (at most 255)",
    ]


# --- the header -----------------------------------------------------------------------------


@pytest.mark.parametrize("column", ["password", "bmc_password", "IPMI_Password",
                                    "redfish_password"])
def test_an_inline_password_column_is_refused(column: str) -> None:
    [error] = errors_of(f"serial,{column}\nS1,secret\n")
    assert error.startswith(f"row 1, column '{column.lower()}': passwords are never accepted "
                            "inline")
    assert "bmc_password_file" in error
    assert "secret" not in error


def test_an_unknown_column_is_named() -> None:
    [error] = errors_of("serial,Rack\nS1,r1\n")
    assert error.startswith("row 1, column 'Rack': unknown column")


def test_a_missing_serial_column_is_an_error_once() -> None:
    assert errors_of("name\nn1\nn2\n") == [
        "row 1, column 'serial': the header has no 'serial' column (required: it is the key "
        "of each row)"]


def test_a_column_given_twice_is_refused() -> None:
    assert errors_of("serial,name,Name\nS1,a,b\n") == [
        "row 1, column 'name': the column appears twice"]


def test_an_empty_header_cell_is_named_by_position() -> None:
    assert errors_of("serial,,name\nS1,,n1\n") == ["row 1, column 2: the header cell is empty"]


def test_a_file_without_a_header_is_refused() -> None:
    assert errors_of("# nothing here\n\n") == [
        "row 1: the manifest has no header row (it names the columns, 'serial' among them)"]


def test_a_cell_past_the_header_is_refused() -> None:
    assert parse("serial\nS1,,\n")[0].serial == "S1"  # empty ones are fine (spreadsheets)
    assert errors_of("serial\nS1,x\n") == [
        "row 2, column 2: 'x' is past the header's 1 columns"]


def test_broken_csv_names_its_line() -> None:
    [error] = errors_of('serial,name\nS1,"n1"x\n')
    assert error.startswith("row 2: not valid CSV (")


# --- each column ----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "error"), [
    ("serial,name\n,n1\n",
     "row 2, column 'serial': empty (every row needs the machine's serial)"),
    (f"serial\n{'S' * 256}\n",
     f"row 2, column 'serial': {'S' * 40!r}... (256 characters) is longer than 255 characters"),
    ("serial,name\nS1,n 1\n",
     "row 2, column 'name': 'n 1' is not a node name: use letters, digits and -._~ only "
     "(at most 255)"),
    ("serial,name\nS1,3f2504e0-4f89-11d3-9a0c-0305e82c3301\n",
     "row 2, column 'name': '3f2504e0-4f89-11d3-9a0c-0305e82c3301' is not a node name: a UUID "
     "is not a name"),
    ("serial,macs\nS1,52:54:00:aa:00:01 52:54:00:zz:00:01\n",
     "row 2, column 'macs': '52:54:00:zz:00:01' is not a MAC address"),
    ("serial,bmc_address\nS1,https://10.0.0.1\n",
     "row 2, column 'bmc_address': 'https://10.0.0.1' has a scheme: give the BMC's address "
     "or host name only"),
    ("serial,bmc_address\nS1,10.0.0.1:623\n",
     "row 2, column 'bmc_address': '10.0.0.1:623' has a port: give it in the bmc_port column"),
    ("serial,bmc_address\nS1,[fd00::1]:443\n",
     "row 2, column 'bmc_address': '[fd00::1]:443' has a port: give it in the bmc_port "
     "column"),
    ("serial,bmc_address\nS1,10.0.0.300\n",
     "row 2, column 'bmc_address': '10.0.0.300' is not a valid IPv4 address"),
    ("serial,bmc_address\nS1,bmc_1..example\n",
     "row 2, column 'bmc_address': 'bmc_1..example' is not an IP address or a host name"),
    ("serial,bmc_address,bmc_port\nS1,10.0.0.1,65536\n",
     "row 2, column 'bmc_port': '65536' is not a port number (1 to 65535)"),
    ("serial,bmc_address,bmc_port\nS1,10.0.0.1,http\n",
     "row 2, column 'bmc_port': 'http' is not a port number (1 to 65535)"),
    ("serial,driver\nS1,idrac\n",
     "row 2, column 'driver': 'idrac' is not a known driver (known: fake, fake-hardware, ipmi, "
     "pxe_ipminative, pxe_ipmitool, redfish)"),
    ("serial,bmc_address,bmc_username,bmc_password_file\nS1,10.0.0.1,admin,secrets/bmc1\n",
     "row 2, column 'bmc_password_file': 'secrets/bmc1' is not an absolute path"),
    (f"serial,resource_class\nS1,{'r' * 81}\n",
     f"row 2, column 'resource_class': {'r' * 40!r}... (81 characters) is longer than 80 "
     "characters"),
], ids=["serial-empty", "serial-long", "name", "name-uuid", "mac", "address-scheme",
        "address-port", "address-ipv6-port", "address-ipv4", "address-host", "port-range",
        "port-word", "driver", "password-file-relative", "resource-class-long"])
def test_a_bad_cell_names_its_row_and_column(text: str, error: str) -> None:
    assert errors_of(text) == [error]


def test_drivers_are_those_passed_to_the_parser() -> None:
    assert parse("serial,driver\nS1,pxe_ssh\n", drivers={"pxe_ssh"})[0].driver == "pxe_ssh"
    [error] = errors_of("serial,driver\nS1,redfish\n", drivers={"pxe_ssh"})
    assert error == "row 2, column 'driver': 'redfish' is not a known driver (known: pxe_ssh)"


def test_macs_are_normalised_to_lowercase_colon_form() -> None:
    [found] = parse("serial,macs\nS1,52-54-00-AA-BB-CC ; 52:54:00:AA:BB:CD\n")
    assert found.macs == ("52:54:00:aa:bb:cc", "52:54:00:aa:bb:cd")


def test_a_mac_twice_on_one_row_is_kept_once() -> None:
    [found] = parse("serial,macs\nS1,52:54:00:aa:bb:cc 52-54-00-AA-BB-CC\n")
    assert found.macs == ("52:54:00:aa:bb:cc",)


@pytest.mark.parametrize(("given", "stored"), [
    ("[fd00:1::10]", "fd00:1::10"),
    ("FD00:1:0:0::10", "fd00:1::10"),
    ("10.0.0.1", "10.0.0.1"),
    ("bmc-1.rack.example.com", "bmc-1.rack.example.com"),
])
def test_a_bmc_address_is_stored_bare(given: str, stored: str) -> None:
    [found] = parse(f"serial,bmc_address\nS1,{given}\n")
    assert found.bmc_address == stored


def test_traits_are_split_on_spaces_and_semicolons() -> None:
    [found] = parse("serial,traits\nS1,CUSTOM_RACK_1; HW_CPU_X86_AVX2 CUSTOM_RACK_1\n")
    assert found.traits == ("CUSTOM_RACK_1", "HW_CPU_X86_AVX2")


@pytest.mark.parametrize("trait", ["custom_gpu", "CUSTOM_", "CUSTOM-GPU", "GPU",
                                   f"CUSTOM_{'A' * 249}"])
def test_a_bad_trait_is_refused(trait: str) -> None:
    [error] = errors_of(f"serial,traits\nS1,CUSTOM_OK;{trait}\n")
    assert error.startswith("row 2, column 'traits': ")
    assert "is not a trait: CUSTOM_ followed by upper-case letters" in error


def test_more_traits_than_a_node_may_have_are_refused() -> None:
    traits = " ".join(f"CUSTOM_T{n}" for n in range(51))
    assert errors_of(f"serial,traits\nS1,{traits}\n") == [
        "row 2, column 'traits': 51 traits, more than a node may have (50)"]


# --- between columns ------------------------------------------------------------------------


def test_credentials_need_a_bmc_address() -> None:
    text = ("serial,driver,bmc_username,bmc_password_file,bmc_port\n"
            "S1,redfish,admin,/etc/ironsight/bmc1,443\n")
    assert errors_of(text) == [
        "row 2, column 'bmc_username': needs a bmc_address",
        "row 2, column 'bmc_password_file': needs a bmc_address",
        "row 2, column 'bmc_port': needs a bmc_address",
    ]


def test_a_password_file_needs_a_username() -> None:
    text = "serial,bmc_address,bmc_password_file\nS1,10.0.0.1,/etc/ironsight/bmc1\n"
    assert errors_of(text) == ["row 2, column 'bmc_password_file': needs a bmc_username"]


def test_a_duplicate_serial_names_the_first_row() -> None:
    assert errors_of("serial\nS1\ns1\nS1\n") == [  # case-sensitive: s1 is another machine
        "row 4, column 'serial': 'S1' is already on row 2"]


def test_a_duplicate_name_names_the_first_row() -> None:
    assert errors_of("serial,name\nS1,n1\nS2,n2\nS3,n1\n") == [
        "row 4, column 'name': 'n1' is already on row 2"]


def test_a_mac_on_two_rows_is_refused_in_any_spelling() -> None:
    text = "serial,macs\nS1,52:54:00:aa:bb:cc\nS2,52-54-00-AA-BB-CC\n"
    assert errors_of(text) == ["row 3, column 'macs': '52:54:00:aa:bb:cc' is already on row 2"]


def test_a_duplicate_is_found_on_a_row_with_other_errors() -> None:
    text = ("serial,macs,bmc_address,bmc_port\n"
            "S1,52:54:00:aa:bb:cc,,\n"
            "S1,52:54:00:aa:bb:cc x,10.0.0.1,0\n")
    assert errors_of(text) == [
        "row 3, column 'macs': 'x' is not a MAC address",
        "row 3, column 'bmc_port': '0' is not a port number (1 to 65535)",
        "row 3, column 'serial': 'S1' is already on row 2",
        "row 3, column 'macs': '52:54:00:aa:bb:cc' is already on row 2",
    ]


# --- all errors at once ---------------------------------------------------------------------


def test_all_errors_of_the_file_are_collected() -> None:
    text = ("serial,name,macs,driver,colour\n"
            "S1,n1,52:54:00:aa:00:01,ipmi,red\n"
            "S2,n 2,52:54:00:zz:00:01,ipmi,red\n"
            ",n3,,drac,red\n")
    assert errors_of(text) == [
        "row 1, column 'colour': unknown column (known: serial, name, macs, bmc_address, "
        "bmc_port, driver, bmc_username, bmc_password_file, resource_class, traits)",
        "row 3, column 'name': 'n 2' is not a node name: use letters, digits and -._~ only "
        "(at most 255)",
        "row 3, column 'macs': '52:54:00:zz:00:01' is not a MAC address",
        "row 4, column 'serial': empty (every row needs the machine's serial)",
        "row 4, column 'driver': 'drac' is not a known driver (known: fake, fake-hardware, "
        "ipmi, pxe_ipminative, pxe_ipmitool, redfish)",
    ]


def test_the_error_is_invalid_and_its_message_shows_twenty() -> None:
    text = "serial,bmc_address,bmc_port\n" + "".join(f"S{n},bmc,0\n" for n in range(25))
    with pytest.raises(ManifestError) as caught:
        parse(text)
    assert isinstance(caught.value, Invalid) and caught.value.code == 400
    assert len(caught.value.errors) == 25
    message = str(caught.value)
    assert message.startswith("The manifest has 25 errors: row 2, column 'bmc_port': ")
    assert "row 21, column" in message and "row 22, column" not in message
    assert message.endswith("; and 5 more")


def test_a_file_over_the_row_cap_is_refused() -> None:
    text = "serial\n" + "".join(f"S{n}\n" for n in range(manifest.MAX_ROWS + 1))
    assert errors_of(text) == [
        f"row {manifest.MAX_ROWS + 2}: the manifest has more than 100,000 rows; split it into "
        "several files"]


def test_a_file_at_the_row_cap_is_read() -> None:
    text = "serial\n" + "".join(f"S{n}\n" for n in range(manifest.MAX_ROWS))
    assert len(parse(text)) == manifest.MAX_ROWS


# --- driver_info ----------------------------------------------------------------------------


def test_driver_info_of_an_ipmi_row() -> None:
    [found] = parse("serial,driver,bmc_address,bmc_port,bmc_username,bmc_password_file\n"
                    "S1,ipmi,10.0.0.11,6230,admin,/etc/ironsight/bmc1\n")
    assert driver_info(found, "s3cret") == {
        "ipmi_address": "10.0.0.11", "ipmi_port": 6230, "ipmi_username": "admin",
        "ipmi_password": "s3cret"}


def test_driver_info_of_an_ipmi_row_without_port_or_password() -> None:
    [found] = parse("serial,driver,bmc_address\nS1,pxe_ipmitool,[fd00::11]\n")
    assert driver_info(found, None) == {"ipmi_address": "fd00::11"}


def test_driver_info_of_a_redfish_row_is_an_https_url() -> None:
    [found] = parse("serial,driver,bmc_address,bmc_username,bmc_password_file\n"
                    "S1,redfish,bmc1.example.com,root,/etc/ironsight/bmc1\n")
    assert driver_info(found, "s3cret") == {
        "redfish_address": "https://bmc1.example.com", "redfish_username": "root",
        "redfish_password": "s3cret"}


def test_driver_info_of_a_redfish_row_puts_ipv6_in_brackets_with_the_port() -> None:
    [found] = parse("serial,driver,bmc_address,bmc_port\nS1,redfish,[FD00::11],8443\n")
    assert driver_info(found, None) == {"redfish_address": "https://[fd00::11]:8443"}


@pytest.mark.parametrize("driver", ["fake", "fake-hardware", None])
def test_driver_info_of_a_fake_row_or_none_is_empty(driver: str | None) -> None:
    found = entry(driver=driver, bmc_address="10.0.0.1", bmc_username="admin")
    assert driver_info(found, "s3cret") == {}


# --- password files -------------------------------------------------------------------------


def test_a_row_without_a_password_file_has_none() -> None:
    assert check_password_file(entry()) is None
    assert read_password(entry()) is None


def test_a_missing_password_file_is_named(tmp_path: Path) -> None:
    found = entry(bmc_password_file=str(tmp_path / "missing"), row=7)
    assert check_password_file(found) == (
        f"row 7, column 'bmc_password_file': {str(tmp_path / 'missing')!r} does not exist")


def test_a_relative_password_file_is_refused() -> None:
    assert check_password_file(entry(bmc_password_file="bmc1", row=3)) == (
        "row 3, column 'bmc_password_file': 'bmc1' is not an absolute path")


def test_a_directory_is_not_a_password_file(tmp_path: Path) -> None:
    assert check_password_file(entry(bmc_password_file=str(tmp_path))) == (
        f"row 2, column 'bmc_password_file': {str(tmp_path)!r} is not a regular file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_password_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bmc1"
    path.write_text("s3cret\n")
    path.chmod(0)
    problem = check_password_file(entry(bmc_password_file=str(path)))
    assert problem == (f"row 2, column 'bmc_password_file': {str(path)!r} cannot be read "
                       "(Permission denied)")


def test_the_password_is_the_first_line_without_its_line_break(tmp_path: Path) -> None:
    path = tmp_path / "bmc1"
    path.write_bytes(b" pa ss;word \r\nsecond line\n")
    found = entry(bmc_password_file=str(path))
    assert check_password_file(found) is None
    assert read_password(found) == " pa ss;word "


def test_a_password_file_without_a_line_break_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bmc1"
    path.write_text("s3cret")
    assert read_password(entry(bmc_password_file=str(path))) == "s3cret"


def test_an_empty_password_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bmc1"
    path.write_text("\nnot the first line\n")
    with pytest.raises(ManifestError) as caught:
        read_password(entry(bmc_password_file=str(path), row=5))
    assert caught.value.errors == [
        f"row 5, column 'bmc_password_file': the first line of {str(path)!r} is empty (it "
        "holds the password)"]


def test_reading_a_missing_password_file_raises(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as caught:
        read_password(entry(bmc_password_file=str(tmp_path / "missing")))
    [error] = caught.value.errors
    assert error.startswith("row 2, column 'bmc_password_file': ")
    assert error.endswith("does not exist")


def test_no_password_is_in_the_entry() -> None:
    [found] = parse("serial,bmc_address,bmc_username,bmc_password_file\n"
                    "S1,10.0.0.1,admin,/etc/ironsight/bmc1\n")
    assert "bmc_password_file='/etc/ironsight/bmc1'" in repr(found)
    assert not any("password" in key and key != "bmc_password_file" for key in found.to_dict())


# --- to_dict and from_dict ------------------------------------------------------------------


def test_an_entry_survives_a_json_round_trip() -> None:
    for found in parse(GOOD):
        document = json.loads(json.dumps(found.to_dict()))
        assert ManifestEntry.from_dict(document) == found


def test_to_dict_is_plain_json() -> None:
    [found] = parse("serial,macs,bmc_address,bmc_port\nS1,52:54:00:aa:00:01,[fd00::1],623\n")
    assert found.to_dict() == {
        "serial": "S1", "name": None, "macs": ["52:54:00:aa:00:01"], "bmc_address": "fd00::1",
        "bmc_port": 623, "driver": None, "bmc_username": None, "bmc_password_file": None,
        "resource_class": None, "traits": [], "row": 2}


def test_from_dict_checks_the_fields_again() -> None:
    document = entry(row=9, bmc_address="10.0.0.1").to_dict() | {
        "macs": ["nope"], "bmc_port": "x", "extra": 1}
    with pytest.raises(ManifestError) as caught:
        ManifestEntry.from_dict(document)
    assert caught.value.errors == [
        "row 9, column 'extra': not a manifest column",
        "row 9, column 'macs': 'nope' is not a MAC address",
        "row 9, column 'bmc_port': 'x' is not a port number (1 to 65535)",
    ]


def test_from_dict_needs_a_row_and_a_serial() -> None:
    with pytest.raises(ManifestError, match="field 'row'"):
        ManifestEntry.from_dict({"serial": "S1"})
    with pytest.raises(ManifestError) as caught:
        ManifestEntry.from_dict(entry().to_dict() | {"serial": ""})
    assert caught.value.errors == [
        "row 2, column 'serial': empty (every row needs the machine's serial)"]
