"""The BMC probe of auto-discovery against local stand-ins on 127.0.0.1: a Redfish service
(HTTP or HTTPS, in a thread) and small UDP responders; the GUID byte orders against known
vectors. The lab's real virtual IPMI BMC is in tests/functional/discoverd/test_bmc_probe.py."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import ssl
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pyghmi.ipmi.private.util import decode_wireformat_uuid

from ironsight.discoverd import bmc_probe
from ironsight.discoverd.bmc_probe import (
    channel_auth_capabilities_request,
    decode_system_guid,
    detect_system_guid,
    parse_channel_auth_capabilities,
    probe,
)
from ironsight.lab.pki import Pki, make_pki

USER = "admin"
PASSWORD = "redfish-s3cret"
MACHINE_UUID = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0"


def free_port(kind: int) -> int:
    """A 127.0.0.1 port nothing listens on (TCP or UDP)."""
    with socket.socket(socket.AF_INET, kind) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- a Redfish service ---------------------------------------------------------------------


class FakeRedfish:
    """A service root and a Systems collection on 127.0.0.1; everything but the root asks
    for basic auth. `requests` records (path, Authorization header) of each request."""

    def __init__(self, systems: list[dict[str, Any]] | None = None, *,
                 root: dict[str, Any] | None = None, pki: Pki | None = None) -> None:
        self.systems = systems if systems is not None else []
        self.root = root if root is not None else {
            "@odata.id": "/redfish/v1/", "RedfishVersion": "1.11.0",
            "Systems": {"@odata.id": "/redfish/v1/Systems"}}
        self.requests: list[tuple[str, str | None]] = []
        self.scheme = "https" if pki else "http"
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        if pki is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(pki.cert_file, pki.key_file)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = int(self.server.server_address[1])
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.02,),
                                        daemon=True)

    def __enter__(self) -> FakeRedfish:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, path: str, authorization: str | None) -> tuple[int, Any]:
        self.requests.append((path, authorization))
        if path.rstrip("/") == "/redfish/v1":
            return 200, self.root
        expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if authorization != expected:
            return 401, {"error": {"code": "Base.1.8.GeneralError"}}
        if path == "/redfish/v1/Systems":
            return 200, {"Members": [{"@odata.id": f"/redfish/v1/Systems/{index}"}
                                     for index in range(len(self.systems))]}
        index = path.rpartition("/")[2]
        if path.startswith("/redfish/v1/Systems/") and index.isdigit() \
                and int(index) < len(self.systems):
            return 200, self.systems[int(index)]
        return 404, {"error": {"code": "Base.1.8.ResourceMissingAtURI"}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, body = service.answer(self.path, self.headers.get("Authorization"))
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


# --- UDP responders ------------------------------------------------------------------------


def auth_capabilities_answer(request: bytes, code: int = 0, data: bytes = b"") -> bytes:
    """A BMC's session-less answer to `request` (a Get Channel Authentication Capabilities)."""
    seq_lun = request[18]
    header = bytes([0x81, 0x07 << 2])
    body = bytes([0x20, seq_lun, 0x38, code]) + data
    message = (header + bytes([-sum(header) & 0xFF]) + body + bytes([-sum(body) & 0xFF]))
    return bytes.fromhex("0600ff07" "00" "00000000" "00000000") + bytes([len(message)]) \
        + message


class Ipmi15Bmc(asyncio.DatagramProtocol):
    """A BMC of IPMI 1.5 only: it refuses a request for IPMI 2.0 data (channel bit 7)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: Any = transport  # a DatagramTransport (not by class, in asyncio)

    def datagram_received(self, data: bytes, addr: Any) -> None:
        if data[20] & 0x80:
            self.transport.sendto(auth_capabilities_answer(data, code=0xCC), addr)
        else:  # channel 1, auth types none/MD5, IPMI 1.5 connections only
            caps = bytes([0x01, 0x15, 0x04, 0x01, 0, 0, 0, 0])
            self.transport.sendto(auth_capabilities_answer(data, data=caps), addr)


@pytest.fixture
async def ipmi15_port() -> AsyncIterator[int]:
    transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
        Ipmi15Bmc, local_addr=("127.0.0.1", 0))
    try:
        yield int(transport.get_extra_info("sockname")[1])
    finally:
        transport.close()


@pytest.fixture
def silent_udp() -> Iterator[socket.socket]:
    """A bound UDP socket that reads nothing and answers nothing."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(0)
        yield sock


