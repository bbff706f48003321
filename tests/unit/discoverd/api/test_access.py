"""What discoverd's API leaves open: only what booting nodes need."""

from __future__ import annotations

import pytest

from ironsight.common.auth.identity import Role
from ironsight.discoverd.api.app import ACCESS


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/"), ("GET", "/v1"), ("POST", "/v1/continue"), ("GET", "/boot.ipxe"),
    ("GET", "/boot/52-54-00-12-34-56.ipxe"), ("GET", "/pxe/vmlinuz"),
    ("HEAD", "/pxe/initramfs")])
def test_what_booting_nodes_need_is_open(method: str, path: str) -> None:
    assert ACCESS.required(method, path) is None


@pytest.mark.parametrize(("method", "path", "role"), [
    ("GET", "/v1/introspection", Role.READER),
    ("POST", "/v1/introspection/n1", Role.MEMBER),
    ("POST", "/v1/introspection/n1/abort", Role.MEMBER),
    ("GET", "/v1/introspection/n1/data", Role.READER),
    ("GET", "/metrics", Role.READER),
    ("GET", "/boot/../v1/introspection", Role.READER),
    ("POST", "/boot.ipxe", Role.MEMBER)])
def test_everything_else_needs_a_role(method: str, path: str, role: Role) -> None:
    assert ACCESS.required(method, path) is role


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/v1/rules"), ("DELETE", "/v1/rules"), ("DELETE", "/v1/rules/u1"),
    ("POST", "/v1/inspection_rules"), ("PATCH", "/v1/inspection_rules/u1"),
    ("DELETE", "/v1/inspection_rules/u1"), ("DELETE", "/v1/inspection_rules"),
    ("POST", "/v1/inspection_rules/dry_run")])
def test_writing_inspection_rules_needs_an_admin(method: str, path: str) -> None:
    assert ACCESS.required(method, path) is Role.ADMIN


@pytest.mark.parametrize("path", ["/v1/rules", "/v1/rules/u1", "/v1/inspection_rules",
                                  "/v1/inspection_rules/u1"])
def test_reading_inspection_rules_needs_a_reader(path: str) -> None:
    assert ACCESS.required("GET", path) is Role.READER
