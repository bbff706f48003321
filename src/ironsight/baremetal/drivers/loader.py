"""Load the enabled hardware types from the `ironsight.hardware_types` entry points."""

from __future__ import annotations

import logging
from importlib.metadata import entry_points

from ironsight.baremetal.drivers.base import Driver, HardwareType
from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError

LOG = logging.getLogger(__name__)
GROUP = "ironsight.hardware_types"


def available() -> dict[str, HardwareType]:
    found: dict[str, HardwareType] = {}
    for ep in entry_points(group=GROUP):
        found[ep.name] = ep.load()
    return found


def load_drivers(conf: Config) -> tuple[dict[str, Driver], dict[str, str]]:
    """Instantiate each enabled hardware type; return (loaded, refused-with-reason).

    A hardware type whose interfaces refuse to load (say, a required tool or client is
    missing) is reported, not fatal: the service runs with the others and says why.
    """
    known = available()
    loaded: dict[str, Driver] = {}
    refused: dict[str, str] = {}
    for name in conf.conductor.enabled_hardware_types:
        hw = known.get(name)
        if hw is None:
            raise ConfigError(f"[conductor] enabled_hardware_types: unknown hardware type "
                              f"{name!r} (available: {', '.join(sorted(known))})")
        try:
            loaded[name] = Driver(
                hw=hw, power=hw.power(conf), management=hw.management(conf),
                inspect=hw.inspect(conf) if hw.inspect is not None else None)
        except Exception as exc:
            LOG.error("Hardware type %s refused to load: %s", name, exc)
            refused[name] = str(exc)
    return loaded, refused
