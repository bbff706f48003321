"""The `iptables` filter driver: the design's method, a chain that DHCP requests arriving on the
provisioning interface go through before they reach dnsmasq.

Default mode: one DROP rule per denied MAC. With deny_unknown_macs: one ACCEPT rule per
allowed MAC, then DROP. Unlike the design's driver, which rebuilt the whole chain at every
sync, a change is one rule added or deleted; several changes at once are one
`iptables-restore --noflush` run. A reconcile reads the chain back (`iptables -S`), so a
flushed chain or a lost INPUT rule are repaired. The chain and its INPUT rule are removed at stop.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence

from ironsight.common.config import Config
from ironsight.discoverd.pxe.commands import run_command
from ironsight.discoverd.pxe.filter import (
    FilterDriver,
    FilterPlace,
    PxeFilterError,
    denies_unknown,
)

LOG = logging.getLogger(__name__)

CHAIN = "ironsight-pxe"

# (argv, stdin) -> (exit status, output)
Runner = Callable[[Sequence[str], str | None], Awaitable[tuple[int, str]]]


class IptablesDriver(FilterDriver):
    name = "iptables"
    programs = ("iptables", "iptables-restore")

    @classmethod
    def from_config(cls, conf: Config, place: FilterPlace) -> FilterDriver:
        return cls(conf.pxe.interface, denies_unknown(conf), prefix=place.prefix)

    def __init__(self, interface: str, deny_unknown: bool, *, chain: str = CHAIN,
                 prefix: Sequence[str] = (), runner: Runner = run_command) -> None:
        super().__init__(deny_unknown)
        self.chain = chain
        self._iptables = [*prefix, "iptables", "-w", "10"]
        self._restore = [*prefix, "iptables-restore", "--noflush"]
        self._hook = ["INPUT", "-i", interface, "-p", "udp", "--dport", "67", "-j", chain]
        # The per-MAC rule's target, and the verdict a MAC with a rule gets.
        self._target = "ACCEPT" if deny_unknown else "DROP"
        self._rule_re = re.compile(
            rf"^-A {re.escape(chain)} -m mac --mac-source (?P<mac>\S+) -j {self._target}$")
        self._run = runner

    async def start(self) -> None:
        await self._remove()
        await self._iptables_run("-N", self.chain)
        if self.deny_unknown:
            await self._iptables_run("-A", self.chain, "-j", "DROP")
        await self._iptables_run("-I", *self._hook)
        self.entries = {}

    async def stop(self) -> None:
        await self._remove()
        self.entries = {}

    async def refresh(self) -> None:
        code, out = await self._iptables_run("-S", self.chain, check=False)
        if code != 0:
            LOG.warning("iptables chain %s is gone (%s); creating it again", self.chain, out)
            await self.start()
            return
        lines = out.splitlines()
        allowed = self.deny_unknown  # the verdict a MAC with a rule has
        self.entries = {m["mac"].lower(): allowed for line in lines
                        if (m := self._rule_re.match(line.strip()))}
        if self.deny_unknown and f"-A {self.chain} -j DROP" not in lines:
            LOG.warning("iptables chain %s lost its final DROP; adding it again", self.chain)
            await self._iptables_run("-A", self.chain, "-j", "DROP")
        if (await self._iptables_run("-C", *self._hook, check=False))[0] != 0:
            LOG.warning("The INPUT rule sending DHCP to %s is gone; adding it again", self.chain)
            await self._iptables_run("-I", *self._hook)

    async def apply(self, changes: Mapping[str, bool]) -> None:
        ops = [self._op(mac, allowed) for mac, allowed in changes.items()]
        if len(ops) == 1:
            await self._one(ops[0])
        elif ops:
            script = "*filter\n" + "".join(" ".join(op) + "\n" for op in ops) + "COMMIT\n"
            code, out = await self._run(self._restore, script)
            if code != 0:  # all or nothing: redo one by one, skipping what is already done
                LOG.warning("iptables-restore failed (%s); applying %d changes one by one",
                            out, len(ops))
                for op in ops:
                    await self._one(op)
        for mac, allowed in changes.items():
            if allowed == self.deny_unknown:
                self.entries[mac] = allowed
            else:
                self.entries.pop(mac, None)

    def _op(self, mac: str, allowed: bool) -> list[str]:
        rule = ["-m", "mac", "--mac-source", mac, "-j", self._target]
        if allowed != self.deny_unknown:
            return ["-D", self.chain, *rule]
        # ACCEPT rules go before the final DROP; DROP rules' order does not matter.
        return ["-I", self.chain, "1", *rule] if self.deny_unknown else ["-A", self.chain, *rule]

    async def _one(self, op: list[str]) -> None:
        code, out = await self._iptables_run(*op, check=op[0] != "-D")
        if code != 0:  # deleting a rule that is not there: the goal is reached
            LOG.debug("iptables %s: %s", " ".join(op), out)

    async def _remove(self) -> None:
        for _ in range(10):  # one INPUT rule per earlier run that did not clean up
            if (await self._iptables_run("-D", *self._hook, check=False))[0] != 0:
                break
        await self._iptables_run("-F", self.chain, check=False)
        await self._iptables_run("-X", self.chain, check=False)

    async def _iptables_run(self, *args: str, check: bool = True) -> tuple[int, str]:
        code, out = await self._run([*self._iptables, *args], None)
        if check and code != 0:
            raise PxeFilterError(f"iptables {' '.join(args)} failed: {out}")
        return code, out
