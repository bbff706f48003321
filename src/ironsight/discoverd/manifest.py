"""The delivery manifest: the machines an operator expects, imported as a CSV file
(`ironsight discovery manifest import FILE.csv`). A discovered machine whose system serial (or
one of whose MACs) is on it gets the row's name and driver_info and is approved at once.

This module only parses and validates the file and maps a row to node fields: no database,
no network. Every error of the file is reported at once (an operator fixing a 500-row delivery
should not need 500 attempts), each naming its row and column.

Format
------
- UTF-8 (a leading BOM is accepted), comma-separated, quoting as in RFC 4180.
- A header row is required. Header names are case-insensitive, surrounding spaces are
  stripped, the column order is free; a column may appear only once.
- Blank lines, and lines whose first cell starts with `#`, are skipped (also before the
  header). Row numbers are line numbers of the file: row N is line N, the header is row 1
  when it is the first line.
- Cells are stripped of surrounding spaces; an empty cell is the same as a missing one; no
  cell may hold control characters (line breaks included). Cells past the header's columns
  must be empty.
- At most 100,000 rows (skipped lines not counted).

Columns (only `serial` is required):

================= ===========================================================================
serial            the key: the machine's system serial; non-empty, at most 255 characters,
                  unique in the file, compared case-sensitively
name              the node's name: letters, digits and `-._~`, at most 255, not a UUID,
                  unique in the file
macs              MAC addresses separated by spaces or `;` (`aa:bb:cc:dd:ee:ff` or
                  `AA-BB-CC-DD-EE-FF`, stored lowercase with colons); a MAC may be on one row
                  only
bmc_address       the BMC: an IPv4 or IPv6 address (IPv6 with or without brackets, stored
                  without) or a DNS host name; no scheme, no port
bmc_port          the BMC's port, an integer from 1 to 65535
driver            the hardware type, one of the known drivers (by default `ipmi`,
                  `pxe_ipmitool`, `pxe_ipminative`, `redfish`, `fake`, `fake-hardware`)
bmc_username      the BMC user
bmc_password_file the absolute path of a file whose first line is the BMC password; read
                  when the row is used, not at import
resource_class    at most 80 characters
traits            separated by spaces or `;`, each `CUSTOM_` followed by upper-case letters,
                  digits and `_`, or a standard trait (upper-case words joined by `_`, such
                  as `HW_CPU_X86_AVX2`); at most 255 characters each, 50 per row
================= ===========================================================================

Passwords are never accepted inline: a column `password`, `bmc_password`, `ipmi_password` or
`redfish_password` refuses the file (a CSV file is copied, mailed and left in home
directories; a password file can be kept 0600). Any other unknown column refuses it too.

Rules between columns: `bmc_username`, `bmc_password_file` and `bmc_port` need
`bmc_address`; `bmc_password_file` needs `bmc_username` (a BMC driver given credentials thus
always has an address).

Errors read `row 4, column 'macs': '52:54:00:zz:00:01' is not a MAC address`; `parse` raises
one `ManifestError` (HTTP 400) with all of them in `.errors`.
"""

from __future__ import annotations

import csv
import io
import ipaddress
import os
import re
import stat
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ironsight.common import bmc
from ironsight.common.exceptions import Invalid
from ironsight.common.ids import is_uuid_like

DEFAULT_DRIVERS: frozenset[str] = frozenset(
    {"ipmi", "pxe_ipmitool", "pxe_ipminative", "redfish", "fake", "fake-hardware"})

MAX_ROWS = 100_000
MAX_SHOWN_ERRORS = 20  # in the message; `.errors` has them all
MAX_TRAITS = 50  # per node, as the bare-metal API allows
MAX_PASSWORD_BYTES = 4096

COLUMNS = ("serial", "name", "macs", "bmc_address", "bmc_port", "driver", "bmc_username",
           "bmc_password_file", "resource_class", "traits")
PASSWORD_COLUMNS = frozenset({"password", "bmc_password", "ipmi_password", "redfish_password"})

