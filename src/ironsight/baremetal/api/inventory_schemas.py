"""Bodies of the stored inventory resources, as Ironic 39 validates them; each model holds
exactly the fields a client may set (create and JSON patch alike), every error names its
field."""

from __future__ import annotations

import collections
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from ironsight.baremetal import fields
from ironsight.baremetal.api.schemas import normalize_mac
from ironsight.common.exceptions import Invalid

JsonDict = dict[str, Any]
IronicBool = Annotated[bool, BeforeValidator(fields.ironic_bool)]


def _empty_dict(value: Any) -> Any:
    return {} if value is None else value


Obj = Annotated[JsonDict, BeforeValidator(_empty_dict)]

# Ironic takes a standard trait (os-traits) or CUSTOM_*; ironsight does not ship os-traits'
# list, so it takes any upper-case trait-shaped name (docs/api.md).
TRAIT_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
# The interfaces whose steps a deploy template (deploy steps) or runbook (clean steps) names.
STEP_INTERFACES = ("vendor", "power", "management", "firmware", "deploy", "bios", "raid")
Interface = Literal["vendor", "power", "management", "firmware", "deploy", "bios", "raid"]


def check_trait(value: str) -> str:
    if not isinstance(value, str) or not TRAIT_RE.match(value) or len(value) > 255:
        # jsonschema's words, as Ironic's schema error says them: clients match "does not match"
        raise ValueError(f"{value!r} does not match '{TRAIT_RE.pattern}': a trait is CUSTOM_ "
                         "followed by upper-case letters, digits or _, or a standard trait")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChassisFields(_Strict):
    description: str | None = Field(default=None, max_length=255)
    extra: Obj = Field(default_factory=dict)


class PortgroupFields(_Strict):
    node_uuid: str
    name: str | None = None
    address: str | None = None
    mode: str | None = None
    properties: Obj = Field(default_factory=dict)
    standalone_ports_supported: IronicBool = True
    physical_network: str | None = Field(default=None, max_length=64)
    category: str | None = Field(default=None, max_length=80)
    extra: Obj = Field(default_factory=dict)

    @field_validator("address")
    @classmethod
    def _mac(cls, v: str | None) -> str | None:
        return None if v is None else normalize_mac(v)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        from ironsight.baremetal.api.schemas import _check_name
        return _check_name(v)


def _order(value: Any) -> int:
    """A step's priority or order: an integer ≥ 0, or its decimal string (as Ironic)."""
    if isinstance(value, bool):
        raise ValueError("must be an integer of at least 0")
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, int) and value >= 0:
        return value
    raise ValueError("must be an integer of at least 0")


Order = Annotated[int, BeforeValidator(_order)]


class DeployStep(_Strict):
    interface: Interface
    step: str = Field(min_length=1)
    args: JsonDict
    priority: Order


class RunbookStep(_Strict):
    interface: Interface
    step: str = Field(min_length=1)
    args: JsonDict = Field(default_factory=dict)
    order: Order


def _no_duplicate_steps(steps: list[Any]) -> None:
    """Ironic's check and words, for deploy templates and runbooks alike (an Invalid, not a
    ValueError: pydantic lets it through unwrapped)."""
    counter = collections.Counter((s.interface, s.step) for s in steps)
    dups = sorted(f"interface: {i}, step: {s}" for (i, s), n in counter.items() if n > 1)
    if dups:
        raise Invalid("Deploy template invalid: Duplicate deploy steps. A template cannot "
                      "have multiple deploy steps with the same interface and step. "
                      f"Duplicates: {'; '.join(dups)}.")


class DeployTemplateFields(_Strict):
    name: str
    steps: list[DeployStep] = Field(min_length=1)
    extra: Obj = Field(default_factory=dict)

    _trait = field_validator("name")(classmethod(lambda cls, v: check_trait(v)))

    @field_validator("steps")
    @classmethod
    def _steps(cls, v: list[DeployStep]) -> list[DeployStep]:
        _no_duplicate_steps(v)
        return v


class RunbookFields(_Strict):
    # 1.112 allows any name usable in a URL path; below, runbooks.py asks for a trait
    name: str = Field(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9\-._~]+$")
    steps: list[RunbookStep] = Field(min_length=1)
    description: str | None = Field(default=None, max_length=255)
    disable_ramdisk: IronicBool = False
    public: IronicBool = False
    owner: str | None = Field(default=None, max_length=255)
    extra: Obj = Field(default_factory=dict)

    @field_validator("steps")
    @classmethod
    def _steps(cls, v: list[RunbookStep]) -> list[RunbookStep]:
        _no_duplicate_steps(v)
        return v


ConnectorType = Literal["iqn", "ip", "mac", "wwnn", "wwpn", "port", "portgroup"]


class VolumeConnectorFields(_Strict):
    node_uuid: str
    type: ConnectorType
    connector_id: str = Field(min_length=1, max_length=255)
    extra: Obj = Field(default_factory=dict)


class VolumeTargetFields(_Strict):
    node_uuid: str
    volume_type: str = Field(min_length=1, max_length=64)
    volume_id: str = Field(min_length=1, max_length=36)
    boot_index: int = Field(ge=0, le=2**31 - 1)
    properties: Obj = Field(default_factory=dict)
    extra: Obj = Field(default_factory=dict)
