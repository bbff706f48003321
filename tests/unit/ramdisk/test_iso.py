"""The boot ISO's per-node parameter block, its patching at serve time and the ISO's cache
(the xorriso step faked: tests/functional/ramdisk/test_iso_boot.py builds and boots one)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ironsight.ramdisk import RamdiskError, iso

SECRET = "ironsight.token=s3cr3t-t0ken"


def quiet(_: str) -> None:
    pass


# --- params_block ---------------------------------------------------------------------------------

def test_params_block_is_exactly_params_size_bytes() -> None:
    assert len(iso.params_block("")) == iso.PARAMS_SIZE
    assert len(iso.params_block(f"console=ttyS0 {SECRET}")) == iso.PARAMS_SIZE
    assert len(iso.params_block("x" * iso.MAX_ARGS)) == iso.PARAMS_SIZE


def test_params_block_sets_the_grub_variable_then_pads_with_one_comment_line() -> None:
    block = iso.params_block(f"console=ttyS0,115200 {SECRET}")
    first, padding, rest = block.decode("ascii").split("\n")
    assert first == f"set ironsight_params='console=ttyS0,115200 {SECRET}'"
    assert padding.startswith("#") and set(padding[1:]) == {" "}
    assert rest == ""  # ends with a newline


@pytest.mark.parametrize("bad", ["'", '"', "\\", "\n", "\r", "\0", "\t", "\x7f", "é", "\u2028"])
def test_params_block_refuses_what_grub_quoting_cannot_carry_without_echoing_the_args(
        bad: str) -> None:
    with pytest.raises(ValueError, match="kernel arguments contain") as caught:
        iso.params_block(f"console=ttyS0 {SECRET}{bad}x")
    assert "s3cr3t" not in str(caught.value)


def test_params_block_refuses_args_that_do_not_fit_without_echoing_them() -> None:
    with pytest.raises(ValueError, match=f"at most {iso.MAX_ARGS}") as caught:
        iso.params_block(SECRET + "x" * iso.MAX_ARGS)
    assert "s3cr3t" not in str(caught.value)


def test_the_placeholder_is_an_empty_block_with_its_marker_in_the_comment() -> None:
    block = iso.placeholder(b"0123abcd")
    assert len(block) == iso.PARAMS_SIZE
    assert block.startswith(b"set ironsight_params=''\n# ironsight-params-placeholder 0123abcd ")
    assert block.endswith(b" \n")


# --- patched_range --------------------------------------------------------------------------------

OFFSET = 2 * iso.SECTOR
BLOCK = iso.params_block("console=ttyS0 ironsight.token=node-1")


@pytest.fixture
def image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[iso.BootIso, bytes]:
    """A small image with the placeholder at OFFSET, read in 1000-byte chunks; and what
    the node must be sent for it."""
    monkeypatch.setattr(iso, "CHUNK", 1000)
    before = bytes(range(256)) * (OFFSET // 256)
    after = b"after" * 2000
    path = tmp_path / "inspection.iso"
    path.write_bytes(before + iso.placeholder(b"m") + after)
    return iso.BootIso(path, OFFSET, iso.PARAMS_SIZE, "ramdisk"), before + BLOCK + after


def _read(boot_iso: iso.BootIso, start: int, end: int) -> bytes:
    chunks = list(iso.patched_range(boot_iso, BLOCK, start, end))
    assert all(0 < len(chunk) <= iso.CHUNK for chunk in chunks)
    return b"".join(chunks)


@pytest.mark.parametrize(("start", "end"), [
    pytest.param(0, None, id="whole"),
    pytest.param(OFFSET + 100, OFFSET + 200, id="inside-the-block"),
    pytest.param(OFFSET - 10, OFFSET + 10, id="straddling-its-start"),
    pytest.param(OFFSET + iso.PARAMS_SIZE - 10, OFFSET + iso.PARAMS_SIZE + 10,
                 id="straddling-its-end"),
    pytest.param(OFFSET - 1500, OFFSET + iso.PARAMS_SIZE + 1500, id="around-it"),
    pytest.param(0, OFFSET, id="before-it"),
    pytest.param(OFFSET + iso.PARAMS_SIZE, None, id="after-it"),
])
def test_patched_range_is_the_image_with_the_nodes_block(
        image: tuple[iso.BootIso, bytes], start: int, end: int | None) -> None:
    boot_iso, expected = image
    end = len(expected) if end is None else end
    assert _read(boot_iso, start, end) == expected[start:end]


def test_an_empty_range_yields_nothing(image: tuple[iso.BootIso, bytes]) -> None:
    boot_iso, _ = image
    assert list(iso.patched_range(boot_iso, BLOCK, OFFSET + 5, OFFSET + 5)) == []


def test_patched_range_leaves_the_shared_file_untouched(image: tuple[iso.BootIso, bytes]) -> None:
    boot_iso, expected = image
    before = boot_iso.path.read_bytes()
    _read(boot_iso, 0, len(expected))
    assert boot_iso.path.read_bytes() == before


def test_patched_range_refuses_a_block_of_another_size(image: tuple[iso.BootIso, bytes]) -> None:
    boot_iso, _ = image
    with pytest.raises(ValueError, match="not 4096"):
        list(iso.patched_range(boot_iso, BLOCK[:-1], 0, 10))


@pytest.mark.parametrize(("start", "end"), [(-1, 10), (10, 9)])
def test_patched_range_refuses_a_reversed_or_negative_range(
        image: tuple[iso.BootIso, bytes], start: int, end: int) -> None:
    boot_iso, _ = image
    with pytest.raises(ValueError, match="bad byte range"):
        list(iso.patched_range(boot_iso, BLOCK, start, end))


def test_patched_range_refuses_a_range_past_the_end(image: tuple[iso.BootIso, bytes]) -> None:
    boot_iso, expected = image
    with pytest.raises(ValueError, match="past the image"):
        list(iso.patched_range(boot_iso, BLOCK, 0, len(expected) + 1))


def test_patched_range_refuses_a_stale_offset(image: tuple[iso.BootIso, bytes]) -> None:
    boot_iso, _ = image
    stale = iso.BootIso(boot_iso.path, OFFSET - iso.SECTOR, iso.PARAMS_SIZE, "ramdisk")
    with pytest.raises(RamdiskError, match="no parameter placeholder at offset 2048"):
        list(iso.patched_range(stale, BLOCK, 0, 10))


# --- find_block -----------------------------------------------------------------------------------

def test_find_block_finds_the_placeholder_at_its_sector(tmp_path: Path) -> None:
    block = iso.placeholder(b"unique")
    path = tmp_path / "a.iso"
    path.write_bytes(b"\0" * 3 * iso.SECTOR + block + b"\0" * 100)
    assert iso.find_block(path, block) == 3 * iso.SECTOR


@pytest.mark.parametrize(("layout", "error"), [
    pytest.param(lambda b: b"\0" * iso.SECTOR, "not in the image", id="missing"),
    pytest.param(lambda b: b + b"\0" * 100 + b, "twice", id="twice"),
    pytest.param(lambda b: b"\0" * 100 + b, "not at the start of a 2048-byte sector",
                 id="unaligned"),
])
def test_find_block_refuses_a_placeholder_it_cannot_patch_safely(
        tmp_path: Path, layout: Callable[[bytes], bytes], error: str) -> None:
    block = iso.placeholder(b"unique")
    path = tmp_path / "a.iso"
    path.write_bytes(layout(block))
    with pytest.raises(RamdiskError, match=error):
        iso.find_block(path, block)


# --- build_iso's cache ----------------------------------------------------------------------------

class FakeBuild:
    """A ramdisk directory and a fake xorriso step that counts its runs."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ramdisk = tmp_path / "ramdisk"
        self.out = tmp_path / "iso"
        self.builds = 0
        self.fail = False
        self.loader = {"gcdx64.efi.signed": "aa", "builder/iso.py": "bb"}
        monkeypatch.setattr(iso, "boot_files", lambda: dict(self.loader))
        monkeypatch.setattr(iso, "_make_iso", self.make_iso)
        self.ramdisk.mkdir()
        self.set_ramdisk("hash-1")

    def set_ramdisk(self, input_hash: str) -> None:
        files = {}
        for name in ("vmlinuz", "initramfs"):
            data = f"{name} {input_hash}".encode()
            (self.ramdisk / name).write_bytes(data)
            files[name] = {"size": len(data), "sha256": "x"}
        (self.ramdisk / "manifest.json").write_text(
            json.dumps({"input_hash": input_hash, "files": files}))

    def make_iso(self, ramdisk_dir: Path, tmp: Path, dest: Path) -> int:
        assert ramdisk_dir == self.ramdisk.resolve() and tmp.is_dir()
        if self.fail:
            raise RamdiskError("xorriso failed")
        self.builds += 1
        dest.write_bytes(b"\0" * iso.SECTOR + iso.placeholder(b"m") + b"rest")
        return iso.SECTOR

    def build(self, **kwargs: bool) -> iso.BootIso:
        return iso.build_iso(self.ramdisk, self.out, log=quiet, **kwargs)


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeBuild:
    return FakeBuild(tmp_path, monkeypatch)