# The bare-metal API's rules (baremetal/api/schemas.py, node_extras.py; discoverd may not
# import them), so that an approved row is never refused when it is applied.
_NAME_RE = re.compile(r"[A-Za-z0-9\-._~]+")
_MAC_RE = re.compile(r"[0-9a-fA-F]{2}([:-][0-9a-fA-F]{2}){5}")
_CUSTOM_TRAIT_RE = re.compile(r"CUSTOM_[A-Z0-9_]+")
_STANDARD_TRAIT_RE = re.compile(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)+")
_LABEL_RE = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")
_PORT_RE = re.compile(r"[0-9]{1,5}")
_LIST_SEP = re.compile(r"[\s;]+")


class ManifestError(Invalid):
    """A manifest (or one of its password files) that cannot be used: `.errors` lists every
    problem found, each naming its row and column; the message shows the first 20."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        shown = "; ".join(self.errors[:MAX_SHOWN_ERRORS])
        more = len(self.errors) - MAX_SHOWN_ERRORS
        count = f"{len(self.errors)} error{'s' if len(self.errors) != 1 else ''}"
        super().__init__(f"The manifest has {count}: {shown}"
                         + (f"; and {more} more" if more > 0 else ""))


@dataclass(frozen=True)
class ManifestEntry:
    """One expected machine. It holds the path of its password file, never a password, so
    that it may be stored, logged and shown as is."""

    serial: str
    name: str | None
    macs: tuple[str, ...]
    bmc_address: str | None
    bmc_port: int | None
    driver: str | None
    bmc_username: str | None
    bmc_password_file: str | None
    resource_class: str | None
    traits: tuple[str, ...]
    row: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON document of the entry (a database JSON column, the HTTP API)."""
        return {"serial": self.serial, "name": self.name, "macs": list(self.macs),
                "bmc_address": self.bmc_address, "bmc_port": self.bmc_port,
                "driver": self.driver, "bmc_username": self.bmc_username,
                "bmc_password_file": self.bmc_password_file,
                "resource_class": self.resource_class, "traits": list(self.traits),
                "row": self.row}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ManifestEntry:
        """The entry of a `to_dict` document, checked again field by field (it may come from
        an API request): a bad one raises ManifestError naming the field. Whether the driver
        is loaded, and whether serials and MACs are unique, is for the caller to know."""
        row = data.get("row")
        if isinstance(row, bool) or not isinstance(row, int) or row < 1:
            raise ManifestError([f"field 'row': {row!r} is not a row number"])
        errors: list[str] = []
        unknown = sorted(set(data) - {*COLUMNS, "row"})
        errors += [f"row {row}, column {key!r}: not a manifest column" for key in unknown]
        cells: dict[str, str] = {}
        for column in COLUMNS:
            value = data.get(column)
            if value is None:
                continue
            if column in ("macs", "traits"):
                if not isinstance(value, list | tuple) or not all(
                        isinstance(item, str) for item in value):
                    errors.append(f"row {row}, column {column!r}: not a list of strings")
                    continue
                value = " ".join(value)
            elif column == "bmc_port" and isinstance(value, int) and not isinstance(value, bool):
                value = str(value)
            elif not isinstance(value, str):
                errors.append(f"row {row}, column {column!r}: {value!r} is not a string")
                continue
            if value.strip():  # as in the file: an empty cell is a missing one
                cells[column] = value.strip()
        entry = _entry(cells, row, None, errors)
        if errors or entry is None:
            raise ManifestError(errors)
        return entry


# --- parsing --------------------------------------------------------------------------------


def parse(text: str, drivers: Collection[str] = DEFAULT_DRIVERS) -> list[ManifestEntry]:
    """The entries of a manifest file's text, in file order; ManifestError with every error
    of the file otherwise. `drivers` are the hardware types a row may name."""
    errors: list[str] = []
    entries: list[ManifestEntry] = []
    header: list[str | None] | None = None
    known = frozenset(drivers)
    seen: dict[str, dict[str, int]] = {"serial": {}, "name": {}, "macs": {}}
    count = 0
    try:
        for row, cells in _records(text.removeprefix("\ufeff")):
            if header is None:
                header = _header(cells, row, errors)
                continue
            count += 1
            if count > MAX_ROWS:
                errors.append(f"row {row}: the manifest has more than {MAX_ROWS:,} rows; "
                              "split it into several files")
                break
            values = _cells(header, cells, row, errors)
            entry = _entry(values, row, known, errors, need_serial="serial" in header)
            for column, value in _keys(values):  # of a row with errors too: all at once
                first = seen[column].setdefault(value, row)
                if first != row:
                    errors.append(f"row {row}, column {column!r}: {_shown(value)} is already "
                                  f"on row {first}")
            if entry is not None:
                entries.append(entry)
    except _BadCsv as exc:
        errors.append(f"row {exc.row}: not valid CSV ({exc.reason})")
    if header is None and not errors:
        errors.append("row 1: the manifest has no header row (it names the columns, "
                      "'serial' among them)")
    if errors:
        raise ManifestError(errors)
    return entries


