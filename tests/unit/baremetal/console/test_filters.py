"""The fleet table's view: what the URL holds, and the one CEL expression it becomes."""

from __future__ import annotations

from ironsight.baremetal.console.filters import DEFAULT_COLUMNS, View, parse
from ironsight.common.cel import compile as cel_compile
from ironsight.common.dotted import pick

DOC = {"uuid": "u1", "name": "n1", "provision_state": "manageable", "driver": "fake-hardware",
       "maintenance": False, "traits": ["CUSTOM_GPU"], "owner": "team-a",
       "hardware": {"vendor": "Dell Inc.", "memory_gib": 512.0, "cpu_count": 64,
                    "gpu_count": 4}}
UNINSPECTED = {"uuid": "u2", "name": "n2", "provision_state": "enroll", "driver": "fake-hardware",
               "maintenance": True, "traits": [], "owner": None, "hardware": {}}


def matches(view: View, doc: dict) -> bool:  # type: ignore[type-arg]
    return bool(cel_compile(view.expression()).matches(doc))


def test_no_filter_is_every_node() -> None:
    view = parse({})
    assert view.expression() == "true" and not view.filtered
    assert view.columns == DEFAULT_COLUMNS


def test_simple_fields_and_a_hardware_expression_are_one_query() -> None:
    view = parse({"state": "manageable", "driver": "fake-hardware", "maintenance": "no",
                  "trait": "CUSTOM_GPU", "owner": "team-a", "vendor": "Dell",
                  "min_memory_gib": "256", "min_cpus": "32", "min_gpus": "2",
                  "where": "hardware.gpu_count == 4"})
    assert view.errors == ()
    assert matches(view, DOC)
    assert not matches(view, UNINSPECTED)


def test_a_node_never_inspected_does_not_match_a_hardware_filter_and_is_no_error() -> None:
    view = parse({"min_memory_gib": "1"})
    assert not matches(view, UNINSPECTED)


def test_maintenance_yes_finds_nodes_in_maintenance() -> None:
    assert matches(parse({"maintenance": "yes"}), UNINSPECTED)
    assert not matches(parse({"maintenance": "yes"}), DOC)


def test_quotes_in_a_value_cannot_change_the_query() -> None:
    view = parse({"vendor": 'x") || true || ("'})
    assert not matches(view, DOC)


def test_bad_parameters_are_dropped_and_named() -> None:
    view = parse({"state": "flying", "maintenance": "maybe", "min_cpus": "-3",
                  "sort": "password", "columns": "name,nonsense", "driver": "a b"})
    assert view.expression() == "true"
    named = " ".join(view.errors)
    for name in ("state", "maintenance", "min_cpus", "sort", "columns", "driver"):
        assert f"{name}:" in named
    assert view.columns == ("name",)


def test_the_url_holds_the_whole_view_and_reads_back_the_same() -> None:
    view = parse({"state": "inspect wait", "where": "hardware.cpu_count > 2", "sort": "memory",
                  "desc": "1", "page": "3", "per_page": "100", "columns": "name,memory"})
    assert parse(view.params()) == view
    assert "state=inspect+wait" in view.url()


def test_a_bulk_action_carries_only_what_selects_nodes() -> None:
    view = parse({"trait": "CUSTOM_A", "sort": "memory", "page": "4", "columns": "name"})
    assert view.filter_params() == {"trait": "CUSTOM_A"}


def test_pick_reads_dotted_fields_and_none_where_absent() -> None:
    assert pick(DOC, "hardware.cpu_count") == 64
    assert pick(UNINSPECTED, "hardware.cpu_count") is None
    assert pick(DOC, "name.first") is None


def test_a_project_users_view_finds_only_the_nodes_its_project_owns() -> None:
    assert matches(parse({}, project="team-a"), DOC)
    assert not matches(parse({}, project="team-b"), DOC)
    assert not matches(parse({"owner": "team-a"}, project="team-b"), DOC)


def test_a_project_users_expression_cannot_escape_the_projects_clause() -> None:
    view = parse({"where": "false) || (true"}, project="team-b")
    assert not matches(view, DOC)
    assert view.where == "" and any(e.startswith("where:") for e in view.errors)


def test_a_project_users_whole_expression_is_kept() -> None:
    view = parse({"where": "hardware.gpu_count == 4 || false"}, project="team-a")
    assert view.errors == () and matches(view, DOC)
    assert not matches(parse({"where": "hardware.gpu_count == 4"}, project="team-b"), DOC)


def test_a_number_too_long_or_not_in_ascii_digits_is_named_not_a_crash() -> None:
    for raw in ("9" * 5000, "²", "١٢"):
        view = parse({"min_cpus": raw, "page": raw})
        assert view.min_cpus is None and view.page == 1
        assert any(e.startswith("min_cpus:") for e in view.errors)
