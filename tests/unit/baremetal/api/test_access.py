"""What the bare-metal API leaves open, and what only an admin may do."""

from __future__ import annotations

import pytest

from ironsight.baremetal.api.app import ACCESS
from ironsight.common.auth.identity import Role


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/"), ("GET", "/v1"), ("POST", "/v1/continue_inspection"), ("GET", "/v1/lookup"),
    ("POST", "/v1/heartbeat/n1")])
def test_version_documents_and_ramdisk_endpoints_are_open(method: str, path: str) -> None:
    assert ACCESS.required(method, path) is None


def test_deleting_a_node_needs_an_admin() -> None:
    assert ACCESS.required("DELETE", "/v1/nodes/n1") is Role.ADMIN


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/v1/nodes"), ("PATCH", "/v1/nodes/n1"), ("PUT", "/v1/nodes/n1/states/power"),
    ("PUT", "/v1/nodes/n1/states/provision"), ("DELETE", "/v1/nodes/n1/maintenance"),
    ("POST", "/v1/ports"), ("DELETE", "/v1/ports/p1")])
def test_other_writes_need_a_member(method: str, path: str) -> None:
    assert ACCESS.required(method, path) is Role.MEMBER


def test_reads_need_a_reader() -> None:
    assert ACCESS.required("GET", "/v1/nodes/n1/history") is Role.READER


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/v1/inspection_rules"), ("PATCH", "/v1/inspection_rules/r1"),
    ("DELETE", "/v1/inspection_rules/r1"), ("DELETE", "/v1/inspection_rules")])
def test_changing_inspection_rules_needs_an_admin(method: str, path: str) -> None:
    assert ACCESS.required(method, path) is Role.ADMIN


def test_reading_inspection_rules_needs_a_reader() -> None:
    assert ACCESS.required("GET", "/v1/inspection_rules") is Role.READER


@pytest.mark.parametrize("path", [
    "/v1/nodes/n1/states/console", "/v1/nodes/n1/management/boot_device",
    "/v1/nodes/n1/management/boot_device/supported", "/v1/nodes/n1/validate"])
def test_reads_ironic_refuses_a_reader_need_a_member(path: str) -> None:
    assert ACCESS.required("GET", path) is Role.MEMBER


def test_reading_indicators_needs_a_reader() -> None:
    assert ACCESS.required("GET", "/v1/nodes/n1/management/indicators") is Role.READER


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/v1/nodes/n1/vendor_passthru/methods"), ("POST", "/v1/nodes/n1/vendor_passthru"),
    ("GET", "/v1/drivers/fake-hardware/vendor_passthru/methods"),
    ("DELETE", "/v1/drivers/fake-hardware/vendor_passthru")])
def test_vendor_passthru_needs_an_admin(method: str, path: str) -> None:
    assert ACCESS.required(method, path) is Role.ADMIN
