"""The ramdisk's /init and udhcpc hook, run with the host's busybox sh and applets.

/init sourced with IRONSIGHT_INIT_LIB=1 only defines its functions; PATH holds nothing but
busybox applets, so these run the same tools as the ramdisk.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ironsight.discoverd import formats
from ironsight.ramdisk.initramfs import BUSYBOX, FILES

INIT = FILES / "init"
UDHCPC = FILES / "udhcpc.script"
DASH = Path("/bin/dash")

pytestmark = pytest.mark.skipif(not BUSYBOX.exists(), reason="needs /bin/busybox")


@pytest.fixture(scope="module")
def applets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PATH directory of busybox applets only."""
    bindir = tmp_path_factory.mktemp("busybox-bin")
    names = subprocess.run([str(BUSYBOX), "--list"], capture_output=True, text=True,
                           check=True).stdout.split()
    for name in names:
        (bindir / name).symlink_to(BUSYBOX)
    return bindir


def sh(applets: Path, script: str, *, path_extra: Path | None = None,
       env: dict[str, str] | None = None, check: bool = True) -> str:
    path = f"{path_extra}:{applets}" if path_extra else str(applets)
    proc = subprocess.run([str(BUSYBOX), "sh", "-c", f'. "{INIT}"\n{script}'],
                          env={"PATH": path, "IRONSIGHT_INIT_LIB": "1", **(env or {})},
                          capture_output=True, text=True, timeout=30, check=False)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc.stdout


def parsed(applets: Path, cmdline: str) -> dict[str, str]:
    out = sh(applets, f"parse_cmdline '{cmdline}'\n"
                      'echo "$CALLBACK_URL|$REPORT_URLS|$BOOTIF|$POWEROFF|$DEBUG|$CALLBACK_TOKEN"')
    keys = ("url", "report_urls", "bootif", "poweroff", "debug", "token")
    return dict(zip(keys, out.rstrip("\n").split("|"), strict=True))


