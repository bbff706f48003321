"""The power-change sequence every real power interface shares: send, then poll until the
controller reports the new state, within a deadline."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ironsight.baremetal import states
from ironsight.common.exceptions import DriverError, InvalidParameterValue, PowerStateFailure

# Seconds between two power-status polls while waiting for a power change.
POWER_POLL_INTERVAL = 1.0


def scrub(text: str, secret: str | None) -> str:
    """Remove a secret from text meant for an operator, in case a tool echoes it."""
    if secret:
        text = text.replace(secret, "***")
    return text


async def change_power_state(
    controller: str,
    target: str,
    timeout: float,
    get_state: Callable[[], Awaitable[str]],
    send: Callable[[str], Awaitable[None]],
) -> None:
    """Bring a machine to `target` and wait until its BMC reports it, within `timeout` s.

    `send` takes 'on', 'off' or 'reset'; `get_state` returns states.POWER_ON/POWER_OFF.
    A reboot resets a machine that is on and powers on one that is off. A bad target is
    InvalidParameterValue; every failure to reach it is raised as PowerStateFailure, whose
    message names the BMC or hypervisor (`controller`).
    """
    if target not in (states.POWER_ON, states.POWER_OFF, states.REBOOT):
        raise InvalidParameterValue(
            f"unsupported target power state {target!r}; expected one of "
            f"'{states.POWER_ON}', '{states.POWER_OFF}', '{states.REBOOT}'")
    expected = states.POWER_OFF if target == states.POWER_OFF else states.POWER_ON
    try:
        async with asyncio.timeout(timeout):
            if target == states.REBOOT:
                action = "reset" if await get_state() == states.POWER_ON else "on"
            else:
                action = "on" if target == states.POWER_ON else "off"
            await send(action)
            while await get_state() != expected:
                await asyncio.sleep(POWER_POLL_INTERVAL)
    except TimeoutError:
        raise PowerStateFailure(
            f"{controller} did not report '{expected}' within {timeout:g} s "
            f"(target '{target}')") from None
    except PowerStateFailure:
        raise
    except DriverError as exc:
        raise PowerStateFailure(f"setting power state '{target}' failed: {exc}") from exc
