"""What the two IPMI drivers (ipmitool and pyghmi) share: driver_info and retries."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from ironsight.baremetal import fields
from ironsight.baremetal.drivers.base import NodeContext, as_port, as_str, require
from ironsight.common.config import Config
from ironsight.common.exceptions import DriverError, InvalidParameterValue

LOG = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_IPMI_PORT = 623
IPMI_PROPERTIES: Mapping[str, str] = {
    "ipmi_address": "Required. IP address or host name of the node's BMC.",
    "ipmi_port": f"Optional. UDP port of the BMC. Default: {DEFAULT_IPMI_PORT}.",
    "ipmi_username": "Optional. IPMI user name. Default: the anonymous (null) user.",
    "ipmi_password": "Optional. IPMI password. Secret: masked in the API, never logged.",
}
IPMI_SECRET_PROPERTIES = frozenset({"ipmi_password"})


@dataclass(frozen=True)
class IpmiInfo:
    """How to reach a BMC. `str()` names it in messages; the password never shows."""

    address: str
    port: int = DEFAULT_IPMI_PORT
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    def __str__(self) -> str:
        return f"{self.address}:{self.port}"


def parse_ipmi_info(node: NodeContext) -> IpmiInfo:
    """Validate the ipmi_* fields of driver_info; errors name the field."""
    info = node.driver_info
    address = fields.host_address("driver_info", "ipmi_address", require(info, "ipmi_address"))
    password = info.get("ipmi_password")
    if password is not None and not isinstance(password, str):
        # no value in this message: it is a secret
        raise InvalidParameterValue("driver_info field 'ipmi_password' must be a string")
    return IpmiInfo(address=address, port=as_port(info, "ipmi_port", DEFAULT_IPMI_PORT),
                    username=as_str(info, "ipmi_username") or None, password=password or None)


async def with_retries(conf: Config, what: str, info: IpmiInfo,
                       call: Callable[[], Awaitable[T]]) -> T:
    """Run `call`, repeating it `[ipmi] retries` times after a DriverError: a UDP packet
    lost on the way to a BMC must not fail an operation."""
    attempts = conf.ipmi.retries + 1
    attempt = 1
    while True:
        try:
            return await call()
        except DriverError as exc:
            if attempt >= attempts:
                raise
            LOG.warning("%s on BMC %s failed (attempt %d of %d), retrying: %s",
                        what, info, attempt, attempts, exc)
        await asyncio.sleep(conf.ipmi.retry_interval)
        attempt += 1