# --- syntax ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("script", [INIT, UDHCPC])
def test_the_scripts_parse(script: Path) -> None:
    proc = subprocess.run([str(BUSYBOX), "sh", "-n", str(script)], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_sourcing_with_the_lib_flag_runs_nothing(applets: Path) -> None:
    assert sh(applets, "") == ""


@pytest.mark.skipif(not DASH.exists(), reason="needs dash")
def test_main_refuses_to_run_unless_pid_1(tmp_path: Path) -> None:
    # dash and an empty PATH: should the guard ever break, no real command can run here
    proc = subprocess.run([str(DASH), str(INIT)], env={"PATH": str(tmp_path)},
                          capture_output=True, text=True, timeout=10, check=False)
    assert proc.returncode == 1
    assert "not PID 1" in proc.stderr


# --- the kernel command line ----------------------------------------------------------------------

def test_parse_cmdline_reads_every_key(applets: Path) -> None:
    assert parsed(applets, "console=ttyS0 ironsight.callback_url=http://h:5050/v1/continue "
                           "BOOTIF=01-52-54-00-12-34-56 ironsight.poweroff=1 "
                           "ironsight.debug=1 ironsight.callback_token=Ab-9_x") == {
        "url": "http://h:5050/v1/continue", "report_urls": "http://h:5050/v1/continue",
        "bootif": "01-52-54-00-12-34-56", "poweroff": "1", "debug": "1", "token": "Ab-9_x"}


def test_parse_cmdline_defaults_wait_for_the_power_off(applets: Path) -> None:
    assert parsed(applets, "console=ttyS0 quiet") == {
        "url": "", "report_urls": "", "bootif": "", "poweroff": "0", "debug": "0", "token": ""}


@pytest.mark.parametrize("value", ["yes", "", "2"])
def test_parse_cmdline_only_1_powers_off(applets: Path, value: str) -> None:
    assert parsed(applets, f"ironsight.poweroff={value}")["poweroff"] == "0"


def test_other_ramdisks_callback_keys_are_only_used_for_the_error_report(
        applets: Path) -> None:
    # the agent reads them itself: /init passes no --callback-url then
    result = parsed(applets, "ipa-inspection-callback-url=http://a/x,http://b/x "
                             "discoverd_callback_url=http://c/x")
    assert result["url"] == ""
    assert result["report_urls"] == "http://a/x http://b/x"


def test_parse_cmdline_stops_at_double_dash_and_does_not_glob(applets: Path) -> None:
    result = parsed(applets, "BOOTIF=* -- ironsight.poweroff=1")
    assert result["bootif"] == "*"
    assert result["poweroff"] == "0"


def test_parse_cmdline_reads_the_static_network_keys(applets: Path) -> None:
    out = sh(applets, "parse_cmdline 'ironsight.ip=192.0.2.10/24 ironsight.ip=fd00:1::10/64 "
                      "ironsight.gateway=fd00:1::1 ironsight.gateway=192.0.2.1 "
                      "ironsight.dns=192.0.2.53,fd00:1::53'\n"
                      'echo "$STATIC_IPS|$STATIC_GWS|$STATIC_DNS"')
    assert out.rstrip("\n").split("|") == [
        "192.0.2.10/24 fd00:1::10/64", "192.0.2.1 fd00:1::1", "192.0.2.53 fd00:1::53"]


def test_parse_cmdline_resets_the_static_network_keys(applets: Path) -> None:
    out = sh(applets, "parse_cmdline 'ironsight.ip=192.0.2.10/24 ironsight.gateway=192.0.2.1 "
                      "ironsight.dns=192.0.2.53'\nparse_cmdline 'console=ttyS0'\n"
                      'echo "$STATIC_IPS|$STATIC_GWS|$STATIC_DNS"')
    assert out.rstrip("\n") == "||"


def test_parse_cmdline_keeps_the_last_static_address_of_each_family(applets: Path) -> None:
    out = sh(applets, "parse_cmdline 'ironsight.ip=fd00:1::10/64 ironsight.ip=192.0.2.10/24 "
                      "ironsight.ip=192.0.2.11/24 ironsight.ip= ironsight.gateway=192.0.2.1 "
                      "ironsight.gateway=192.0.2.2'\n"
                      'echo "$STATIC_IPS|$STATIC_GWS"')
    assert out.rstrip("\n") == "192.0.2.11/24 fd00:1::10/64|192.0.2.2"


@pytest.mark.parametrize(("bootif", "mac"), [
    ("01-52-54-00-12-34-56", "52:54:00:12:34:56"),
    ("01-AA-BB-CC-DD-EE-FF", "aa:bb:cc:dd:ee:ff"),
    ("52:54:00:12:34:56", "52:54:00:12:34:56"),
    ("", ""),
    ("01-52-54-00-12", ""),
    ("01-zz-54-00-12-34-56", ""),
])
def test_bootif_mac(applets: Path, bootif: str, mac: str) -> None:
    assert sh(applets, f"bootif_mac '{bootif}'").strip() == mac


# --- the address family: IPv4 by DHCP, or IPv6 only ----------------------------------------------

@pytest.mark.parametrize(("url", "family"), [
    ("http://[fd20:20::1]:5051/v1/continue", "6"),
    ("http://[::1]/v1/continue", "6"),
    ("https://user:pw@[2001:db8::5]:443/x", "6"),
    ("http://10.20.0.1:5050/v1/continue", "4"),
    ("http://discoverd.example:5050/v1/continue", "4"),
    ("http://h:5050/v1/continue?a=[x]", "4"),
    ("http://h/[fd20::1]", "4"),
    ("", "4"),
])
def test_url_family_is_6_only_for_an_ipv6_literal_host(applets: Path, url: str,
                                                       family: str) -> None:
    assert sh(applets, f"url_family '{url}'").strip() == family


@pytest.mark.parametrize(("cmdline", "family"), [
    ("ironsight.callback_url=http://[fd20:20::1]:5051/v1/continue", "6"),
    ("ironsight.callback_url=http://[fd20:20::1]:5051/x,http://10.0.0.1:5050/x", "6"),
    ("ironsight.callback_url=http://10.0.0.1:5050/x,http://[fd20:20::1]:5051/x", "4"),
    ("ipa-inspection-callback-url=http://[fd20:20::1]:5051/x", "6"),
    ("discoverd_callback_url=http://10.0.0.1:5050/x", "4"),
    ("console=ttyS0", "4"),  # no URL here: the agent finds none either, DHCP as before
])
def test_the_first_callback_url_decides_the_family(applets: Path, cmdline: str,
                                                   family: str) -> None:
    assert sh(applets, f"parse_cmdline '{cmdline}'; net_family").strip() == family


@pytest.mark.parametrize(("cmdline", "method"), [
    ("ironsight.ip=192.0.2.10/24 ironsight.callback_url=http://192.0.2.1:5050/x", "static"),
    ("ironsight.ip=fd00:1::10/64 ironsight.callback_url=http://[fd00:1::1]:5051/x", "static"),
    ("ironsight.callback_url=http://[fd20:20::1]:5051/x", "ipv6"),
    ("ironsight.callback_url=http://10.0.0.1:5050/x", "dhcp"),
    ("ironsight.gateway=192.0.2.1 ironsight.dns=192.0.2.53", "dhcp"),  # no address: ignored
    ("ironsight.ip=", "dhcp"),
    ("console=ttyS0", "dhcp"),
])
def test_net_method_is_static_only_with_an_ironsight_ip_address(applets: Path, cmdline: str,
                                                                 method: str) -> None:
    assert sh(applets, f"parse_cmdline '{cmdline}'; net_method").strip() == method


IF_INET6 = """\
00000000000000000000000000000001 01 80 10 80       lo
fe80000000000000505400fffe123456 02 40 20 80     eth0
fec0000000000000505400fffe123456 02 40 40 40     eth0
20010db8000000000000000000000007 02 40 00 20     eth0
20010db8000000000000000000000008 02 40 00 08     eth0
fd200020000000000000000000000001 03 40 00 80     eth1
fec0000000000000505400fffe123456 04 40 40 00     eth2
20010db8000100000001000000000000 05 30 00 00     eth3
"""


@pytest.mark.parametrize(("nic", "address"), [
    ("eth0", ""),  # link-local, tentative, deprecated, DAD failed: none usable yet
    ("eth1", "fd20:20::1/64"),
    ("eth2", "fec0::5054:ff:fe12:3456/64"),  # slirp's site-local prefix counts
    ("eth3", "2001:db8:1:0:1::/48"),  # RFC 5952: the longest zero run is the one shortened
    ("lo", ""),
    ("eth9", ""),
])
def test_global_ipv6_waits_for_an_address_past_dad(applets: Path, tmp_path: Path, nic: str,
                                                   address: str) -> None:
    (tmp_path / "if_inet6").write_text(IF_INET6)
    assert sh(applets, f"IF_INET6={tmp_path / 'if_inet6'}; global_ipv6 {nic}").strip() \
        == address


def test_wait_ipv6_logs_the_address(applets: Path, net: Path, tmp_path: Path) -> None:
    (tmp_path / "if_inet6").write_text(IF_INET6.replace("eth1", "eth0"))
    out = sh(applets, f"NET={net}; IF_INET6={tmp_path / 'if_inet6'}\n"
                      "wait_ipv6 eth0 4; echo rc=$?")
    assert "IPv6 only on eth0 (52:54:00:00:00:01)" in out
    assert "network up: fd20:20::1/64 (IPv6)" in out
    assert out.strip().endswith("rc=0")


def test_wait_ipv6_gives_up_after_the_bound_and_says_so(applets: Path, net: Path,
                                                        tmp_path: Path) -> None:
    (tmp_path / "if_inet6").write_text(IF_INET6)  # eth0: nothing usable, ever
    out = sh(applets, f"NET={net}; IF_INET6={tmp_path / 'if_inet6'}\n"
                      "wait_ipv6 eth0 2; echo rc=$?")
    assert "no IPv6 address on eth0 after 1 s" in out
    assert out.strip().endswith("rc=1")


# --- static configuration (ironsight.ip, .gateway, .dns) -----------------------------------------

def static(tmp_path: Path, script: str, *, fail_on: str = "",
           cwd: Path | None = None) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Runs /init's functions under dash with PATH holding only a fake `ip`, which records its
    arguments (and fails like ip when they contain fail_on), and RESOLV_CONF in tmp_path.
    dash, not busybox sh: busybox sh would run its own `ip` applet whatever PATH says, on this
    machine's real interfaces. Returns the process and the recorded `ip` calls."""
    fake = tmp_path / "fake"
    fake.mkdir()
    calls = tmp_path / "calls"
    failing = (f'case "$*" in *"{fail_on}"*) echo "RTNETLINK answers: File exists" >&2; '
               "exit 2 ;; esac\n") if fail_on else ""
    (fake / "ip").write_text(f'#!{DASH}\necho "ip $*" >> {calls}\n{failing}')
    (fake / "ip").chmod(0o755)
    proc = subprocess.run([str(DASH), "-c", f'. "{INIT}"\n'
                                            f"RESOLV_CONF={tmp_path / 'resolv.conf'}\n{script}"],
                          env={"PATH": str(fake), "IRONSIGHT_INIT_LIB": "1"}, cwd=cwd,
                          capture_output=True, text=True, timeout=30, check=False)
    return proc, calls.read_text().splitlines() if calls.exists() else []


@pytest.mark.skipif(not DASH.exists(), reason="needs dash")
def test_configure_static_ipv4_only(tmp_path: Path) -> None:
    proc, calls = static(tmp_path, "STATIC_IPS=192.0.2.10/24; STATIC_GWS=192.0.2.1\n"
                                   "configure_static eth9")
    assert proc.returncode == 0, proc.stderr
    assert calls == ["ip addr add 192.0.2.10/24 dev eth9",
                     "ip route add default via 192.0.2.1 dev eth9"]
    assert "network up: 192.0.2.10/24 (static)" in proc.stdout


@pytest.mark.skipif(not DASH.exists(), reason="needs dash")
def test_configure_static_ipv6_only(tmp_path: Path) -> None:
    proc, calls = static(tmp_path, "STATIC_IPS=fd00:1::10/64; STATIC_GWS=fd00:1::1\n"
                                   "configure_static eth9")
    assert proc.returncode == 0, proc.stderr
    assert calls == ["ip -6 addr add fd00:1::10/64 dev eth9",
                     "ip -6 route add default via fd00:1::1 dev eth9"]
    assert "network up: fd00:1::10/64 (static)" in proc.stdout


@pytest.mark.skipif(not DASH.exists(), reason="needs dash")
def test_configure_static_dual_stack(tmp_path: Path) -> None:
    proc, calls = static(tmp_path, "STATIC_IPS='192.0.2.10/24 fd00:1::10/64'\n"
                                   "STATIC_GWS='192.0.2.1 fd00:1::1'\nconfigure_static eth9")
    assert proc.returncode == 0, proc.stderr
    assert calls == ["ip addr add 192.0.2.10/24 dev eth9",
                     "ip -6 addr add fd00:1::10/64 dev eth9",
                     "ip route add default via 192.0.2.1 dev eth9",
                     "ip -6 route add default via fd00:1::1 dev eth9"]
    assert "network up: 192.0.2.10/24 fd00:1::10/64 (static)" in proc.stdout


@pytest.mark.skipif(not DASH.exists(), reason="needs dash")
def test_configure_static_without_a_gateway_adds_no_route(tmp_path: Path) -> None:
    proc, calls = static(tmp_path, "STATIC_IPS=192.0.2.10/24; configure_static eth9")
    assert proc.returncode == 0, proc.stderr
    assert calls == ["ip addr add 192.0.2.10/24 dev eth9"]


@pytest.mark.skipif(not DASH.exists(), reason="needs dash")
def test_configure_static_writes_the_nameservers(tmp_path: Path) -> None:
    proc, _ = static(tmp_path, "STATIC_IPS=192.0.2.10/24; STATIC_DNS='192.0.2.53 fd00:1::53'\n"
                               "configure_static eth9")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "resolv.conf").read_text() == \
        "nameserver 192.0.2.53\nnameserver fd00:1::53\n"


