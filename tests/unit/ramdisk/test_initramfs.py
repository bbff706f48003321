"""The initramfs pieces: cpio newc writer, reproducibility, ldd parsing, stdlib selection."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from ironsight.ramdisk import RamdiskError, initramfs


@dataclass
class Entry:
    name: str
    ino: int
    mode: int
    mtime: int
    rdev: tuple[int, int]
    data: bytes


def read_newc(blob: bytes) -> list[Entry]:
    """A minimal newc reader, independent of the writer."""
    entries: list[Entry] = []
    pos = 0
    while True:
        assert blob[pos:pos + 6] == b"070701", pos
        fields = [int(blob[pos + 6 + 8 * i:pos + 14 + 8 * i], 16) for i in range(13)]
        namesize, size = fields[11], fields[6]
        name = blob[pos + 110:pos + 110 + namesize - 1].decode()
        pos += 110 + namesize
        pos += -pos % 4
        data = blob[pos:pos + size]
        pos += size + (-size % 4)
        if name == "TRAILER!!!":
            assert blob[pos:] == b""
            return entries
        entries.append(Entry(name, fields[0], fields[1], fields[5], (fields[9], fields[10]),
                             data))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    (root / "bin/busybox").write_bytes(b"\x7fELF busybox")
    (root / "bin/busybox").chmod(0o700)
    (root / "bin/sh").symlink_to("/bin/busybox")
    (root / "bin-extra").mkdir()
    (root / "etc").mkdir()
    (root / "etc/modules-load").write_text("virtio_ring\n")
    (root / "etc/modules-load").chmod(0o600)
    (root / "dev").mkdir()
    (root / "tmp").mkdir()
    (root / "tmp").chmod(0o1777)
    (root / "init").write_text("#!/bin/sh\n")
    (root / "init").chmod(0o775)
    return root


def newc(root: Path, mtime: int = 0) -> bytes:
    out = io.BytesIO()
    initramfs.write_newc(root, out, mtime=mtime)
    return out.getvalue()


def test_entries_are_sorted_like_lc_all_c_sort_with_parents_first(tree: Path) -> None:
    names = [e.name for e in read_newc(newc(tree))]
    assert names == ["bin", "bin-extra", "bin/busybox", "bin/sh", "dev", "dev/console", "etc",
                     "etc/modules-load", "init", "tmp"]
    for name in names:
        parent = os.path.dirname(name)
        assert not parent or names.index(parent) < names.index(name)


def test_modes_owners_and_times_are_normalised(tree: Path) -> None:
    entries = {e.name: e for e in read_newc(newc(tree, mtime=1700000000))}
    assert oct(entries["bin"].mode) == oct(0o040755)
    assert oct(entries["bin/busybox"].mode) == oct(0o100755)
    assert oct(entries["etc/modules-load"].mode) == oct(0o100644)
    assert oct(entries["init"].mode) == oct(0o100755)
    assert oct(entries["tmp"].mode) == oct(0o041777)
    assert oct(entries["bin/sh"].mode) == oct(0o120777)
    assert entries["bin/sh"].data == b"/bin/busybox"
    assert entries["etc/modules-load"].data == b"virtio_ring\n"
    assert {e.mtime for e in entries.values()} == {1700000000}


def test_a_console_device_exists_before_devtmpfs_is_mounted(tree: Path) -> None:
    console = next(e for e in read_newc(newc(tree)) if e.name == "dev/console")
    assert oct(console.mode) == oct(0o020600)
    assert console.rdev == (5, 1)


def test_the_archive_does_not_depend_on_file_times(tree: Path) -> None:
    first = newc(tree)
    os.utime(tree / "init", (1, 1))
    (tree / "etc/modules-load").touch()
    assert newc(tree) == first


def test_pack_is_reproducible_gzip(tree: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.gz", tmp_path / "b.gz"
    entries, size = initramfs.pack(tree, a)
    initramfs.pack(tree, b)
    assert a.read_bytes() == b.read_bytes()
    raw = gzip.decompress(a.read_bytes())
    assert len(raw) == size
    assert len(read_newc(raw)) == entries == 10
    assert a.read_bytes()[4:8] == b"\0\0\0\0"  # no timestamp in the gzip header


@pytest.mark.skipif(not shutil.which("cpio"), reason="needs GNU cpio")
def test_gnu_cpio_reads_the_archive(tree: Path) -> None:
    listing = subprocess.run(["cpio", "-t", "--quiet"], input=newc(tree), capture_output=True,
                             check=True).stdout.decode().split()
    assert listing[:3] == ["bin", "bin-extra", "bin/busybox"]


def test_newc_header_padding() -> None:
    header = initramfs.newc_header("ab", ino=1, mode=0o100644, size=0, mtime=0)
    assert len(header) % 4 == 0
    assert header.startswith(b"070701")


# --- ldd and the stdlib selection -----------------------------------------------------------------

LDD = """\tlinux-vdso.so.1 (0x00007ffd0b5f2000)
\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f1c6a8e1000)
\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x00007f1c6a8c2000)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f1c6a6e1000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f1c6a9d5000)
"""


def test_parse_ldd() -> None:
    assert initramfs.parse_ldd(LDD) == [Path("/lib/x86_64-linux-gnu/libm.so.6"),
                                        Path("/lib/x86_64-linux-gnu/libz.so.1"),
                                        Path("/lib/x86_64-linux-gnu/libc.so.6"),
                                        Path("/lib64/ld-linux-x86-64.so.2")]


def test_parse_ldd_rejects_a_missing_library() -> None:
    with pytest.raises(RamdiskError, match="libfoo"):
        initramfs.parse_ldd("\tlibfoo.so.1 => not found\n")


def test_static_binaries_have_no_libraries(tmp_path: Path) -> None:
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\n")
    assert initramfs.ldd(script) == []


STDLIB = Path("/usr/lib/python3.11")


def test_stdlib_subset_and_optional_modules() -> None:
    files = [STDLIB / "json/__init__.py", STDLIB / "ssl.py", Path("/tmp/x/ironsight_agent/cli.py"),
             STDLIB / "lib-dynload/_ssl.cpython-311-x86_64-linux-gnu.so",
             STDLIB / "lib-dynload/_json.cpython-311-x86_64-linux-gnu.so",
             STDLIB / "site-packages/foo.py", STDLIB / "bz2.py"]
    subset = initramfs.stdlib_subset(files, STDLIB)
    assert Path("/tmp/x/ironsight_agent/cli.py") not in subset
    assert STDLIB / "site-packages/foo.py" not in subset
    kept = [f.name for f in subset if not initramfs.is_optional(f, STDLIB)]
    assert kept == ["__init__.py", "_json.cpython-311-x86_64-linux-gnu.so"]


def test_add_modules_writes_the_load_order(tmp_path: Path) -> None:
    kos = []
    for name in ("virtio_ring", "virtio", "virtio_net"):
        kos.append(tmp_path / f"{name}.ko")
        kos[-1].write_bytes(b"ko " + name.encode())
    root = tmp_path / "root"
    initramfs.stage_base(root)
    assert initramfs.add_modules(root, kos) == ["virtio_ring", "virtio", "virtio_net"]
    assert (root / "etc/modules-load").read_text() == "virtio_ring\nvirtio\nvirtio_net\n"
    assert (root / "lib/modules/virtio.ko").read_bytes() == b"ko virtio"


@pytest.mark.skipif(not initramfs.BUSYBOX.exists(), reason="needs busybox")
def test_add_busybox_links_every_applet_where_debian_puts_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    initramfs.stage_base(root)
    count = initramfs.add_busybox(root)
    assert count > 200
    for applet in ("bin/sh", "sbin/insmod", "usr/bin/wget", "sbin/udhcpc", "sbin/poweroff"):
        assert os.readlink(root / applet) == "/bin/busybox", applet


@pytest.mark.skipif(not (initramfs.PYTHON.exists() and initramfs.BUSYBOX.exists()),
                    reason="needs Debian's python3.11 and busybox")
def test_probe_finds_the_agents_stdlib_closure() -> None:
    stdlib, files = initramfs.probe_imports(initramfs.PYTHON)
    assert stdlib == STDLIB
    names = {str(f.relative_to(stdlib)) for f in initramfs.stdlib_subset(files, stdlib)}
    # posting: urllib and http.client; the IP address is resolved through the idna codec
    assert {"json/__init__.py", "urllib/request.py", "http/client.py", "argparse.py",
            "encodings/idna.py"} <= names
    assert not any("ironsight" in str(f) and f.is_relative_to(stdlib) for f in files)