def _keys(values: Mapping[str, str]) -> list[tuple[str, str]]:
    """The values of a row that must be unique in the file, by column."""
    keys = [(column, values[column]) for column in ("serial", "name") if column in values]
    macs = _LIST_SEP.split(values.get("macs", "").strip())
    keys += [("macs", mac) for mac in dict.fromkeys(
        item.lower().replace("-", ":") for item in macs if _MAC_RE.fullmatch(item))]
    return keys


class _BadCsv(Exception):
    def __init__(self, row: int, reason: str) -> None:
        super().__init__(reason)
        self.row = row
        self.reason = reason


class _Lines:
    """The file's lines for the CSV reader, without the blank and comment lines met where a
    record starts (the parser sets `at_start`), counting them all: `record_start` is the
    line number of the record read last."""

    def __init__(self, text: str) -> None:
        self._lines = io.StringIO(text, newline="")
        self.number = 0
        self.record_start = 0
        self.at_start = True

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        while True:
            line = next(self._lines)
            self.number += 1
            if not self.at_start:
                return line
            if line.strip() and not line.lstrip().startswith("#"):
                self.at_start = False
                self.record_start = self.number
                return line


def _records(text: str) -> Iterator[tuple[int, list[str]]]:
    """The file's records that are neither blank nor comments, each with the line it starts
    on (a quoted cell may span lines); _BadCsv at the line where the CSV breaks."""
    lines = _Lines(text)
    reader = csv.reader(lines, strict=True)
    while True:
        lines.at_start = True
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise _BadCsv(lines.number, str(exc)) from None
        if not any(cell.strip() for cell in cells) or cells[0].lstrip().startswith("#"):
            continue
        yield lines.record_start, cells


def _header(cells: list[str], row: int, errors: list[str]) -> list[str | None]:
    """The header's column names, None for a column that cannot be read (its error noted)."""
    columns: list[str | None] = []
    seen: set[str] = set()
    for position, cell in enumerate(cells, start=1):
        column = cell.strip().lower()
        if not column:
            errors.append(f"row {row}, column {position}: the header cell is empty")
            column_ok = None
        elif column in PASSWORD_COLUMNS:
            errors.append(f"row {row}, column {column!r}: passwords are never accepted inline; "
                          "put the password in a file and name it in a 'bmc_password_file' "
                          "column (a file reference)")
            column_ok = None
        elif column not in COLUMNS:
            errors.append(f"row {row}, column {cell.strip()!r}: unknown column (known: "
                          f"{', '.join(COLUMNS)})")
            column_ok = None
        elif column in seen:
            errors.append(f"row {row}, column {column!r}: the column appears twice")
            column_ok = None
        else:
            column_ok = column
            seen.add(column)
        columns.append(column_ok)
    if "serial" not in seen:
        errors.append(f"row {row}, column 'serial': the header has no 'serial' column "
                      "(required: it is the key of each row)")
    return columns


def _cells(header: list[str | None], cells: list[str], row: int,
           errors: list[str]) -> dict[str, str]:
    """A record's non-empty cells by column name; cells past the header must be empty."""
    values: dict[str, str] = {}
    for position, cell in enumerate(cells):
        value = cell.strip()
        if position >= len(header):
            if value:
                errors.append(f"row {row}, column {position + 1}: {_shown(value)} is past "
                              f"the header's {len(header)} columns")
            continue
        column = header[position]
        if column is not None and value:
            values[column] = value
    return values


# --- one row --------------------------------------------------------------------------------