@pytest.mark.skipif(not DASH.exists(), reason="needs dash")
def test_configure_static_without_nameservers_leaves_resolv_conf_alone(tmp_path: Path) -> None:
    proc, _ = static(tmp_path, "STATIC_IPS=192.0.2.10/24; configure_static eth9")
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "resolv.conf").exists()


@pytest.mark.skipif(not DASH.exists(), reason="needs dash")
def test_a_failing_ip_command_fails_configure_static_and_is_logged(tmp_path: Path) -> None:
    proc, calls = static(tmp_path, "STATIC_IPS='192.0.2.10/24 fd00:1::10/64'\n"
                                   "STATIC_GWS='192.0.2.1 fd00:1::1'\n"
                                   "configure_static eth9; echo rc=$?", fail_on="route")
    assert proc.stdout.strip().endswith("rc=1"), proc.stdout
    assert "ip route add default via 192.0.2.1 dev eth9 failed: RTNETLINK answers: File exists" \
        in proc.stdout
    assert "network up" not in proc.stdout
    assert calls[-1] == "ip route add default via 192.0.2.1 dev eth9"  # stops there


@pytest.mark.skipif(not DASH.exists(), reason="needs dash")
def test_configure_static_without_an_address_runs_no_ip_command(tmp_path: Path) -> None:
    proc, calls = static(tmp_path, "STATIC_IPS=''; STATIC_GWS=192.0.2.1\n"
                                   "configure_static eth9; echo rc=$?")
    assert proc.stdout.strip().endswith("rc=1"), proc.stdout
    assert calls == []