# --- the IPMI packets ----------------------------------------------------------------------


def test_auth_capabilities_request_is_the_well_known_session_less_packet() -> None:
    """The bytes ipmitool (lanplus), nmap's and Metasploit's IPMI version probes send."""
    assert channel_auth_capabilities_request(0).hex() == (
        "0600ff07" "00" "00000000" "00000000" "09" "2018c8" "8100388e04b5")


def test_auth_capabilities_request_without_the_v2_bit_asks_channel_0e() -> None:
    packet = channel_auth_capabilities_request(5, v2=False)
    assert packet[20] == 0x0E and packet[21] == 0x04
    assert packet[19] == 0x38 and packet[18] >> 2 == 5
    assert sum(packet[17:]) & 0xFF == 0


def test_answer_of_an_ipmi_2_bmc_is_parsed() -> None:
    """pyghmi's BMC answer: channel 1, RMCP+ only."""
    answer = bytes.fromhex("0600ff07" "00" "00000000" "00000000" "10" "811c63" "200438" "00"
                           "0180040200000000" "1d")
    caps = parse_channel_auth_capabilities(answer)
    assert caps is not None
    assert (caps.seq, caps.completion_code, caps.ipmi_version) == (1, 0, "2.0")


def test_answer_with_a_bad_checksum_is_not_an_answer() -> None:
    answer = bytearray(auth_capabilities_answer(channel_auth_capabilities_request(1)))
    answer[-1] ^= 0x01
    assert parse_channel_auth_capabilities(bytes(answer)) is None


def test_rmcp_packet_of_another_class_is_not_an_answer() -> None:
    answer = bytearray(auth_capabilities_answer(channel_auth_capabilities_request(1)))
    answer[3] = 0x06  # ASF, the RMCP ping's class
    assert parse_channel_auth_capabilities(bytes(answer)) is None


# --- the system GUID's byte orders ---------------------------------------------------------


def test_guid_in_the_ipmi_specifications_byte_order_reads_as_ipmitool_prints_it() -> None:
    """IPMI 2.0 section 20.8: least significant byte first, i.e. all 16 bytes reversed."""
    raw = bytes.fromhex("f0e0d1c2b3a4958678495a4b3c2d1e0f")
    assert detect_system_guid(raw) == (MACHINE_UUID, "IPMI")


def test_guid_in_smbios_byte_order_reads_as_ipmitool_and_pyghmi_print_it() -> None:
    """The first three fields little-endian (what most BMCs and pyghmi's BMC send)."""
    raw = bytes.fromhex("3c2d1e0f5a4b78498695a4b3c2d1e0f0")
    assert detect_system_guid(raw) == (MACHINE_UUID, "SMBIOS")
    assert decode_wireformat_uuid(raw).lower() == MACHINE_UUID


def test_time_based_guid_with_a_plausible_timestamp_is_chosen_at_once() -> None:
    """RFC 9562's version 1 example (2022-02-22) sent in the IPMI byte order."""
    raw = bytes.fromhex("c232ab00941411ecb3c89f6bdeced846")[::-1]
    assert detect_system_guid(raw) == ("c232ab00-9414-11ec-b3c8-9f6bdeced846", "IPMI")


def test_guid_of_no_valid_version_in_any_byte_order_is_not_decoded() -> None:
    """SMBIOS's own example UUID has version 6 nibbles: ipmitool only dumps such bytes."""
    assert decode_system_guid(bytes.fromhex("33221100554477668899aabbccddeeff")) is None


# --- reachability and protocols ------------------------------------------------------------


