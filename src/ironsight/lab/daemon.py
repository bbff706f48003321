"""The lab daemon: the VMs' virtual BMCs, the QEMU machines they drive, the published ports.

`ironsight lab up` starts it as `python -m ironsight.lab.daemon STATE_DIR` in the root
namespace, where the BMCs' sockets and the port forwards are created from inside the lab's
namespace, so that nothing needs `ip netns exec` to reach the lab: the service reaches the
BMCs on the namespace's 127.0.0.1, and operators, tests and ipmitool reach the APIs and the
BMCs on root 127.0.0.1. It also plays the switch's LLDP agent: a frame per VM tap every
second, naming the tap as the port (`ironsight.lab.lldp`). It writes `daemon.json` once
ready and powers every VM off on SIGTERM.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from ironsight.common import logs
from ironsight.lab import lldp, network
from ironsight.lab.bmc import BmcServer, VirtualBmc
from ironsight.lab.network import PortForward
from ironsight.lab.qemu import QemuMachine
from ironsight.lab.state import (
    DAEMON_FILE,
    NS_API_PORT,
    NS_DISCOVERD_PORT,
    Lab,
    LabError,
    LabVm,
    write_json,
)

LOG = logging.getLogger(__name__)


def run_daemon(state_dir: Path) -> int:
    """Serve the lab's BMCs and published ports until SIGTERM, then power every VM off."""
    logs.setup()
    lab = Lab(state_dir)
    net = lab.network
    user = str(lab.state["bmc_user"])
    password = lab.password_file.read_text().rstrip("\n")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    behind_bmcs = [vm for vm in lab.vms if not vm.under_libvirt]  # libvirt's: hypervisor.py
    machines = {vm.spec.name: QemuMachine(vm.spec, lab.files(vm.spec.name), prefix=net.prefix)
                for vm in behind_bmcs}
    bmcs: list[VirtualBmc] = []
    forwards: list[PortForward] = []
    server: BmcServer | None = None
    sender: lldp.Sender | None = None
    try:
        with network.entered(net.namespace):
            for vm in behind_bmcs:
                bmcs.append(VirtualBmc(machines[vm.spec.name], user, password,
                                       address="127.0.0.1", port=vm.bmc_port,
                                       name=f"{vm.spec.name}-bmc", **_identity(vm)))
        root_ports = {}
        same = bool(lab.state.get("bmc_same_ports", True))
        for vm in behind_bmcs:  # the same BMC, reachable from the root namespace
            bmc = _root_bmc(machines[vm.spec.name], vm, user, password, same)
            bmcs.append(bmc)
            root_ports[vm.spec.name] = bmc.port
        forwards.append(_publish(net.namespace, ("127.0.0.1", NS_API_PORT),
                                 int(lab.state.get("api_port_wanted", 0))))
        forwards.append(_publish(net.namespace, ("127.0.0.1", NS_DISCOVERD_PORT),
                                 int(lab.state.get("discoverd_port_wanted", 0))))
        server = BmcServer(bmcs).start()
        sender = lldp.Sender(net.namespace, lldp.ports(
            net.bridge_mac, [vm.spec.tap for vm in lab.vms])).start()
        write_json(lab.state_dir / DAEMON_FILE, {
            "pid": os.getpid(), "api_port": forwards[0].address[1],
            "discoverd_port": forwards[1].address[1], "bmc_root_ports": root_ports})
        LOG.info("lab daemon ready: %d BMCs in namespace %s on 127.0.0.1:%s, API on %s, "
                 "discoverd on %s", len(machines), net.namespace,
                 ",".join(str(vm.bmc_port) for vm in behind_bmcs),
                 forwards[0].address, forwards[1].address)
        while not stop.wait(1.0):
            pass
        LOG.info("stopping: powering the VMs off")
    finally:
        if sender is not None:
            sender.close()
        _power_all_off(machines.values())
        if server is not None:
            server.stop()
        else:
            for bmc in bmcs:
                bmc.close()
        for forward in forwards:
            forward.close()
    return 0


def _identity(vm: LabVm) -> dict[str, str]:
    """What the VM's BMC says it is: its SMBIOS system UUID (Get System GUID) and serial
    (FRU 0), as a real server's BMC does; discovery's BMC check compares them."""
    return {"system_uuid": vm.spec.system_uuid, "serial": vm.spec.system_serial}


def _root_bmc(machine: QemuMachine, vm: LabVm, user: str, password: str,
              same: bool) -> VirtualBmc:
    """On the same port number as inside when wanted and free, else on any free port."""
    for port in (vm.bmc_port, 0) if same else (0,):
        try:
            return VirtualBmc(machine, user, password, address="127.0.0.1", port=port,
                              name=f"{vm.spec.name}-bmc", **_identity(vm))
        except OSError:
            continue
    raise LabError(f"no UDP port for {vm.spec.name}'s BMC")  # port 0 cannot fail


def _publish(namespace: str, target: tuple[str, int], port: int) -> PortForward:
    try:
        return PortForward(namespace, target, ("127.0.0.1", port)).start()
    except OSError as exc:
        raise LabError(f"cannot publish {target[0]}:{target[1]} on 127.0.0.1:{port}: "
                       f"{exc.strerror} (another service there? choose another port)") from None


def _power_all_off(machines: Iterable[QemuMachine]) -> None:
    threads = [threading.Thread(target=_power_off_quietly, args=(m,)) for m in machines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15)


def _power_off_quietly(machine: QemuMachine) -> None:
    try:
        machine.power_off()
    except Exception:
        LOG.exception("%s: power off failed; killing QEMU", machine.name)
        machine.kill()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 1:
        return run_daemon(Path(args[0]))
    print("usage: python -m ironsight.lab.daemon STATE_DIR  (started by `ironsight lab up`)",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
