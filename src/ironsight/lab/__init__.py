"""The QEMU lab: real VMs that PXE-boot the discovery ramdisk, behind virtual BMCs.

Where things run (the design choice): everything the VMs talk to lives in the lab's network
namespace, the root namespace only gets published ports.

* Inside the namespace: the bridge and taps, the QEMU processes (started through
  `ip netns exec`, next to their taps), and `ironsight serve` (also `ip netns exec`) with
  discoverd's API on the bridge address (the VMs' callback and boot files) and the
  bare-metal API on the namespace's loopback, and discoverd's dnsmasq bound to the bridge.
  The virtual BMCs listen on the namespace's 127.0.0.1, which is the `ipmi_address` the
  nodes are enrolled with: the service's ipmitool and pyghmi run inside with it.
* In the root namespace: one lab daemon (`python -m ironsight.lab.daemon DIR`) that runs
  the BMCs (their sockets created inside the namespace) and the QEMU machines they drive,
  publishes the bare-metal and discoverd APIs on 127.0.0.1 through sockets it connects from
  inside the namespace, and also answers IPMI on root 127.0.0.1 ports, so
  `ironsight node ...`, `ipmitool -H 127.0.0.1` and the tests need no `ip netns exec`.

No interface joins the namespaces and nothing is routed: a VM can reach only what listens
on the bridge address. `down` ends the daemon and the service (the service ends dnsmasq),
then every process still in the namespace, then deletes it.

Modules: `state` (what a lab is, its state directory), `lifecycle` (up, status, down),
`daemon`, `processes` (spawning and ending them), `nodes` (the lab's nodes in the API),
`manifest` (the unknown VMs' delivery manifest), `demo` (`make demo`); `network`, `qemu`,
`bmc` and `machines` are the pieces.
"""
