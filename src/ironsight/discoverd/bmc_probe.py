"""The BMC check of auto-discovery: does the BMC a new machine reports answer, what does it
speak, and is it this machine's own?

An unknown machine's ramdisk reports the BMC address it sees (`inventory.bmc_address`,
`bmc_v6address`). Before discoverd writes that address into the new node's driver_info it
probes it, because a wrong address gives the node power over somebody else's machine:

- IPMI: the session-less "Get Channel Authentication Capabilities" request, which every IPMI
  BMC answers before any login (UDP, on the event loop: no thread, no credentials);
- Redfish: the service root `/redfish/v1/`, which the standard serves without authentication;
- with the delivery manifest's credentials: the system serial and UUID the BMC reports
  (Redfish `Systems`, or an IPMI session: Get System GUID and FRU 0), compared with the ones
  the ramdisk reported. A BMC that answers for another machine is a conflict, which the caller
  handles: this module only reports what it found.

`probe` never raises for anything a BMC or the network does, and never puts a password into
its result or the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import random
import ssl
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import httpx
from pyghmi.exceptions import IpmiException
from pyghmi.ipmi import command as ipmi_command
from pyghmi.ipmi import fru as ipmi_fru
from pyghmi.ipmi.private import session as ipmi_session

from ironsight.common.pyghmi_calls import bmc_lock, in_daemon_thread

LOG = logging.getLogger(__name__)
T = TypeVar("T")

IPMI = "ipmi"
REDFISH = "redfish"

# --- RMCP / IPMI v1.5 session-less messages (IPMI 2.0 section 13; the command: 22.13) ---------
RMCP_HEADER = bytes([0x06, 0x00, 0xFF, 0x07])  # version 1.0, reserved, no ACK, class IPMI
AUTH_NONE = 0x00
BMC_ADDRESS = 0x20  # the responder: the BMC
SOFTWARE_ID = 0x81  # the requester: remote console software
NETFN_APP = 0x06
CMD_GET_SYSTEM_GUID = 0x37
CMD_GET_CHANNEL_AUTH_CAPABILITIES = 0x38
CHANNEL_THIS = 0x0E  # "the channel this request arrives on"
CHANNEL_IPMI_V2_DATA = 0x80  # bit 7 of the channel byte: also give IPMI 2.0 data
PRIVILEGE_ADMINISTRATOR = 0x04

# Values that stand for "not set" on the ramdisk's side or the BMC's: never a match, never a
# mismatch. 03000200-... is the placeholder UUID of many AMI firmwares.
PLACEHOLDER_SERIALS = frozenset({
    "", "0", "00000000", "0123456789", "123456789", "none", "n/a", "na", "unknown",
    "not specified", "not applicable", "not available", "default string",
    "to be filled by o.e.m.", "system serial number", "chassis serial number",
})
PLACEHOLDER_UUIDS = frozenset({
    "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "03000200-0400-0500-0006-000700080009",
})

MAX_REDFISH_SYSTEMS = 16  # members of /Systems read with credentials (one per node of a chassis)
_GREGORIAN_TO_UNIX = 12219292800  # seconds from 1582-10-15 (UUID time) to 1970-01-01


@dataclass(frozen=True)
class ProbeResult:
    """What a BMC address answered: the facts the caller decides on (a conflict, the driver)."""

    address: str
    reachable: bool
    protocol: str | None  # "ipmi", "redfish" or None
    serial_match: bool | None  # None: not checked (no credentials, or the BMC would not say)
    bmc_serial: str | None  # what the BMC reported (system serial), if any
    bmc_system_uuid: str | None  # system GUID/UUID the BMC reported, lowercase canonical form
    detail: str  # one human sentence: what was tried and found; never a password

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for the node's discovery record and the conflict inbox."""
        return asdict(self)


# --- IPMI without credentials ------------------------------------------------------------------


def _checksum(data: bytes) -> int:
    """The IPMI two's-complement checksum: data plus checksum sum to 0 (mod 256)."""
    return -sum(data) & 0xFF


