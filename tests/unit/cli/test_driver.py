"""Unit tests of `ironsight driver list`."""

from __future__ import annotations

import json

DRIVERS = [{"name": "fake", "hosts": ["cond-1"], "type": "dynamic"},
           {"name": "pxe_ipmitool", "hosts": ["cond-1", "cond-2"], "type": "dynamic"}]


def test_driver_list_table_shows_names_and_hosts(run, api):
    api.json("GET", "/v1/drivers", {"drivers": DRIVERS})
    result = run("driver", "list")
    assert "pxe_ipmitool" in result.stdout
    assert "cond-1, cond-2" in result.stdout


def test_driver_list_json_is_the_list_of_drivers(run, api):
    api.json("GET", "/v1/drivers", {"drivers": DRIVERS})
    result = run("driver", "list", "-f", "json")
    assert json.loads(result.stdout) == DRIVERS
