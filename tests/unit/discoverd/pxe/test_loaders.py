"""Which loader each class of client gets, from [pxe] and the files of this host."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ironsight.common import config
from ironsight.common.exceptions import ConfigError
from ironsight.discoverd.pxe.loaders import resolve


def pxe(tmp_path: Path, names: tuple[str, ...] = ("undionly.kpxe", "snponly.efi",
                                                   "shimx64.efi.signed", "grubnetx64.efi",
                                                   "shimaa64.efi.signed", "grubnetaa64.efi"),
        **options: str) -> config.PxeSection:
    """Loaders as Debian names them, in tmp_path; those in `names` exist."""
    for name in names:
        (tmp_path / name).write_bytes(b"loader " + name.encode())
    paths = {"undionly.kpxe": "undionly.kpxe", "snponly.efi": "snponly.efi",
             "bootx64.efi": "shimx64.efi.signed", "grubx64.efi": "grubnetx64.efi",
             "bootaa64.efi": "shimaa64.efi.signed", "grubaa64.efi": "grubnetaa64.efi"}
    values = {"loader_file_paths": ",".join(f"{served}:{tmp_path / source}"
                                            for served, source in paths.items())}
    values.update(options)
    return config.load(overrides={"pxe": values}).pxe


def test_defaults_serve_every_class_when_every_loader_is_installed(tmp_path: Path) -> None:
    setup = resolve(pxe(tmp_path))
    assert (setup.programs.bios, setup.programs.uefi_x86_64, setup.programs.uefi_http_x86_64,
            setup.programs.uefi_aarch64) == (
        "undionly.kpxe", "bootx64.efi", "snponly.efi", "bootaa64.efi")
    assert sorted(setup.files) == ["bootaa64.efi", "bootx64.efi", "grubaa64.efi",
                                   "grubx64.efi", "snponly.efi", "undionly.kpxe"]
    assert setup.files["bootx64.efi"] == tmp_path / "shimx64.efi.signed"


def test_the_shipped_defaults_name_debians_signed_shim_and_grub() -> None:
    paths = dict(item.split(":", 1) for item in config.PxeSection().loader_file_paths)
    assert paths["bootx64.efi"] == "/usr/lib/shim/shimx64.efi.signed"
    assert paths["grubx64.efi"] == "/usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed"
    assert config.PxeSection().uefi_pxe_bootfile_name == "bootx64.efi"


def test_a_missing_loader_leaves_only_its_class_unserved_and_says_what_to_install(
        tmp_path: Path) -> None:
    setup = resolve(pxe(tmp_path, ("undionly.kpxe", "snponly.efi", "shimx64.efi.signed",
                                   "grubnetx64.efi")))
    assert setup.programs.uefi_aarch64 is None
    assert setup.programs.uefi_x86_64 == "bootx64.efi"
    assert "shimaa64.efi.signed does not exist" in setup.unserved["uefi_aarch64"]
    assert "pxe_bootfile_name_by_arch bootaa64.efi" in setup.unserved["uefi_aarch64"]


def test_shim_without_the_grub_it_loads_next_is_unserved(tmp_path: Path) -> None:
    setup = resolve(pxe(tmp_path, ("undionly.kpxe", "snponly.efi", "shimx64.efi.signed")))
    assert setup.programs.uefi_x86_64 is None
    assert "loads grubx64.efi next" in setup.unserved["uefi_x86_64"]
    assert setup.programs.uefi_http_x86_64 == "snponly.efi"  # iPXE needs no GRUB


def test_debian_packages_are_named_for_missing_debian_paths() -> None:
    setup = resolve(config.load(overrides={"pxe": {
        "loader_file_paths": "bootx64.efi:/usr/lib/shim/nonexistent-shimx64.efi.signed,"
                             "grubx64.efi:/usr/lib/grub/x86_64-efi-signed/nonexistent",
        "ipxe_bootfile_name": "", "uefi_ipxe_bootfile_name": "",
        "pxe_bootfile_name_by_arch": ""}}).pxe)
    assert "install the shim-signed package" in setup.unserved["uefi_x86_64"]


def test_uefi_pxe_may_be_ipxe_instead_of_shim(tmp_path: Path) -> None:
    setup = resolve(pxe(tmp_path, uefi_pxe_bootfile_name="snponly.efi"))
    assert setup.programs.uefi_x86_64 == "snponly.efi"


def test_an_empty_name_serves_nobody_of_that_class_without_complaint(tmp_path: Path) -> None:
    setup = resolve(pxe(tmp_path, uefi_ipxe_bootfile_name=""))
    assert setup.programs.uefi_http_x86_64 is None
    assert "uefi_http_x86_64" not in setup.unserved


def test_the_deprecated_ipxe_binary_replaces_the_bios_loader(tmp_path: Path) -> None:
    own = tmp_path / "own.kpxe"
    own.write_bytes(b"mine")
    setup = resolve(pxe(tmp_path, ipxe_binary=str(own)))
    assert setup.files["undionly.kpxe"] == own


@pytest.mark.parametrize(("options", "named"), [
    ({"uefi_pxe_bootfile_name": "nosuch.efi"}, "[pxe] uefi_pxe_bootfile_name"),
    ({"ipxe_bootfile_name": "nosuch.kpxe"}, "[pxe] ipxe_bootfile_name"),
    ({"pxe_bootfile_name_by_arch": "ppc64le:core.elf"}, "[pxe] pxe_bootfile_name_by_arch"),
    ({"pxe_bootfile_name_by_arch": "aarch64"}, "[pxe] pxe_bootfile_name_by_arch"),
    ({"loader_file_paths": "../x.efi:/usr/lib/x"}, "[pxe] loader_file_paths"),
    ({"loader_file_paths": "x.efi:relative/path"}, "[pxe] loader_file_paths"),
    ({"loader_file_paths": "sub/x.efi:/usr/lib/x"}, "[pxe] loader_file_paths"),
])
def test_a_wrong_option_is_refused_naming_it(tmp_path: Path, options: dict[str, str],
                                            named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace("[", r"\[").replace("]", r"\]")):
        resolve(pxe(tmp_path, **options))


def test_log_warns_of_unserved_x86_classes_and_only_informs_of_arm64(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    setup = resolve(pxe(tmp_path, ("undionly.kpxe",)))
    with caplog.at_level(logging.INFO, logger="ironsight.discoverd.pxe.loaders"):
        setup.log()
    levels = {r.getMessage().split(" machines")[0]: r.levelno for r in caplog.records}
    assert levels["PXE: x86-64 UEFI PXE (option 93 = 7 or 9)"] == logging.WARNING
    assert levels["PXE: ARM64 UEFI PXE (option 93 = 11)"] == logging.INFO
    assert not [m for m in levels if "HTTP boot over IPv6" in m]  # by design: per machine