@pytest.mark.skipif(not DASH.exists(), reason="needs dash")
def test_configure_static_does_not_glob_the_values(tmp_path: Path) -> None:
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "file").write_text("")
    proc, calls = static(tmp_path, "STATIC_IPS='*'; configure_static eth9\n"
                                   'case "$-" in *f*) echo "globbing left off" ;; esac',
                         cwd=tmp_path / "cwd")
    assert proc.returncode == 0, proc.stderr
    assert calls == ["ip addr add * dev eth9"]
    assert "globbing left off" not in proc.stdout


# --- boot mode and Secure Boot --------------------------------------------------------------------

SECURE_BOOT_VAR = "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"


@pytest.mark.parametrize(("value", "summary"), [
    (b"\x06\x00\x00\x00\x01", "uefi, secure boot on"),
    (b"\x06\x00\x00\x00\x00", "uefi, secure boot off"),
    (b"\x06\x00\x00\x00", "uefi, secure boot unknown"),  # attributes only
    (None, "uefi, secure boot unknown"),  # efivarfs not mounted
])
def test_boot_summary_reads_the_secure_boot_variable(applets: Path, tmp_path: Path,
                                                     value: bytes | None, summary: str) -> None:
    efi = tmp_path / "efi"
    (efi / "efivars").mkdir(parents=True)
    if value is not None:
        (efi / "efivars" / SECURE_BOOT_VAR).write_bytes(value)
    assert sh(applets, f"EFI={efi}; boot_summary").strip() == summary


