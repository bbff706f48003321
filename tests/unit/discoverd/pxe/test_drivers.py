"""PXE filter drivers are plugins: `[pxe_filter] driver` names an entry point of the
`ironsight.pxe_filters` group, and each driver builds itself from the configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from ironsight.common import config, plugins
from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.pxe.filter import FilterPlace, NoopDriver, load_driver
from ironsight.discoverd.pxe.hostsdir import HostsDirDriver
from ironsight.discoverd.pxe.iptables import IptablesDriver


def conf(**pxe_filter: str) -> config.Config:
    return config.load(overrides={"pxe_filter": pxe_filter, "pxe": {"interface": "br-pxe"}})


def test_the_three_drivers_are_registered_entry_points() -> None:
    assert {"dnsmasq", "iptables", "noop"} <= set(plugins.names(plugins.PXE_FILTERS))


def test_dnsmasq_driver_keeps_its_files_in_the_pxe_directory(tmp_path: Path) -> None:
    driver = load_driver(conf(driver="dnsmasq"), FilterPlace(tmp_path))
    assert isinstance(driver, HostsDirDriver)
    assert driver.directory == tmp_path / "hosts"


def test_iptables_driver_takes_the_interface_and_the_command_prefix(tmp_path: Path) -> None:
    driver = load_driver(conf(driver="iptables", deny_unknown_macs="true"),
                         FilterPlace(tmp_path, ("ip", "netns", "exec", "lab")))
    assert isinstance(driver, IptablesDriver)
    assert driver.deny_unknown
    assert driver.programs == ("iptables", "iptables-restore")
    assert "br-pxe" in driver._hook
    assert driver._iptables[:4] == ["ip", "netns", "exec", "lab"]


def test_noop_driver_takes_deny_unknown_macs(tmp_path: Path) -> None:
    driver = load_driver(conf(driver="noop", deny_unknown_macs="true"), FilterPlace(tmp_path))
    assert isinstance(driver, NoopDriver) and driver.deny_unknown


def test_an_unknown_driver_is_refused_by_the_configuration_naming_the_installed_ones() -> None:
    with pytest.raises(ConfigError, match=r"\[pxe_filter\] driver: 'nft' is not one of "
                                          r"dnsmasq, iptables, noop"):
        conf(driver="nft")


def test_an_entry_point_that_is_not_a_filter_driver_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins, "load", lambda group, name, option: dict)
    with pytest.raises(ConfigError, match=r"\[pxe_filter\] driver: 'noop' is not a "
                                          "FilterDriver"):
        load_driver(conf(driver="noop"), FilterPlace(tmp_path))