async def test_nothing_listening_is_unreachable_within_the_timeout() -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = await probe("127.0.0.1", ipmi_port=free_port(socket.SOCK_DGRAM),
                         redfish_port=free_port(socket.SOCK_STREAM), timeout=1.0)
    assert loop.time() - started < 1.5
    assert (result.reachable, result.protocol, result.serial_match) == (False, None, None)
    assert "IPMI on UDP port" in result.detail and "no Redfish at https://" in result.detail


async def test_silent_port_is_asked_twice_and_given_up_after_the_timeout(
        silent_udp: socket.socket) -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = await probe("127.0.0.1", ipmi_port=silent_udp.getsockname()[1],
                         redfish_port=free_port(socket.SOCK_STREAM), timeout=0.6)
    elapsed = loop.time() - started
    assert 0.55 <= elapsed < 1.5
    assert (result.reachable, result.protocol) == (False, None)
    assert "within 0.6 s (asked twice)" in result.detail
    asked = []
    while True:
        try:
            asked.append(silent_udp.recv(512))
        except BlockingIOError:
            break
    assert [packet[20] for packet in asked] == [0x8E, 0x0E]


async def test_ipmi_1_5_bmc_refusing_the_v2_bit_is_asked_again_without(
        ipmi15_port: int) -> None:
    result = await probe("127.0.0.1", ipmi_port=ipmi15_port,
                         redfish_port=free_port(socket.SOCK_STREAM), timeout=2.0)
    assert (result.reachable, result.protocol) == (True, "ipmi")
    assert "IPMI 1.5 answers" in result.detail


async def test_redfish_service_root_is_detected() -> None:
    with FakeRedfish() as redfish:
        result = await probe("127.0.0.1", ipmi_port=free_port(socket.SOCK_DGRAM),
                             redfish_port=redfish.port, redfish_scheme="http")
    assert (result.reachable, result.protocol, result.serial_match) == (True, "redfish", None)
    assert "Redfish 1.11.0 answers at http://127.0.0.1:" in result.detail
    assert redfish.requests == [("/redfish/v1/", None)]  # no credentials, no Systems


async def test_ipmi_and_redfish_both_answering_is_redfish(ipmi15_port: int) -> None:
    with FakeRedfish() as redfish:
        result = await probe("127.0.0.1", ipmi_port=ipmi15_port, redfish_port=redfish.port,
                             redfish_scheme="http")
    assert result.protocol == "redfish"
    assert "IPMI 1.5 answers" in result.detail and "Redfish 1.11.0 answers" in result.detail


async def test_web_server_that_is_not_redfish_is_reachable_but_no_protocol() -> None:
    with FakeRedfish(root={"hello": "world"}) as web:
        result = await probe("127.0.0.1", ipmi_port=free_port(socket.SOCK_DGRAM),
                             redfish_port=web.port, redfish_scheme="http")
    assert (result.reachable, result.protocol) == (True, None)
    assert "not a Redfish service root" in result.detail


async def test_self_signed_redfish_is_detected_without_verification(pki: Pki) -> None:
    with FakeRedfish(pki=pki) as redfish:
        result = await probe("127.0.0.1", ipmi_port=free_port(socket.SOCK_DGRAM),
                             redfish_port=redfish.port)
    assert result.protocol == "redfish"


async def test_redfish_is_verified_against_the_given_ca(pki: Pki) -> None:
    with FakeRedfish(pki=pki) as redfish:
        result = await probe("127.0.0.1", ipmi_port=free_port(socket.SOCK_DGRAM),
                             redfish_port=redfish.port, verify_ca=str(pki.ca_file))
    assert result.protocol == "redfish"


async def test_untrusted_certificate_is_reachable_but_not_redfish(pki: Pki) -> None:
    with FakeRedfish(pki=pki) as redfish:
        result = await probe("127.0.0.1", ipmi_port=free_port(socket.SOCK_DGRAM),
                             redfish_port=redfish.port, verify_ca=True)
    assert (result.reachable, result.protocol) == (True, None)
    assert "TLS certificate is not trusted" in result.detail


# --- the system behind a Redfish BMC -------------------------------------------------------


