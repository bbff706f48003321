"""`cpu-capabilities`: capabilities from CPU flags, by `[processing] cpu_capabilities`."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.plugins.capabilities import parse
from ironsight.discoverd.plugins.cpu_capabilities import CpuCapabilities

from ..helpers import agent_report, context


def caps(report: dict[str, Any], existing: str | None = None,
         **processing: str) -> dict[str, str] | None:
    node = {"properties": {"capabilities": existing} if existing is not None else {}}
    ctx = context(report, node=node, processing=processing)
    CpuCapabilities(ctx.conf).before_update(ctx)
    written = ctx.changes.properties.get("capabilities")
    return parse(written) if written is not None else None


def test_default_map_is_ironics() -> None:
    assert caps(agent_report(flags=("fpu", "vmx", "aes", "pse", "pdpe1gb", "smx"))) == {
        "cpu_vt": "true", "cpu_aes": "true", "cpu_hugepages": "true",
        "cpu_hugepages_1g": "true", "cpu_txt": "true"}


def test_svm_is_cpu_vt_too() -> None:
    assert caps(agent_report(flags=("svm",))) == {"cpu_vt": "true"}


def test_the_map_is_configurable() -> None:
    assert caps(agent_report(flags=("avx512f", "vmx")),
                cpu_capabilities="avx512f:cpu_avx512") == {"cpu_avx512": "true"}


def test_flags_outside_the_map_add_nothing() -> None:
    assert caps(agent_report(flags=("fpu", "sse2"))) is None


def test_no_flags_change_nothing() -> None:
    assert caps(agent_report(flags=())) is None


def test_existing_capabilities_are_kept() -> None:
    assert caps(agent_report(flags=("vmx",)), "cpu_vt:false,x:y") is None


def test_a_bad_map_entry_stops_the_service_naming_the_option() -> None:
    ctx = context(agent_report(), processing={"cpu_capabilities": "vmx"})
    with pytest.raises(ConfigError, match=r"\[processing\] cpu_capabilities: 'vmx'"):
        CpuCapabilities(ctx.conf)
