"""Which role a request needs."""

from __future__ import annotations

from ironsight.common.auth.identity import Role
from ironsight.common.auth.policy import VERSION_DOCUMENTS, AccessRules, rule

RULES = AccessRules(public=(VERSION_DOCUMENTS, rule({"POST"}, r"/v1/continue")),
                    admin_only=(rule({"DELETE"}, r"/v1/nodes/[^/]+"),))


def test_version_documents_need_no_role() -> None:
    for path in ("/", "/v1", "/v1/"):
        assert RULES.required("GET", path) is None


def test_a_public_write_needs_no_role() -> None:
    assert RULES.required("POST", "/v1/continue") is None


def test_a_public_path_with_another_method_is_not_public() -> None:
    assert RULES.required("GET", "/v1/continue") is Role.READER


def test_a_read_needs_a_reader() -> None:
    assert RULES.required("GET", "/v1/nodes") is Role.READER


def test_a_write_needs_a_member() -> None:
    assert RULES.required("PATCH", "/v1/nodes/n1") is Role.MEMBER


def test_an_admin_only_write_needs_an_admin() -> None:
    assert RULES.required("DELETE", "/v1/nodes/n1") is Role.ADMIN


def test_admin_only_patterns_match_whole_paths() -> None:
    assert RULES.required("DELETE", "/v1/nodes/n1/maintenance") is Role.MEMBER


def test_roles_are_ordered() -> None:
    assert Role.READER < Role.MEMBER < Role.ADMIN


def test_a_member_only_read_needs_a_member() -> None:
    rules = AccessRules(member_only=(rule({"GET"}, r"/v1/nodes/[^/]+/validate"),))
    assert rules.required("GET", "/v1/nodes/n1/validate") is Role.MEMBER
    assert rules.required("GET", "/v1/nodes/n1") is Role.READER


def test_a_write_that_only_reads_needs_a_reader() -> None:
    rules = AccessRules(read_only=(rule({"POST"}, r"/v1/fleet/query"),))
    assert rules.required("POST", "/v1/fleet/query") is Role.READER
    assert rules.required("POST", "/v1/fleet/other") is Role.MEMBER