def test_build_iso_records_the_image_and_where_the_parameters_are(fake: FakeBuild) -> None:
    boot_iso = fake.build()
    assert boot_iso == iso.BootIso(fake.out.resolve() / "inspection.iso", iso.SECTOR,
                                   iso.PARAMS_SIZE, "hash-1")
    manifest = json.loads((fake.out / "iso.json").read_text())
    assert manifest["iso"]["size"] == boot_iso.path.stat().st_size
    assert manifest["params"] == {"file": iso.PARAMS_FILE, "offset": iso.SECTOR,
                                  "size": iso.PARAMS_SIZE}
    assert manifest["inputs"]["ramdisk_hash"] == "hash-1"
    assert manifest["inputs"]["boot_files"] == fake.loader
    assert iso.BootIso.load(fake.out.resolve()) == boot_iso


def test_an_unchanged_ramdisk_reuses_the_cached_image(fake: FakeBuild) -> None:
    first = fake.build()
    assert fake.build() == first
    assert fake.build(verify=True) == first
    assert fake.builds == 1


def test_a_new_ramdisk_version_rebuilds_the_image(fake: FakeBuild) -> None:
    fake.build()
    fake.set_ramdisk("hash-2")
    assert fake.build().ramdisk_hash == "hash-2"
    assert fake.builds == 2


