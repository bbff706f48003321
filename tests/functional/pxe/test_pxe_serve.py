"""`ironsight serve` with `[pxe] enabled`, run inside the provisioning network's namespace as
an operator would: discoverd finds its URL from the interface, starts dnsmasq after its first
sync with the bare-metal service's ports, and a node on the network gets a lease and the iPXE
script; a MAC enrolled as a port gets its refusal in dnsmasq's hosts dir (that dnsmasq honours
it is shown in test_pxe_dhcp); dnsmasq goes away with the service."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

from .conftest import CLIENT_IF, SERVER_IF, PxeNet

UNKNOWN = "52:54:00:5e:01:01"
ENROLLED = "52:54:00:5e:01:02"

# Run inside the namespace: enrol a node with a port, through the bare-metal API.
ENROL = """
import sys, time, httpx
api, headers = "http://127.0.0.1:{port}", {{"X-OpenStack-Ironic-API-Version": "1.115"}}
deadline = time.monotonic() + 20
while True:
    try:
        httpx.get(api + "/v1", timeout=1)
        break
    except httpx.TransportError:
        if time.monotonic() > deadline:
            sys.exit("bare-metal API did not answer")
        time.sleep(0.1)
node = httpx.post(api + "/v1/nodes", json={{"driver": "fake"}}, headers=headers).json()
httpx.post(api + "/v1/ports", json={{"node_uuid": node["uuid"], "address": "{mac}"}},
           headers=headers).raise_for_status()
"""


async def wait_until(condition, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {timeout} s"
        await asyncio.sleep(0.1)


async def test_serve_with_pxe_answers_nodes_and_refuses_enrolled_macs(pxe_net: PxeNet,
                                                                      tmp_path: Path) -> None:
    state = tmp_path / "state"
    conf = tmp_path / "ironsight.conf"
    conf.write_text(f"""
[DEFAULT]
state_dir = {state}
# inside the test's own network namespace: no other host reaches it
allow_remote_noauth = true
[api]
port = 6385
[introspection]
host = 0.0.0.0
port = 5050
[pxe]
enabled = true
interface = {SERVER_IF}
dhcp_range = {pxe_net.subnet}.100,{pxe_net.subnet}.199,255.255.255.0,10m
[pxe_filter]
sync_period = 1
""")
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        serve = subprocess.Popen([*pxe_net.prefix, sys.executable, "-m", "ironsight.cli",
                                  "serve", "--config-file", str(conf)],
                                 stdout=out, stderr=subprocess.STDOUT)
    try:
        subprocess.run([*pxe_net.prefix, sys.executable, "-c",
                        ENROL.format(port=6385, mac=ENROLLED)], check=True, timeout=30)
        hosts_file = state / "pxe" / "hosts" / ENROLLED
        await wait_until(lambda: hosts_file.exists(), 10, "the enrolled port is not filtered")
        assert hosts_file.read_text() == f"{ENROLLED},ignore\n"

        address = await pxe_net.dhcp(UNKNOWN)
        assert (address or "").startswith(pxe_net.subnet)
        subprocess.run(["ip", "-n", pxe_net.client, "addr", "add", f"{address}/24", "dev",
                        CLIENT_IF], check=True, timeout=10)
        def fetch(path: str) -> str:
            return subprocess.run(
                ["ip", "netns", "exec", pxe_net.client, "busybox", "wget", "-q", "-O", "-",
                 f"http://{pxe_net.subnet}.1:5050{path}"],
                capture_output=True, text=True, timeout=10).stdout

        chain = fetch("/boot.ipxe")
        assert f"chain http://{pxe_net.subnet}.1:5050/boot/${{netX/mac:hexhyp}}.ipxe" in chain
        script = fetch(f"/boot/{UNKNOWN.replace(':', '-')}.ipxe")
        assert f"kernel http://{pxe_net.subnet}.1:5050/pxe/vmlinuz " in script
        assert "callback_token" not in script  # not under introspection
    finally:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(15)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()
    assert serve.returncode == 0, log.read_text()
    left = subprocess.run(["ip", "netns", "pids", pxe_net.server], capture_output=True,
                          text=True, timeout=10).stdout.split()
    assert left == [], f"left running in the namespace: {left}"
    assert "PXE: " in log.read_text()