def channel_auth_capabilities_request(seq: int, *, v2: bool = True) -> bytes:
    """An RMCP packet of an IPMI v1.5 session-less Get Channel Authentication Capabilities
    request (netfn App, cmd 0x38) for channel 0x0E at administrator privilege.

    `v2` sets bit 7 of the channel byte ("IPMI 2.0 data too"): ipmitool and pyghmi ask so, and
    pyghmi's BMC ignores a request without it; a BMC of IPMI 1.5 only may refuse it, hence the
    second try without.
    """
    header = bytes([BMC_ADDRESS, NETFN_APP << 2])
    body = bytes([SOFTWARE_ID, (seq & 0x3F) << 2, CMD_GET_CHANNEL_AUTH_CAPABILITIES,
                  CHANNEL_THIS | (CHANNEL_IPMI_V2_DATA if v2 else 0),
                  PRIVILEGE_ADMINISTRATOR])
    message = header + bytes([_checksum(header)]) + body + bytes([_checksum(body)])
    session = bytes([AUTH_NONE]) + bytes(4) + bytes(4) + bytes([len(message)])  # seq, id: 0
    return RMCP_HEADER + session + message


@dataclass(frozen=True)
class AuthCapabilities:
    """A BMC's answer to Get Channel Authentication Capabilities."""

    seq: int
    completion_code: int
    data: bytes

    @property
    def ipmi_version(self) -> str:
        """"2.0" when the BMC says it takes IPMI 2.0 (RMCP+) sessions, else "1.5"."""
        d = self.data
        return "2.0" if len(d) >= 4 and d[1] & 0x80 and d[3] & 0x02 else "1.5"


def parse_channel_auth_capabilities(packet: bytes) -> AuthCapabilities | None:
    """The answer in `packet`, or None when it is not one: not RMCP class IPMI, a bad
    checksum, another command."""
    if len(packet) < 14 or packet[0] != 0x06 or packet[2:4] != b"\xff\x07":
        return None
    auth_type = packet[4]
    if auth_type == AUTH_NONE:
        at = 13  # auth type, session sequence (4), session id (4): the length byte
    elif auth_type in (1, 2, 4, 5):  # an IPMI 1.5 auth type: a 16-byte auth code follows
        at = 29
    else:  # 6 is an RMCP+ (IPMI 2.0) session packet, not a session-less answer
        return None
    if len(packet) <= at:
        return None
    message = packet[at + 1:at + 1 + packet[at]]
    if len(message) != packet[at] or len(message) < 8:
        return None
    # rqAddr, netFn/rqLUN, checksum | rsAddr, rqSeq/rsLUN, cmd, completion code, data, checksum
    if sum(message[:3]) & 0xFF or sum(message[3:]) & 0xFF:
        return None
    if message[1] >> 2 != NETFN_APP | 1 or message[5] != CMD_GET_CHANNEL_AUTH_CAPABILITIES:
        return None
    return AuthCapabilities(seq=message[4] >> 2, completion_code=message[6],
                            data=bytes(message[7:-1]))


class _Datagrams(asyncio.DatagramProtocol):
    """Everything the connected UDP socket receives, and its ICMP errors (port closed)."""

    def __init__(self) -> None:
        self.received: asyncio.Queue[bytes | OSError] = asyncio.Queue()

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.received.put_nowait(data)

    def error_received(self, exc: Exception) -> None:
        if isinstance(exc, OSError):
            self.received.put_nowait(exc)


@dataclass(frozen=True)
class _Seen:
    """What one protocol's check found: `text` is a clause of the detail."""

    answered: bool  # something answered at the address
    speaks: bool  # ... and it speaks this protocol
    text: str
    systems_path: str | None = None  # Redfish: the service root's Systems collection