def test_boot_summary_without_efi_is_bios(applets: Path, tmp_path: Path) -> None:
    assert sh(applets, f"EFI={tmp_path / 'none'}; boot_summary").strip() == "bios"


def test_mount_efivars_does_nothing_in_bios_mode(applets: Path, tmp_path: Path) -> None:
    assert sh(applets, f"EFI={tmp_path / 'none'}; WORK={tmp_path}; mount_efivars; "
                       "echo rc=$?").strip() == "rc=0"


def test_a_failed_efivarfs_mount_is_logged_not_fatal(applets: Path, tmp_path: Path) -> None:
    (tmp_path / "efi").mkdir()  # no efivars mount point: mount fails, whoever runs the test
    out = sh(applets, f"EFI={tmp_path / 'efi'}; WORK={tmp_path}; mount_efivars; echo rc=$?")
    assert f"cannot mount efivarfs on {tmp_path}/efi/efivars" in out
    assert out.strip().endswith("rc=0")


# --- NICs -----------------------------------------------------------------------------------------

@pytest.fixture
def net(tmp_path: Path) -> Path:
    """A /sys/class/net: lo, a bridge (no device), and two NICs."""
    base = tmp_path / "net"
    for name, mac, device in (("lo", "00:00:00:00:00:00", False),
                              ("br0", "02:00:00:00:00:01", False),
                              ("eth0", "52:54:00:00:00:01", True),
                              ("eth1", "52:54:00:00:00:02", True)):
        (base / name).mkdir(parents=True)
        (base / name / "address").write_text(mac + "\n")
        if device:
            (base / name / "device").mkdir()
    return base