def _entry(values: Mapping[str, str], row: int, drivers: frozenset[str] | None,
           errors: list[str], *, need_serial: bool = True) -> ManifestEntry | None:
    """A row's entry from its stripped non-empty cells (None when it has errors, noted).
    Without a serial column (`need_serial` false, an error of the header) a row's missing
    serial is not noted again, row after row."""
    before = len(errors)

    def field(column: str, check: Callable[[str], Any]) -> Any:
        raw = values.get(column)
        if raw is None:
            return None
        try:
            return check(raw)
        except ValueError as exc:
            errors.append(f"row {row}, column {column!r}: {exc}")
            return None

    serial = field("serial", _serial)
    if "serial" not in values and need_serial:
        errors.append(f"row {row}, column 'serial': empty (every row needs the machine's "
                      "serial)")
    name = field("name", _name)
    macs = field("macs", _macs) or ()
    address = field("bmc_address", _host)
    port = field("bmc_port", _port)
    driver = field("driver", lambda raw: _driver(raw, drivers))
    username = field("bmc_username", lambda raw: _text(raw, 255))
    password_file = field("bmc_password_file", _password_path)
    resource_class = field("resource_class", lambda raw: _text(raw, 80))
    traits = field("traits", _traits) or ()

    for column in ("bmc_username", "bmc_password_file", "bmc_port"):
        if column in values and "bmc_address" not in values:
            errors.append(f"row {row}, column {column!r}: needs a bmc_address")
    if "bmc_password_file" in values and "bmc_username" not in values:
        errors.append(f"row {row}, column 'bmc_password_file': needs a bmc_username")
    if len(errors) > before or serial is None:
        return None
    return ManifestEntry(serial=serial, name=name, macs=macs, bmc_address=address,
                         bmc_port=port, driver=driver, bmc_username=username,
                         bmc_password_file=password_file, resource_class=resource_class,
                         traits=traits, row=row)


def _shown(value: str) -> str:
    return repr(value) if len(value) <= 60 else f"{value[:40]!r}... ({len(value)} characters)"


def _text(raw: str, limit: int) -> str:
    value = raw.strip()
    if len(value) > limit:
        raise ValueError(f"{_shown(value)} is longer than {limit} characters")
    if not value.isprintable():
        raise ValueError(f"{_shown(value)} has control characters")
    return value


def _serial(raw: str) -> str:
    return _text(raw, 255)


def _name(raw: str) -> str:
    value = raw.strip()
    if len(value) > 255 or not _NAME_RE.fullmatch(value):
        raise ValueError(f"{_shown(value)} is not a node name: use letters, digits and -._~ "
                         "only (at most 255)")
    if is_uuid_like(value):
        raise ValueError(f"{_shown(value)} is not a node name: a UUID is not a name")
    return value


def _macs(raw: str) -> tuple[str, ...]:
    found: list[str] = []
    for item in _LIST_SEP.split(raw.strip()):
        if not _MAC_RE.fullmatch(item):
            raise ValueError(f"{_shown(item)} is not a MAC address")
        mac = item.lower().replace("-", ":")
        if mac not in found:
            found.append(mac)
    return tuple(found)


def _host(raw: str) -> str:
    """An IP address (canonical, IPv6 without brackets) or a DNS host name."""
    value = raw.strip()
    if "://" in value:
        raise ValueError(f"{_shown(value)} has a scheme: give the BMC's address or host name "
                         "only")
    bare = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        pass
    else:
        if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
            raise ValueError(f"{_shown(value)} has a zone index (%...), which a BMC address "
                             "may not have")
        return str(address)
    if bare == value and value.count(":") == 1:
        raise ValueError(f"{_shown(value)} has a port: give it in the bmc_port column")
    if value.startswith("[") and "]:" in value:
        raise ValueError(f"{_shown(value)} has a port: give it in the bmc_port column")
    labels = value.rstrip(".").split(".")
    if (bare != value or len(value) > 253
            or not all(_LABEL_RE.fullmatch(label) for label in labels)):
        raise ValueError(f"{_shown(value)} is not an IP address or a host name")
    if all(label.isdigit() for label in labels):
        raise ValueError(f"{_shown(value)} is not a valid IPv4 address")
    return value


def _port(raw: str) -> int:
    value = raw.strip()
    if not _PORT_RE.fullmatch(value) or not 0 < int(value) < 65536:
        raise ValueError(f"{_shown(value)} is not a port number (1 to 65535)")
    return int(value)