def _os_error(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    return str(exc) or type(exc).__name__


async def _ipmi_ping(host: str, port: int, timeout: float) -> _Seen:
    """Ask twice (with the IPMI 2.0 bit, then without), half the timeout each."""
    where = f"UDP port {port}"
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await asyncio.wait_for(
            loop.create_datagram_endpoint(_Datagrams, remote_addr=(host, port)), timeout)
    except (OSError, TimeoutError) as exc:
        return _Seen(False, False, f"IPMI could not be asked on {where} "
                                   f"({_os_error(exc)})")
    sent: set[int] = set()
    codes: list[int] = []
    try:
        seq = random.randrange(64)
        for v2 in (True, False):
            seq = (seq + 1) % 64
            sent.add(seq)
            transport.sendto(channel_auth_capabilities_request(seq, v2=v2))
            deadline = loop.time() + timeout / 2
            while (remaining := deadline - loop.time()) > 0:
                try:
                    item = await asyncio.wait_for(protocol.received.get(), remaining)
                except TimeoutError:
                    break
                if isinstance(item, OSError):  # ICMP: nothing listens there
                    return _Seen(False, False, f"nothing answers IPMI on {where} "
                                               f"({_os_error(item)})")
                answer = parse_channel_auth_capabilities(item)
                if answer is None or answer.seq not in sent:
                    continue  # not an answer to us
                if answer.completion_code == 0:
                    return _Seen(True, True, f"IPMI {answer.ipmi_version} answers on {where}")
                codes.append(answer.completion_code)
                break
    finally:
        transport.close()
    if codes:
        listed = ", ".join(f"0x{code:02X}" for code in codes)
        return _Seen(True, False, f"{where} answers Get Channel Authentication Capabilities "
                                  f"with completion code {listed}, not 0")
    return _Seen(False, False,
                 f"nothing answers IPMI on {where} within {timeout:g} s (asked twice)")


# --- the system GUID of IPMI ---------------------------------------------------------------


def _guid_readings(raw: bytes) -> Iterator[tuple[str, uuid.UUID]]:
    """The 16 bytes of Get System GUID read the three ways BMCs write them, in ipmitool's
    order of precedence (lowest first): RFC 4122 (big-endian), IPMI (the specification's:
    every byte reversed, least significant first) and SMBIOS (the first three fields
    little-endian, the rest as is; what most BMCs send, and pyghmi's BMC)."""
    yield "RFC 4122", uuid.UUID(bytes=raw)
    yield "IPMI", uuid.UUID(bytes=raw[::-1])
    yield "SMBIOS", uuid.UUID(bytes_le=raw)


def _time_valid(value: uuid.UUID) -> bool:
    """A time-based UUID's timestamp lies between 1970 and this year (ipmitool's test)."""
    seconds = value.time // 10_000_000 - _GREGORIAN_TO_UNIX
    if seconds < 0:
        return False
    try:
        year = (dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=seconds)).year
    except OverflowError:
        return False
    return year <= dt.datetime.now(dt.UTC).year


def detect_system_guid(raw: bytes) -> tuple[str, str] | None:
    """(the UUID, the byte order it was read in) as `ipmitool mc guid` prints it (its
    default, `auto`): the last reading whose version nibble is valid (1 to 5) wins, but a
    time-based one with a plausible timestamp wins at once. None when no reading has a valid
    version: ipmitool then only dumps the bytes."""
    if len(raw) != 16:
        return None
    chosen: tuple[str, str] | None = None
    for encoding, value in _guid_readings(raw):
        version = value.time_hi_version >> 12
        if 1 <= version <= 5:
            chosen = (str(value), encoding)
            if version == 1 and _time_valid(value):
                break
    return chosen


def decode_system_guid(raw: bytes) -> str | None:
    """The system UUID in the 16 bytes of Get System GUID, lowercase canonical form, read as
    `ipmitool mc guid` reads them (see `detect_system_guid`)."""
    found = detect_system_guid(raw)
    return found[0] if found else None


def _guid_candidates(raw: bytes) -> frozenset[str]:
    """Every reading of the GUID, for the comparison: BMCs disagree on the byte order, and
    the same 16 bytes read two ways are never two real machines' UUIDs."""
    return frozenset(str(value) for _, value in _guid_readings(raw)) - PLACEHOLDER_UUIDS


# --- identity: what the BMC says its system is -------------------------------------------------


@dataclass(frozen=True)
class _System:
    serial: str | None
    uuid: str | None  # the one reading reported
    uuids: frozenset[str] = frozenset()  # every reading that counts as a match


@dataclass(frozen=True)
class _Identity:
    via: str
    systems: tuple[_System, ...]
    error: str | None = None


class _ProbeError(Exception):
    """A failure to describe in the detail (its text holds no secret)."""