def test_find_nic_by_mac_skips_lo_and_virtual_interfaces(applets: Path, net: Path) -> None:
    assert sh(applets, f"NET={net}; list_nics").split() == ["eth0", "eth1"]
    assert sh(applets, f"NET={net}; find_nic 52:54:00:00:00:02").strip() == "eth1"
    assert sh(applets, f"NET={net}; find_nic ''").strip() == "eth0"


def test_wait_nic_falls_back_to_the_first_nic_when_bootif_matches_none(
        applets: Path, net: Path) -> None:
    assert sh(applets, f"NET={net}; wait_nic 52:54:00:99:99:99 1").strip() == "eth0"


def test_wait_nic_fails_without_any_nic(applets: Path, tmp_path: Path) -> None:
    (tmp_path / "empty/lo").mkdir(parents=True)
    out = sh(applets, f"NET={tmp_path / 'empty'}; wait_nic '' 1 || echo none")
    assert out.strip() == "none"


# --- the error report -----------------------------------------------------------------------------

def test_error_report_is_a_legacy_report_discoverd_accepts(applets: Path, net: Path) -> None:
    message = 'agent exited with code 1: Traceback "x" \\ \t tab'
    out = sh(applets, f"NET={net}; BOOTIF=01-52-54-00-00-00-02\n"
                      f"error_report '{message}'")
    report = json.loads(out)
    assert report == {
        "error": "ramdisk error: agent exited with code 1: Traceback \"x\" \\  tab",
        "interfaces": {"eth0": {"mac": "52:54:00:00:00:01"},
                       "eth1": {"mac": "52:54:00:00:00:02"}},
        "boot_interface": "01-52-54-00-00-00-02"}
    data = formats.normalize(report)
    assert data["error"].startswith("ramdisk error: ")
    assert [i["mac_address"] for i in data["inventory"]["interfaces"]] == [
        "52:54:00:00:00:01", "52:54:00:00:00:02"]


class _Receiver:
    def __init__(self, status: int) -> None:
        self.status = status
        self.bodies: list[dict[str, object]] = []
        self.tokens: list[str | None] = []


class _Server6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