def _driver(raw: str, drivers: frozenset[str] | None) -> str:
    value = raw.strip()
    if drivers is not None and value not in drivers:
        raise ValueError(f"{_shown(value)} is not a known driver (known: "
                         f"{', '.join(sorted(drivers))})")
    return _text(value, 255)


def _password_path(raw: str) -> str:
    value = _text(raw, 4096)
    if not os.path.isabs(value):
        raise ValueError(f"{_shown(value)} is not an absolute path")
    return value


def _traits(raw: str) -> tuple[str, ...]:
    found: list[str] = []
    for trait in _LIST_SEP.split(raw.strip()):
        if len(trait) > 255 or not (_CUSTOM_TRAIT_RE.fullmatch(trait)
                                    or _STANDARD_TRAIT_RE.fullmatch(trait)):
            raise ValueError(f"{_shown(trait)} is not a trait: CUSTOM_ followed by upper-case "
                             "letters, digits and _, or a standard trait such as "
                             "HW_CPU_X86_AVX2 (at most 255 characters)")
        if trait not in found:
            found.append(trait)
    if len(found) > MAX_TRAITS:
        raise ValueError(f"{len(found)} traits, more than a node may have ({MAX_TRAITS})")
    return tuple(found)


# --- password files -------------------------------------------------------------------------


def check_password_file(entry: ManifestEntry) -> str | None:
    """Why the entry's password file cannot be read (an error naming its row and column), or
    None when it can or there is none: checked at import, so that a bad path is found while
    the operator is there, not when the machine boots weeks later."""
    path = entry.bmc_password_file
    if path is None:
        return None
    where = f"row {entry.row}, column 'bmc_password_file'"
    if not os.path.isabs(path):
        return f"{where}: {path!r} is not an absolute path"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return f"{where}: {path!r} does not exist"
    except OSError as exc:
        return f"{where}: {path!r} cannot be read ({exc.strerror})"
    if not stat.S_ISREG(mode):
        return f"{where}: {path!r} is not a regular file"
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        return f"{where}: {path!r} cannot be read ({exc.strerror})"
    return None


def read_password(entry: ManifestEntry) -> str | None:
    """The BMC password of the entry: the first line of its password file without the line
    break (None without a file). ManifestError naming the row and column if the file cannot
    be read or the password is empty; the message never shows the file's content."""
    problem = check_password_file(entry)
    if problem is not None:
        raise ManifestError([problem])
    path = entry.bmc_password_file
    if path is None:
        return None
    where = f"row {entry.row}, column 'bmc_password_file'"
    try:
        with open(path, "rb") as file:
            line = file.readline(MAX_PASSWORD_BYTES + 1)
    except OSError as exc:
        raise ManifestError([f"{where}: {path!r} cannot be read ({exc.strerror})"]) \
            from None
    password_bytes = line.removesuffix(b"\n").removesuffix(b"\r")
    if len(password_bytes) > MAX_PASSWORD_BYTES:
        raise ManifestError([f"{where}: the first line of {path!r} is longer than "
                             f"{MAX_PASSWORD_BYTES} bytes"])
    try:
        password = password_bytes.decode("utf-8")
    except UnicodeDecodeError:
        raise ManifestError([f"{where}: the first line of {path!r} is not UTF-8"]) \
            from None
    if not password:
        raise ManifestError([f"{where}: the first line of {path!r} is empty (it holds "
                             "the password)"])
    return password


# --- node fields ----------------------------------------------------------------------------


def driver_info(entry: ManifestEntry, password: str | None) -> dict[str, Any]:
    """The node's driver_info for the entry's driver, in the fields its hardware type reads
    (ipmi_* for the IPMI types, redfish_* for redfish); `{}` for fake and other drivers, and
    for no driver. The password goes only into this dict, which the caller sends and drops."""
    field = bmc.driver_field(entry.driver)
    if field is None:
        return {}
    prefix = field.removesuffix("_address")
    info: dict[str, Any] = {}
    if entry.bmc_address is not None:
        info[field] = bmc.field_value(field, entry.bmc_address, entry.bmc_port)
    if entry.bmc_port is not None and prefix == "ipmi":
        info["ipmi_port"] = entry.bmc_port
    if entry.bmc_username is not None:
        info[f"{prefix}_username"] = entry.bmc_username
    if password is not None:
        info[f"{prefix}_password"] = password
    return info