def _canonical_uuid(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().lower()
    with contextlib.suppress(ValueError):
        text = str(uuid.UUID(text))
    return None if text in PLACEHOLDER_UUIDS else text


def _serial_key(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    key = value.strip().casefold()
    return None if key in PLACEHOLDER_SERIALS else key


def _text(value: Any) -> str | None:
    return (value.strip() or None) if isinstance(value, str) else None


def _scrub(text: str, password: str | None) -> str:
    return text.replace(password, "***") if password else text


def _match(systems: tuple[_System, ...], expected_serial: str | None,
           expected_uuid: str | None) -> tuple[bool | None, _System | None]:
    """True when a system's serial or UUID is the machine's; False when one could be compared
    and none matched; None when nothing could be compared. With the system to report."""
    serial, system_uuid = _serial_key(expected_serial), _canonical_uuid(expected_uuid)
    compared = False
    for system in systems:
        found_serial = _serial_key(system.serial)
        if serial and found_serial:
            compared = True
            if serial == found_serial:
                return True, system
        if system_uuid and system.uuids:
            if system_uuid in system.uuids:
                return True, system
            # an IPMI GUID of no known byte order may match, but is no evidence against
            compared = compared or system.uuid is not None
    return (False if compared else None), (systems[0] if systems else None)


def _ipmi_identity(host: str, port: int, username: str, password: str,
                   timeout: float) -> _Identity:
    """Log in with pyghmi, read Get System GUID and FRU 0, log out. Blocking.

    One session at a time per BMC, and pyghmi's record of the login removed before and after
    (as the pxe_ipminative driver does): pyghmi shares sessions process-wide by (BMC, user,
    password, port) and never forgets a login attempt.
    """
    lock = bmc_lock(host, port)
    if not lock.acquire(timeout=timeout):
        return _Identity(IPMI, (), "an earlier IPMI session to this BMC has not ended")
    login = (host, username, password, port, None)
    try:
        ipmi_session.Session.initting_sessions.pop(login, None)
        try:
            cmd = ipmi_command.Command(bmc=host, userid=username, password=password, port=port)
        except Exception as exc:
            return _Identity(IPMI, (), f"the IPMI login failed ({_describe(exc, password)})")
        try:
            notes: list[str] = []
            raw = b""
            try:
                guid = cmd.raw_command(netfn=NETFN_APP, command=CMD_GET_SYSTEM_GUID)
            except Exception as exc:
                notes.append(f"Get System GUID failed: {_describe(exc, password)}")
            else:
                if "error" in guid:
                    notes.append(f"Get System GUID failed: {guid['error']}")
                elif len(guid.get("data") or b"") != 16:
                    notes.append(f"Get System GUID answered {len(guid.get('data') or b'')} "
                                 "bytes, not 16")
                else:
                    raw = bytes(guid["data"])
            serial = None
            try:
                info = ipmi_fru.FRU(ipmicmd=cmd, fruid=0).info or {}
                serial = _text(info.get("Serial Number")) or _text(
                    info.get("Chassis serial number"))
            except Exception as exc:  # many BMCs have no FRU 0 or refuse to read it
                notes.append(f"FRU 0 unreadable: {_describe(exc, password)}")
            system = _System(serial=serial, uuid=decode_system_guid(raw) if raw else None,
                             uuids=_guid_candidates(raw) if raw else frozenset())
            if system.serial is None and not system.uuids:
                return _Identity(IPMI, (), _scrub("; ".join(notes), password)
                                 or "the BMC reports nothing")
            return _Identity(IPMI, (system,))
        finally:
            with contextlib.suppress(Exception):
                cmd.ipmi_session.logout()
    finally:
        ipmi_session.Session.initting_sessions.pop(login, None)
        lock.release()


def _describe(exc: BaseException, password: str | None) -> str:
    """pyghmi raises IpmiException(None) when a BMC does not answer."""
    text = str(exc)
    if text in ("", "None"):
        text = "no answer" if isinstance(exc, IpmiException) else type(exc).__name__
    return _scrub(text, password)


# --- Redfish -----------------------------------------------------------------------------------


def _base_url(host: str, port: int | None, scheme: str) -> str:
    if ":" in host:  # IPv6, with its zone (fe80::1%eth0) escaped
        host = "[" + host.replace("%", "%25") + "]"
    return f"{scheme}://{host}" + (f":{port}" if port else "")


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: BaseException | None = exc
    for _ in range(16):  # a chain can loop
        if seen is None:
            return
        yield seen
        seen = seen.__cause__ or seen.__context__


def _http_error(exc: httpx.HTTPError, timeout: float) -> tuple[bool, str]:
    """(whether something answered, what went wrong)."""
    if isinstance(exc, httpx.TimeoutException):
        return False, f"no answer within {timeout:g} s"
    for cause in _causes(exc):
        if isinstance(cause, ssl.SSLCertVerificationError):
            return True, f"its TLS certificate is not trusted ({cause.verify_message})"
        if isinstance(cause, ssl.SSLError):
            return True, f"TLS failed ({cause.reason or cause})"
        if isinstance(cause, ConnectionRefusedError):
            return False, "connection refused"
    return False, str(exc) or type(exc).__name__


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _is_service_root(body: Any) -> bool:
    if not isinstance(body, dict):
        return False
    odata_id = body.get("@odata.id")
    return "RedfishVersion" in body or (
        isinstance(odata_id, str) and odata_id.rstrip("/") == "/redfish/v1")


async def _redfish_root(client: httpx.AsyncClient, base: str, timeout: float) -> _Seen:
    url = f"{base}/redfish/v1/"
    try:  # httpx's timeout is per phase (connect, read...): bound the whole request
        response = await asyncio.wait_for(client.get(url), timeout)
    except TimeoutError:
        return _Seen(False, False, f"no Redfish at {url} (no answer within {timeout:g} s)")
    except httpx.HTTPError as exc:
        answered, why = _http_error(exc, timeout)
        return _Seen(answered, False, f"no Redfish at {url} ({why})")
    body = _json(response)
    if not _is_service_root(body):
        return _Seen(True, False,
                     f"{url} answers HTTP {response.status_code}, not a Redfish service root")
    version = body.get("RedfishVersion")
    systems = body.get("Systems")
    path = systems.get("@odata.id") if isinstance(systems, dict) else None
    return _Seen(True, True, f"Redfish{f' {version}' if isinstance(version, str) else ''} "
                             f"answers at {url}",
                 systems_path=path if isinstance(path, str) else None)


async def _get_json(client: httpx.AsyncClient, url: str, auth: httpx.BasicAuth,
                    timeout: float) -> dict[str, Any]:
    try:
        response = await client.get(url, auth=auth)
    except httpx.HTTPError as exc:
        raise _ProbeError(f"GET {url}: {_http_error(exc, timeout)[1]}") from None
    if response.status_code in (401, 403):
        raise _ProbeError(f"Redfish refused the credentials (HTTP {response.status_code})")
    if response.status_code != 200:
        raise _ProbeError(f"GET {url}: HTTP {response.status_code}")
    body = _json(response)
    if not isinstance(body, dict):
        raise _ProbeError(f"GET {url}: not a JSON object")
    return body


async def _redfish_identity(client: httpx.AsyncClient, base: str, systems_path: str | None,
                            username: str, password: str, timeout: float) -> _Identity:
    """SerialNumber and UUID of each system (up to MAX_REDFISH_SYSTEMS) of the collection."""
    auth = httpx.BasicAuth(username, password)
    collection_url = urllib.parse.urljoin(base + "/", systems_path or "/redfish/v1/Systems")
    try:
        collection = await _get_json(client, collection_url, auth, timeout)
        urls = []
        for member in collection.get("Members") or []:
            path = member.get("@odata.id") if isinstance(member, dict) else None
            url = urllib.parse.urljoin(base + "/", path) if isinstance(path, str) else ""
            if url.startswith(base + "/"):  # the credentials go to this BMC only
                urls.append(url)
        if not urls:
            raise _ProbeError(f"{collection_url} lists no system")
        bodies = await asyncio.gather(*(_get_json(client, url, auth, timeout)
                                        for url in urls[:MAX_REDFISH_SYSTEMS]))
    except _ProbeError as exc:
        return _Identity(REDFISH, (), _scrub(str(exc), password))
    systems = []
    for body in bodies:
        found_uuid = _canonical_uuid(body.get("UUID"))
        systems.append(_System(serial=_text(body.get("SerialNumber")), uuid=found_uuid,
                               uuids=frozenset({found_uuid}) if found_uuid else frozenset()))
    return _Identity(REDFISH, tuple(systems))


# --- the probe ---------------------------------------------------------------------------------


def _verify(verify_ca: str | bool) -> ssl.SSLContext | bool:
    if isinstance(verify_ca, str):
        return ssl.create_default_context(cafile=verify_ca)
    return verify_ca


def _identity_text(identity: _Identity, system: _System | None, match: bool | None,
                   expected: str) -> str:
    via = "Redfish" if identity.via == REDFISH else "IPMI"
    said = [f"serial {system.serial}"] if system and system.serial else []
    if system and system.uuid:
        said.append(f"system UUID {system.uuid}")
    elif system and system.uuids:
        said.append("a system GUID of no known byte order")
    reported = " and ".join(said) or "nothing"
    verdict = {True: "which match this machine",
               False: f"which are not this machine's ({expected})",
               None: "nothing to compare with this machine's"}[match]
    return f"over {via} it reports {reported}, {verdict}"


async def _probe(address: str, ipmi_port: int, redfish_port: int | None,
                 username: str | None, password: str | None, expected_serial: str | None,
                 expected_uuid: str | None, timeout: float, verify_ca: str | bool,
                 redfish_scheme: str) -> ProbeResult:
    host = address.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    base = _base_url(host, redfish_port, redfish_scheme)
    try:
        verify = _verify(verify_ca)
    except (OSError, ssl.SSLError) as exc:
        return ProbeResult(address, False, None, None, None, None,
                           f"BMC {address} was not probed: its CA file cannot be read "
                           f"({_os_error(exc)}).")
    async with httpx.AsyncClient(verify=verify, timeout=timeout, trust_env=False,
                                 follow_redirects=True) as client:
        ipmi, redfish = await asyncio.gather(_ipmi_ping(host, ipmi_port, timeout),
                                             _redfish_root(client, base, timeout))
        protocol = REDFISH if redfish.speaks else IPMI if ipmi.speaks else None
        found = f"BMC {address}: {ipmi.text}; {redfish.text}"
        if protocol is None:
            return ProbeResult(address, ipmi.answered or redfish.answered, None, None, None,
                               None, f"{found}.")
        if username is None or password is None:
            return ProbeResult(address, True, protocol, None, None, None,
                               f"{found}; no credentials, so its system was not checked.")
        attempts: list[_Identity] = []
        if redfish.speaks:
            attempts.append(await _timed(
                REDFISH, timeout, _redfish_identity(client, base, redfish.systems_path,
                                                    username, password, timeout)))
        if ipmi.speaks and (not attempts or attempts[-1].error is not None):
            attempts.append(await _timed(IPMI, timeout, in_daemon_thread(
                _ipmi_identity, host, ipmi_port, username, password, timeout)))
    identity = attempts[-1]
    failures = "; ".join(each.error for each in attempts if each.error)
    if identity.error is not None:  # the other attempt, if any, failed too: say both
        return ProbeResult(address, True, protocol, None, None, None, _scrub(
            f"{found}; its system was not checked: {failures}.", password))
    match, system = _match(identity.systems, expected_serial, expected_uuid)
    expected = " and ".join(f"{name} {value}" for name, value in (
        ("serial", expected_serial), ("system UUID", expected_uuid)) if value)
    text = (f"{failures}; " if failures else "") + _identity_text(identity, system, match,
                                                                  expected)
    return ProbeResult(address, True, protocol, match, system.serial if system else None,
                       system.uuid if system else None, _scrub(f"{found}; {text}.", password))


async def _timed(via: str, timeout: float, reading: Any) -> _Identity:
    try:
        result: _Identity = await asyncio.wait_for(reading, timeout)
    except TimeoutError:
        name = "Redfish" if via == REDFISH else "IPMI"
        return _Identity(via, (), f"no {name} answer with credentials within {timeout:g} s")
    return result


async def probe(address: str, *, ipmi_port: int = 623, redfish_port: int | None = None,
                username: str | None = None, password: str | None = None,
                expected_serial: str | None = None, expected_uuid: str | None = None,
                timeout: float = 3.0, verify_ca: str | bool = False,
                redfish_scheme: str = "https") -> ProbeResult:
    """Probe the BMC at `address` (an IP address or name; IPv6 with or without brackets).

    IPMI (UDP `ipmi_port`) and Redfish (`redfish_scheme`://address[:`redfish_port`]) are asked
    at once, each within `timeout`; "redfish" wins when both answer (modern BMCs speak both).
    With `username` and `password`, the system serial and UUID the BMC reports are compared
    with `expected_serial` / `expected_uuid` (the ramdisk's): over Redfish, or over IPMI when
    Redfish is absent or refuses; that step has its own `timeout`.

    `verify_ca` (a CA bundle's path, or whether to verify against the system's CAs) is False
    by default: a BMC fresh from the factory presents a self-signed certificate, which would
    otherwise hide every new Redfish BMC. Unverified, the credentials go to whatever answers
    at the address: give the BMCs' CA where it is known.

    Never raises for what a BMC or the network does (`redfish_scheme` other than http or
    https is a ValueError: a caller's bug); the detail never holds the password.
    """
    if redfish_scheme not in ("https", "http"):
        raise ValueError(f"redfish_scheme must be https or http, not {redfish_scheme!r}")
    try:
        result = await _probe(address, ipmi_port, redfish_port, username, password,
                              expected_serial, expected_uuid, timeout, verify_ca,
                              redfish_scheme)
    except Exception as exc:  # the caller is processing a report: a fact, not a crash
        why = _describe(exc, password)
        LOG.warning("Probing the BMC at %s failed: %s", address, why)
        result = ProbeResult(address, False, None, None, None, None,
                             f"Probing the BMC at {address} failed: {why}.")
    LOG.info("BMC probe: %s", result.detail)
    return result
