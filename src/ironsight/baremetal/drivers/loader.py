"""Load the enabled hardware types from the `ironsight.hardware_types` entry points (a
package adds its own by declaring one there)."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from typing import Any

from ironsight.baremetal.drivers.base import Driver, HardwareType
from ironsight.common import plugins
from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError, InvalidParameterValue

LOG = logging.getLogger(__name__)


class DriverSet(Mapping[str, Driver]):
    """The hardware types this conductor runs, by name, and those that refused to load with
    the reason (shown in `GET /v1/drivers` and in the error of a node that names one)."""

    def __init__(self, loaded: dict[str, Driver], refused: dict[str, str],
                 aliases: Mapping[str, str] | None = None) -> None:
        self._loaded = loaded
        self.refused = refused
        self.aliases = dict(aliases or {})
        self._secrets = {name: d.secret_properties() for name, d in loaded.items()}

    def canonical(self, name: str) -> str:
        """The hardware type an alias stands for (`fake` -> `fake-hardware`)."""
        return self.aliases.get(name, name)

    def names_of(self, name: str) -> list[str]:
        """`name` and its aliases: what nodes of that type may have as their `driver`."""
        return [name, *sorted(a for a, c in self.aliases.items() if c == name)]

    def __getitem__(self, name: str) -> Driver:
        return self._loaded[self.canonical(name)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded)

    def __len__(self) -> int:
        return len(self._loaded)

    def for_node(self, node: Mapping[str, Any]) -> Driver:
        driver = self._loaded.get(self.canonical(node["driver"]))
        if driver is None:
            why = self.refused.get(self.canonical(node["driver"]),
                                   "not enabled on this conductor")
            raise InvalidParameterValue(
                f"No conductor service registered which supports driver {node['driver']}: {why}")
        return driver

    def secret_keys(self, name: str | None) -> frozenset[str]:
        """driver_info keys that hold secrets for this hardware type (masked in answers)."""
        return self._secrets.get(self.canonical(name or ""), frozenset())

    def every_secret_key(self) -> frozenset[str]:
        """driver_info keys that any hardware type here holds secrets in (encrypted at
        rest whatever the node's driver: a node may change drivers, its fields stay)."""
        return frozenset().union(*self._secrets.values())


def available() -> dict[str, HardwareType]:
    """Every hardware type by name; an entry point whose name differs from its type's is an
    alias of it (`fake` for `fake-hardware`, Ironic's name, which clients expect)."""
    found: dict[str, HardwareType] = {}
    for ep in entry_points(group=plugins.HARDWARE_TYPES):
        hw = ep.load()
        found[ep.name] = hw
        found.setdefault(hw.name, hw)
    return found


def aliases(known: Mapping[str, HardwareType]) -> dict[str, str]:
    return {name: hw.name for name, hw in known.items() if name != hw.name}


def load_drivers(conf: Config) -> DriverSet:
    """Instantiate each enabled hardware type.

    A hardware type whose interfaces refuse to load (say, a required tool or client is
    missing) is reported, not fatal: the service runs with the others and says why.
    """
    known = available()
    alias = aliases(known)
    loaded: dict[str, Driver] = {}
    refused: dict[str, str] = {}
    for given in conf.conductor.enabled_hardware_types:
        name = alias.get(given, given)
        if name in loaded or name in refused:
            continue
        hw = known.get(name)
        if hw is None:
            raise ConfigError(f"[conductor] enabled_hardware_types: unknown hardware type "
                              f"{name!r} (available: {', '.join(sorted(known))})")
        try:
            loaded[name] = Driver.load(hw, conf)
        except Exception as exc:
            LOG.error("Hardware type %s refused to load: %s", name, exc)
            refused[name] = str(exc)
    return DriverSet(loaded, refused, alias)
