"""A node's target RAID configuration (`PUT /v1/nodes/{node}/states/raid`, API 1.12),
checked as Ironic checks it (its raid_config_schema.json, then one root volume at most), so
that clients get the 400s they expect. The fake RAID interface stores it; nothing builds the
volumes (ironsight runs no cleaning steps)."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

from ironsight.common.exceptions import Invalid, NotFound

RaidLevel = Literal["JBOD", "0", "1", "2", "5", "6", "1+0", "5+0", "6+0"]
RAID_LEVELS: tuple[str, ...] = get_args(RaidLevel)
# The RAID interface that takes a target configuration (fake-hardware's default)
STORING_INTERFACE = "fake"
_PREFIX = "RAID config validation error: "


class _LogicalDisk(BaseModel):
    """One logical disk; the descriptions are what `GET /v1/drivers/{driver}/raid/
    logical_disk_properties` answers."""

    model_config = ConfigDict(extra="forbid", strict=True)

    raid_level: RaidLevel = Field(description=(
        f"RAID level of the logical disk: one of {', '.join(RAID_LEVELS)}. Required."))
    size_gb: PositiveInt | Literal["MAX"] = Field(description=(
        "Size in GiB (an integer > 0), or 'MAX' for the space left. Required."))
    volume_name: str | None = Field(default=None, description=(
        "Name of the volume; generated when not given. Optional."))
    is_root_volume: bool | None = Field(default=None, description=(
        "Whether the node boots from this disk (one root volume at most). Optional."))
    share_physical_disks: bool | None = Field(default=None, description=(
        "Whether other logical disks may use the same physical disks. Optional."))
    disk_type: Literal["hdd", "ssd"] | None = Field(default=None, description=(
        "Kind of physical disk wanted: 'hdd' or 'ssd'. Optional."))
    interface_type: Literal["sata", "scsi", "sas"] | None = Field(default=None, description=(
        "Interface of the physical disks wanted: 'sata', 'scsi' or 'sas'. Optional."))
    number_of_physical_disks: PositiveInt | None = Field(default=None, description=(
        "How many physical disks to use; the RAID level's minimum when not given. "
        "Optional."))
    controller: str | None = Field(default=None, description=(
        "The RAID controller to use; chosen by the driver when not given. Optional."))
    physical_disks: list[str] | None = Field(default=None, description=(
        "The physical disks to use (needs controller). Optional."))


class _RaidConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    logical_disks: list[_LogicalDisk] = Field(min_length=1)


# Each logical disk property and what it means (Ironic's logical_disk_properties answer).
LOGICAL_DISK_PROPERTIES: dict[str, str] = {
    name: field.description or "" for name, field in _LogicalDisk.model_fields.items()}


def _message(error: Any) -> str:
    """pydantic's first error, in the terms of the request: 'logical_disks[0].size_gb: ...'
    (its location also names the branch of a union it tried, which is no field)."""
    loc = list(error["loc"])
    if error["type"] == "extra_forbidden":  # the unknown key is the last part: keep it
        known, extra = loc[:-1], [loc[-1]]
    else:
        known, extra = loc, []
    where = ""
    for part in known:
        if isinstance(part, int):
            where += f"[{part}]"
        elif part in _LogicalDisk.model_fields or part in _RaidConfig.model_fields:
            where += f".{part}" if where else part
    for part in extra:
        where += f".{part}" if where else str(part)
    message = str(error["msg"])
    if where.endswith(".size_gb") and error["type"] != "missing":
        message = "should be an integer greater than 0, or 'MAX'"
    return f"{where or 'the configuration'}: {message}"


def check_target(config: Any) -> dict[str, Any]:
    """The configuration to store ({} unsets it), or Invalid naming the first bad field."""
    if not isinstance(config, dict):
        raise Invalid(_PREFIX + "the target RAID configuration must be a JSON object")
    if not config:
        return {}
    disks = config.get("logical_disks")
    for i, disk in enumerate(disks if isinstance(disks, list) else []):
        for key, value in (disk.items() if isinstance(disk, dict) else ()):
            if value is None:  # the schema has no nulls; pydantic's defaults would take them
                raise Invalid(f"{_PREFIX}logical_disks[{i}].{key}: None is not allowed")
    try:
        parsed = _RaidConfig.model_validate(config)
    except ValidationError as exc:
        raise Invalid(_PREFIX + _message(exc.errors()[0])) from None
    for i, disk in enumerate(parsed.logical_disks):
        if disk.physical_disks is not None and disk.controller is None:
            raise Invalid(f"{_PREFIX}logical_disks[{i}]: physical_disks needs controller")
    roots = sum(1 for disk in parsed.logical_disks if disk.is_root_volume)
    if roots > 1:
        raise Invalid(f"Raid config cannot have more than one root volume. {roots} root "
                      "volumes were specified")
    return config


def unsupported(driver: str, detail: str = "") -> NotFound:
    """Ironic's answer where the RAID interface takes no configuration (a 404 there)."""
    return NotFound(f"Driver {driver} does not support raid (disabled or not implemented)"
                    f"{detail}.")
