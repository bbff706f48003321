"""The fleet table's view, as it lives in the URL (so that a view can be shared): filters,
sort, page and columns. Every filter becomes a clause of one CEL expression over the node
document (docs/fleet.md), run by discoverd's fleet index: the simple fields and the
operator's own hardware expression are one query."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from ironsight.baremetal import states
from ironsight.common.cel import CelError, compile_expression

# column name -> (heading, the document's dotted field)
COLUMNS: dict[str, tuple[str, str]] = {
    "name": ("Name", "name"),
    "uuid": ("UUID", "uuid"),
    "provision_state": ("State", "provision_state"),
    "power_state": ("Power", "power_state"),
    "maintenance": ("Maint.", "maintenance"),
    "driver": ("Driver", "driver"),
    "owner": ("Owner", "owner"),
    "resource_class": ("Class", "resource_class"),
    "traits": ("Traits", "traits"),
    "vendor": ("Vendor", "hardware.vendor"),
    "product": ("Product", "hardware.product"),
    "cpus": ("CPUs", "hardware.cpu_count"),
    "memory": ("Memory GiB", "hardware.memory_gib"),
    "disks": ("Disk GB", "hardware.disk_total_gb"),
    "gpus": ("GPUs", "hardware.gpu_count"),
    "nic_speed": ("Fastest NIC Mb/s", "hardware.max_nic_speed_mbps"),
    "serial": ("Serial", "hardware.serial"),
    "inspected_at": ("Inspected", "inspected_at"),
    "last_error": ("Last error", "last_error"),
}
DEFAULT_COLUMNS = ("name", "provision_state", "power_state", "maintenance", "driver",
                   "vendor", "product", "cpus", "memory")
PER_PAGE = (25, 50, 100, 250)
MAX_WHERE = 4096
_DIGITS = re.compile(r"^[0-9]{1,12}$")
_NAME = re.compile(r"^[A-Za-z0-9_.:@+-]{1,255}$")  # driver, owner and trait values
# every provision state a node can be in (the state machine's)
STATES = tuple(sorted({s for pair in states.TRANSITIONS.items()
                       for s in (pair[0][0], pair[1])}))


class FilterError(ValueError):
    """A parameter of the view that cannot be used: the message names it."""


@dataclass(frozen=True)
class View:
    state: str = ""
    driver: str = ""
    maintenance: str = ""  # "", "yes", "no"
    trait: str = ""
    owner: str = ""
    vendor: str = ""  # hardware.vendor contains (case-sensitive, as CEL's contains)
    min_memory_gib: int | None = None
    min_cpus: int | None = None
    min_gpus: int | None = None
    where: str = ""  # the operator's own CEL
    sort: str = "name"
    desc: bool = False
    page: int = 1
    per_page: int = 50
    columns: tuple[str, ...] = DEFAULT_COLUMNS
    errors: tuple[str, ...] = field(default=(), compare=False)
    # a user acting for a project sees the nodes it owns: the fleet is hardware, and a
    # node's inventory is its owner's to read (Ironic's baremetal:node:inventory:get)
    project: str | None = None

    @property
    def filtered(self) -> bool:
        return self.expression() != "true"

    def expression(self) -> str:
        """The whole filter as one CEL expression."""
        clauses: list[str] = []
        if self.project is not None:
            clauses.append(f"owner == {_string(self.project)}")
        if self.state:
            clauses.append(f"provision_state == {_string(self.state)}")
        if self.driver:
            clauses.append(f"driver == {_string(self.driver)}")
        if self.maintenance:
            clauses.append(f"maintenance == {'true' if self.maintenance == 'yes' else 'false'}")
        if self.trait:
            clauses.append(f"{_string(self.trait)} in traits")
        if self.owner:
            clauses.append(f"owner == {_string(self.owner)}")
        if self.vendor:
            clauses.append(f"{_known('hardware.vendor')} && hardware.vendor.contains("
                           f"{_string(self.vendor)})")
        if self.min_memory_gib is not None:
            clauses.append(f"{_known('hardware.memory_gib')} && hardware.memory_gib >= "
                           f"{self.min_memory_gib}.0")
        if self.min_cpus is not None:
            clauses.append(f"{_known('hardware.cpu_count')} && "
                           f"hardware.cpu_count >= {self.min_cpus}")
        if self.min_gpus is not None:
            clauses.append(f"{_known('hardware.gpu_count')} && "
                           f"hardware.gpu_count >= {self.min_gpus}")
        if self.where.strip():
            clauses.append(f"({self.where.strip()})")
        return " && ".join(clauses) or "true"

    def params(self, **changes: Any) -> dict[str, str]:
        """The view's query parameters (defaults left out), with `changes` applied."""
        view = replace(self, **changes) if changes else self
        out: dict[str, str] = {}
        for name in ("state", "driver", "maintenance", "trait", "owner", "vendor", "where"):
            if getattr(view, name):
                out[name] = getattr(view, name)
        for name in ("min_memory_gib", "min_cpus", "min_gpus"):
            if getattr(view, name) is not None:
                out[name] = str(getattr(view, name))
        if view.sort != "name":
            out["sort"] = view.sort
        if view.desc:
            out["desc"] = "1"
        if view.page != 1:
            out["page"] = str(view.page)
        if view.per_page != 50:
            out["per_page"] = str(view.per_page)
        if view.columns != DEFAULT_COLUMNS:
            out["columns"] = ",".join(view.columns)
        return out

    def url(self, **changes: Any) -> str:
        query = urlencode(self.params(**changes))
        return f"?{query}" if query else "?"

    def filter_params(self) -> dict[str, str]:
        """Only what selects nodes (what a bulk action over "all that match" carries)."""
        return {k: v for k, v in self.params(page=1).items()
                if k not in ("sort", "desc", "per_page", "columns")}


