"""Microversions, negotiated by one policy per service."""

from __future__ import annotations

import pytest
from starlette.requests import Request

from ironsight.baremetal.api.base import VERSIONS as IRONIC
from ironsight.common.api.versions import VersionPolicy
from ironsight.common.exceptions import Invalid, IronsightError, NotAcceptable, RoutingError
from ironsight.discoverd.api.base import VERSIONS as INSPECTOR


def request(**headers: str) -> Request:
    return Request({"type": "http", "headers": [(k.lower().encode(), v.encode())
                                                 for k, v in headers.items()]})


def test_no_header_gets_ironics_oldest_and_the_inspectors_newest() -> None:
    assert IRONIC.negotiate(request()) == (1, 1)
    assert INSPECTOR.negotiate(request()) == (1, 18)


def test_latest_is_the_newest() -> None:
    assert IRONIC.negotiate(request(**{"X-OpenStack-Ironic-API-Version": "latest"})) == (1, 115)


def test_the_generic_header_names_the_service_type() -> None:
    generic = {"OpenStack-API-Version": "compute 2.1, baremetal-introspection 1.12"}
    assert INSPECTOR.negotiate(request(**generic)) == (1, 12)
    assert IRONIC.negotiate(request(**generic)) == (1, 1)


def test_a_malformed_version_is_ironics_framework_406() -> None:
    with pytest.raises(RoutingError) as raised:
        IRONIC.negotiate(request(**{"X-OpenStack-Ironic-API-Version": "1.x"}))
    assert raised.value.code == 406
    assert raised.value.description == \
        "Invalid value for X-OpenStack-Ironic-API-Version header"


def test_a_malformed_version_is_400_for_the_inspector() -> None:
    with pytest.raises(Invalid, match=r"Malformed API version '1\.x'"):
        INSPECTOR.negotiate(request(**{INSPECTOR.header: "1.x"}))


def test_another_major_version_is_mutually_exclusive_for_ironic() -> None:
    with pytest.raises(RoutingError) as raised:
        IRONIC.negotiate(request(**{IRONIC.header: "2.1"}))
    assert (raised.value.code, raised.value.description) == (
        406, "Mutually exclusive versions requested. Version 2.1 requested but not supported "
             "by this service. The supported version range is: [1.1, 1.115].")


def test_an_unsupported_version_is_406_with_the_range() -> None:
    with pytest.raises(NotAcceptable, match=r"supported range is 1\.0 to 1\.18"):
        INSPECTOR.negotiate(request(**{"X-OpenStack-Ironic-Inspector-API-Version": "1.99"}))


def test_answers_carry_the_range_and_the_version_spoken() -> None:
    headers = IRONIC.headers((1, 46))
    assert headers["X-OpenStack-Ironic-API-Minimum-Version"] == "1.1"
    assert headers["X-OpenStack-Ironic-API-Maximum-Version"] == "1.115"
    assert headers["OpenStack-API-Version"] == "baremetal 1.46"
    assert headers["openstack-request-id"].startswith("req-")


def test_the_inspector_sends_no_request_id() -> None:
    assert "openstack-request-id" not in INSPECTOR.headers(None)


def test_require_refuses_a_request_older_than_the_feature() -> None:
    INSPECTOR.require((1, 13), 13)
    with pytest.raises(NotAcceptable, match=r"needs API version 1\.13 or newer"):
        INSPECTOR.require((1, 12), 13)


@pytest.mark.parametrize(("policy", "status"), [(IRONIC, 406), (INSPECTOR, 400)],
                         ids=["ironic", "inspector"])
def test_an_oversized_version_is_malformed_and_not_echoed_whole(
        policy: VersionPolicy, status: int) -> None:
    raw = "1." + "9" * 5000
    with pytest.raises(IronsightError) as raised:
        policy.negotiate(request(**{policy.header: raw}))
    assert raised.value.code == status
    assert len(raised.value.message) < 400


def test_a_large_but_short_version_is_406_unsupported() -> None:
    with pytest.raises(IronsightError) as raised:
        IRONIC.negotiate(request(**{IRONIC.header: "1.999999999"}))
    assert raised.value.code == 406


@pytest.mark.parametrize("raw", ["1.1 1", "\u0661.\u0661", "1.1234567890", "+1.1"])
def test_a_version_that_is_not_plain_ascii_digits_is_malformed(raw: str) -> None:
    with pytest.raises(IronsightError, match="Invalid value for"):
        IRONIC.negotiate(request(**{IRONIC.header: raw}))