async def redfish_probe(redfish: FakeRedfish, **kwargs: Any) -> bmc_probe.ProbeResult:
    return await probe("127.0.0.1", ipmi_port=free_port(socket.SOCK_DGRAM),
                       redfish_port=redfish.port, redfish_scheme="http", username=USER,
                       **{"password": PASSWORD, **kwargs})


async def test_redfish_systems_serial_is_read_with_basic_auth() -> None:
    system = {"SerialNumber": " SN-0042 ", "UUID": MACHINE_UUID.upper()}
    with FakeRedfish([system]) as redfish:
        result = await redfish_probe(redfish, expected_serial="sn-0042")
    assert (result.serial_match, result.bmc_serial, result.bmc_system_uuid) == (
        True, "SN-0042", MACHINE_UUID)
    authorized = {path for path, auth in redfish.requests if auth}
    assert authorized == {"/redfish/v1/Systems", "/redfish/v1/Systems/0"}


async def test_redfish_system_uuid_of_this_machine_matches() -> None:
    with FakeRedfish([{"SerialNumber": "SN-0042", "UUID": MACHINE_UUID}]) as redfish:
        result = await redfish_probe(redfish, expected_serial="another",
                                     expected_uuid="{" + MACHINE_UUID.upper() + "}")
    assert result.serial_match is True


async def test_redfish_system_of_another_machine_does_not_match() -> None:
    with FakeRedfish([{"SerialNumber": "SN-0042", "UUID": MACHINE_UUID}]) as redfish:
        result = await redfish_probe(redfish, expected_serial="SN-0099")
    assert (result.serial_match, result.bmc_serial) == (False, "SN-0042")
    assert "not this machine's (serial SN-0099)" in result.detail


async def test_any_system_of_a_multi_node_bmc_may_be_this_machine() -> None:
    systems = [{"SerialNumber": "NODE-A"}, {"SerialNumber": "NODE-B"}]
    with FakeRedfish(systems) as redfish:
        result = await redfish_probe(redfish, expected_serial="node-b")
    assert (result.serial_match, result.bmc_serial) == (True, "NODE-B")


async def test_placeholder_serial_is_never_compared() -> None:
    system = {"SerialNumber": "To Be Filled By O.E.M.",
              "UUID": "03000200-0400-0500-0006-000700080009"}
    with FakeRedfish([system]) as redfish:
        result = await redfish_probe(redfish, expected_serial="To Be Filled By O.E.M.",
                                     expected_uuid="03000200-0400-0500-0006-000700080009")
    assert result.serial_match is None
    assert result.bmc_serial == "To Be Filled By O.E.M."


async def test_credentials_without_anything_to_compare_give_no_verdict() -> None:
    with FakeRedfish([{"SerialNumber": "SN-0042", "UUID": MACHINE_UUID}]) as redfish:
        result = await redfish_probe(redfish)
    assert (result.serial_match, result.bmc_serial, result.bmc_system_uuid) == (
        None, "SN-0042", MACHINE_UUID)


async def test_redfish_wrong_password_gives_no_verdict_and_no_password() -> None:
    wrong = "wrong-Pa55word"
    with FakeRedfish([{"SerialNumber": "SN-0042"}]) as redfish:
        result = await redfish_probe(redfish, password=wrong, expected_serial="SN-0042")
    assert (result.reachable, result.protocol, result.serial_match) == (True, "redfish", None)
    assert "refused the credentials (HTTP 401)" in result.detail
    assert wrong not in json.dumps(result.to_dict())


def test_result_is_json_ready() -> None:
    result = bmc_probe.ProbeResult("fd00::5", True, "ipmi", False, "SN-1", MACHINE_UUID, "x.")
    assert json.loads(json.dumps(result.to_dict())) == {
        "address": "fd00::5", "reachable": True, "protocol": "ipmi", "serial_match": False,
        "bmc_serial": "SN-1", "bmc_system_uuid": MACHINE_UUID, "detail": "x."}


async def test_unreadable_ca_file_is_reported_not_raised(tmp_path: Path) -> None:
    result = await probe("127.0.0.1", verify_ca=str(tmp_path / "missing.pem"), timeout=0.5)
    assert (result.reachable, result.protocol) == (False, None)
    assert "CA file cannot be read" in result.detail
