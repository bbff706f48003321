from __future__ import annotations

from pathlib import Path

import pytest

from ironsight.common import config
from ironsight.common.exceptions import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ironsight.conf"
    path.write_text(text)
    return path


def test_no_file_gives_embedded_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("IRONSIGHT_STATE_DIR", str(tmp_path))
    conf = config.load()
    assert (conf.api.host, conf.api.port) == ("127.0.0.1", 6385)
    assert conf.discoverd.enabled is False
    assert conf.database_url == f"sqlite:///{tmp_path / 'ironsight.sqlite'}"


def test_state_dir_defaults_to_local_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IRONSIGHT_STATE_DIR", raising=False)
    assert config.load().state_dir == Path.home() / ".local" / "state" / "ironsight"


def test_values_are_typed(tmp_path: Path) -> None:
    conf = config.load(write(tmp_path, "[api]\nport = 7000\n[discoverd]\nenabled = yes\n"
                             "[conductor]\nenabled_hardware_types = fake, pxe_ssh\n"))
    assert conf.api.port == 7000
    assert conf.discoverd.enabled is True
    assert conf.conductor.enabled_hardware_types == ["fake", "pxe_ssh"]


def test_unknown_option_names_section_and_option(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[api\] prot: unknown option"):
        config.load(write(tmp_path, "[api]\nprot = 1\n"))


def test_unknown_section_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[apii\]: unknown section"):
        config.load(write(tmp_path, "[apii]\nport = 1\n"))


def test_bad_integer_names_option_and_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[api\] port: bad value 'abc'"):
        config.load(write(tmp_path, "[api]\nport = abc\n"))


def test_bad_boolean_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[discoverd\] enabled: bad value 'maybe'"):
        config.load(write(tmp_path, "[discoverd]\nenabled = maybe\n"))


def test_value_below_minimum_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[api\] port: 0 is below the minimum"):
        config.load(write(tmp_path, "[api]\nport = 0\n"))


def test_default_section_options_do_not_leak_into_others(tmp_path: Path) -> None:
    conf = config.load(write(tmp_path, "[DEFAULT]\nhost = c1\n[api]\nport = 7001\n"))
    assert conf.DEFAULT.host == "c1"
    assert conf.api.port == 7001


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        config.load(tmp_path / "nope.conf")


def test_sample_lists_every_option_with_default() -> None:
    text = config.sample()
    for section in ("[DEFAULT]", "[api]", "[database]", "[conductor]", "[discoverd]",
                    "[ipmi]", "[ssh]"):
        assert section in text
    assert "#port = 6385" in text
    assert "#enabled = false" in text


def test_sample_round_trips_through_the_loader(tmp_path: Path) -> None:
    uncommented = "\n".join(
        line[1:] if line.startswith("#") and "=" in line and not line.startswith("# ") else line
        for line in config.sample().splitlines()
        if "<this machine" not in line)
    conf = config.load(write(tmp_path, uncommented))
    assert conf.api.port == 6385


def test_every_option_is_documented() -> None:
    import dataclasses

    doc = (Path(__file__).parents[3] / "docs" / "configuration.md").read_text()
    for section, cls in config._section_types().items():
        assert f"## `[{section}]`" in doc
        for f in dataclasses.fields(cls):
            assert f"| `{f.name}` |" in doc, f"[{section}] {f.name} missing from the docs"