@pytest.fixture
def receiver(request: pytest.FixtureRequest) -> Iterator[tuple[_Receiver, str]]:
    """param: the HTTP status, or (status, "::1") for a server on IPv6 loopback."""
    status, host = request.param if isinstance(request.param, tuple) else (request.param,
                                                                           "127.0.0.1")
    state = _Receiver(status)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            state.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            state.tokens.append(self.headers.get("X-Ironsight-Callback-Token"))
            self.send_response(state.status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = (_Server6 if ":" in host else ThreadingHTTPServer)((host, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    netloc = f"[{host}]" if ":" in host else host
    yield state, f"http://{netloc}:{server.server_address[1]}/v1/continue"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("receiver", [202, 400], indirect=True)
def test_post_error_delivers_once_even_when_discoverd_answers_400(
        applets: Path, net: Path, tmp_path: Path, receiver: tuple[_Receiver, str]) -> None:
    """busybox wget: an HTTP error is still delivered (no retry); no -T (it segfaults)."""
    state, url = receiver
    out = sh(applets, f"NET={net}; WORK={tmp_path}; REPORT_URLS='{url}'\n"
                      "post_error 'agent exited with code 1: boom'; echo rc=$?")
    assert out.strip().endswith("rc=0"), out
    assert len(state.bodies) == 1
    assert state.bodies[0]["error"] == "ramdisk error: agent exited with code 1: boom"


@pytest.mark.skipif(not socket.has_ipv6, reason="needs IPv6")
@pytest.mark.parametrize("receiver", [(400, "::1")], indirect=True)
def test_post_error_reaches_an_ipv6_literal_url(
        applets: Path, net: Path, tmp_path: Path, receiver: tuple[_Receiver, str]) -> None:
    """busybox wget takes http://[addr]:port/ (the IPv6-only networks' callback URLs)."""
    state, url = receiver
    assert url.startswith("http://[::1]:")
    out = sh(applets, f"NET={net}; WORK={tmp_path}; REPORT_URLS='{url}'\n"
                      "post_error boom; echo rc=$?")
    assert out.strip().endswith("rc=0"), out
    assert [body["error"] for body in state.bodies] == ["ramdisk error: boom"]


@pytest.mark.parametrize("receiver", [400], indirect=True)
def test_post_error_sends_the_callback_token_in_its_header(
        applets: Path, net: Path, tmp_path: Path, receiver: tuple[_Receiver, str]) -> None:
    state, url = receiver
    out = sh(applets, f"NET={net}; WORK={tmp_path}; REPORT_URLS='{url}'\n"
                      "parse_cmdline 'ironsight.callback_token=tok-EN_1'; REPORT_URLS='" + url
                      + "'\npost_error boom; echo rc=$?")
    assert out.strip().endswith("rc=0"), out
    assert state.tokens == ["tok-EN_1"]
    assert "tok-EN_1" not in out


@pytest.mark.parametrize("receiver", [400], indirect=True)
def test_post_error_without_a_token_sends_no_token_header(
        applets: Path, net: Path, tmp_path: Path, receiver: tuple[_Receiver, str]) -> None:
    state, url = receiver
    sh(applets, f"NET={net}; WORK={tmp_path}; REPORT_URLS='{url}'\npost_error boom")
    assert state.tokens == [None]


def test_post_error_without_url_fails(applets: Path, net: Path, tmp_path: Path) -> None:
    out = sh(applets, f"NET={net}; WORK={tmp_path}; REPORT_URLS=''\n"
                      "post_error x; echo rc=$?")
    assert out.strip() == "rc=1"


# --- udhcpc hook ----------------------------------------------------------------------------------


@pytest.mark.skipif(not DASH.exists(), reason="needs dash")
def test_udhcpc_bound_configures_address_route_dns_and_hostname(tmp_path: Path) -> None:
    """Run by dash with fakes only on PATH: busybox sh would run its own `ip` and `hostname`
    applets whatever PATH says, on this machine's real interfaces."""
    fake = tmp_path / "fake"
    fake.mkdir()
    calls = tmp_path / "calls"
    for tool in ("ip", "hostname"):
        (fake / tool).write_text(f'#!{DASH}\necho "{tool} $*" >> {calls}\n')
        (fake / tool).chmod(0o755)
    resolv = tmp_path / "resolv.conf"
    env = {"PATH": str(fake), "RESOLV_CONF": str(resolv), "interface": "eth9",
           "ip": "192.0.2.15", "mask": "24", "router": "192.0.2.2 192.0.2.3",
           "dns": "192.0.2.3 192.0.2.4", "hostname": "node-1"}
    proc = subprocess.run([str(DASH), str(UDHCPC), "bound"], env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert calls.read_text().splitlines() == [
        "ip -4 addr flush dev eth9", "ip addr add 192.0.2.15/24 dev eth9",
        "ip route add default via 192.0.2.2 dev eth9", "hostname node-1"]
    assert resolv.read_text() == "nameserver 192.0.2.3\nnameserver 192.0.2.4\n"