def _known(name: str) -> str:
    """The field is there and not null: nodes never inspected simply do not match."""
    return f"has({name}) && {name} != null"


def _string(value: str) -> str:
    """A CEL string literal (JSON's escapes are CEL's)."""
    return json.dumps(value)


def _int(params: Mapping[str, str], name: str, errors: list[str], *, low: int = 0,
         high: int = 10**7) -> int | None:
    raw = params.get(name, "").strip()
    if not raw:
        return None
    # ASCII digits only (str.isdigit takes "²", which int() does not), and few enough of
    # them for int() (it refuses over 4,300 digits)
    if not _DIGITS.match(raw) or not low <= int(raw) <= high:
        errors.append(f"{name}: {raw[:80]!r} is not a whole number from {low} to {high}")
        return None
    return int(raw)


def _name(params: Mapping[str, str], name: str, errors: list[str]) -> str:
    raw = params.get(name, "").strip()
    if raw and not _NAME.match(raw):
        errors.append(f"{name}: {raw[:80]!r} has characters no {name} has")
        return ""
    return raw


def parse(params: Mapping[str, str], project: str | None = None) -> View:
    """The view of a request's query; what cannot be used is dropped and named in
    `errors` (the page shows them beside the form)."""
    errors: list[str] = []
    state = params.get("state", "").strip()
    if state and state not in STATES:
        errors.append(f"state: {state!r} is not a provision state")
        state = ""
    maintenance = params.get("maintenance", "")
    if maintenance not in ("", "yes", "no"):
        errors.append(f"maintenance: {maintenance[:20]!r} is not yes or no")
        maintenance = ""
    vendor = params.get("vendor", "").strip()[:255]
    where = params.get("where", "").strip()
    if len(where) > MAX_WHERE:
        errors.append(f"where: the expression is longer than {MAX_WHERE} characters")
        where = ""
    if project is not None and where:
        # the project's clause is ANDed with the user's expression: one that is not a whole
        # expression on its own (`x) || (true`) would escape it
        try:
            compile_expression(where)
        except CelError as exc:
            errors.append(f"where: {exc}")
            where = ""
    sort = params.get("sort", "name")
    if sort not in COLUMNS:
        errors.append(f"sort: {sort[:40]!r} is not a column")
        sort = "name"
    per_page = _int(params, "per_page", errors, low=1, high=max(PER_PAGE)) or 50
    columns = tuple(c for c in params.get("columns", "").split(",") if c)
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown:
        errors.append(f"columns: {', '.join(unknown)[:80]} not known")
    columns = tuple(dict.fromkeys(c for c in columns if c in COLUMNS)) or DEFAULT_COLUMNS
    return View(state=state, driver=_name(params, "driver", errors),
                maintenance=maintenance, trait=_name(params, "trait", errors),
                owner=_name(params, "owner", errors), vendor=vendor,
                min_memory_gib=_int(params, "min_memory_gib", errors),
                min_cpus=_int(params, "min_cpus", errors),
                min_gpus=_int(params, "min_gpus", errors), where=where, sort=sort,
                desc=params.get("desc", "") in ("1", "true", "yes"),
                page=_int(params, "page", errors, low=1) or 1, per_page=per_page,
                columns=columns, errors=tuple(errors), project=project)