def test_changed_boot_loader_files_rebuild_the_image(fake: FakeBuild) -> None:
    fake.build()
    fake.loader["gcdx64.efi.signed"] = "cc"
    fake.build()
    assert fake.builds == 2


def test_an_image_of_another_size_is_rebuilt(fake: FakeBuild) -> None:
    boot_iso = fake.build()
    with boot_iso.path.open("ab") as f:
        f.write(b"more")
    fake.build()
    assert fake.builds == 2


def test_only_verify_notices_an_image_changed_at_the_same_size(fake: FakeBuild) -> None:
    boot_iso = fake.build()
    data = bytearray(boot_iso.path.read_bytes())
    data[-1] ^= 1
    boot_iso.path.write_bytes(bytes(data))
    fake.build()
    assert fake.builds == 1
    fake.build(verify=True)
    assert fake.builds == 2


def test_force_rebuilds_a_current_image(fake: FakeBuild) -> None:
    fake.build()
    fake.build(force=True)
    assert fake.builds == 2


def test_a_failed_build_leaves_no_manifest_to_trust(fake: FakeBuild) -> None:
    fake.build()
    fake.set_ramdisk("hash-2")
    fake.fail = True
    with pytest.raises(RamdiskError, match="xorriso failed"):
        fake.build()
    assert not (fake.out / "iso.json").exists()


@pytest.mark.parametrize("missing", ["vmlinuz", "initramfs", "manifest.json"])
def test_an_unbuilt_ramdisk_is_an_error_naming_what_is_missing(
        fake: FakeBuild, missing: str) -> None:
    (fake.ramdisk / missing).unlink()
    with pytest.raises(RamdiskError, match=f"not built: no {missing}"):
        fake.build()
    assert fake.builds == 0


def test_a_missing_ramdisk_directory_is_an_error(tmp_path: Path, fake: FakeBuild) -> None:
    with pytest.raises(RamdiskError, match="ramdisk is not built: no directory"):
        iso.build_iso(tmp_path / "nowhere", fake.out, log=quiet)
    assert not (tmp_path / "nowhere").exists()


def test_a_ramdisk_file_that_does_not_match_its_manifest_is_an_error(fake: FakeBuild) -> None:
    (fake.ramdisk / "initramfs").write_bytes(b"other size")
    with pytest.raises(RamdiskError, match="initramfs does not match its manifest"):
        fake.build()


def test_missing_tools_and_files_name_the_packages_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(iso, "PACKAGES", {"no-such-program-ironsight": "xorriso",
                                          "/nonexistent/shimx64.efi.signed": "shim-signed",
                                          "/nonexistent/mmx64.efi.signed": "shim-signed"})
    with pytest.raises(RamdiskError, match=r"\(apt-get install shim-signed xorriso\)$"):
        iso.boot_files()
