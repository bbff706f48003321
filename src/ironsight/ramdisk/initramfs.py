"""The initramfs: busybox, /init, the virtio modules, Debian's Python 3.11 and the agent.

Python is Debian's own `/usr/bin/python3.11`, always by absolute path: on developer and CI
machines `python3.11` on PATH may be pyenv's, whose files are elsewhere and whose libraries
differ. Only the standard library modules the agent really imports go in (found by running
the agent once with that interpreter, the way /init runs it, against a local HTTP server),
precompiled with unchecked-hash .pyc so that nothing compiles at boot and the fixed
timestamps of the archive do not invalidate them. Optional C extensions that would pull in
libssl, libbz2 or liblzma are left out: the agent posts over plain HTTP.

The archive is written by `write_newc` (cpio "newc", entries sorted by path bytes as
`LC_ALL=C sort`, fixed owners and mtimes) and compressed with gzip without a name or
time, so the same inputs give the same bytes.
"""

from __future__ import annotations

import gzip
import http.server
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ironsight.ramdisk import RamdiskError, kernel, run

PYTHON = Path("/usr/bin/python3.11")
BUSYBOX = Path("/bin/busybox")
AGENT_NAME = "ironsight_agent"  # the agent's directory in the ramdisk: `python3 -m ironsight_agent`
FILES = Path(__file__).parent / "files"
AGENT_DIR = Path(__file__).parent.parent / "agent"

DIRS = ("bin", "sbin", "usr/bin", "usr/sbin", "etc", "proc", "sys", "dev", "tmp", "run", "root",
        "lib/modules")
# Imported by the stdlib inside try/except ImportError only; they need libssl/libbz2/liblzma.
OPTIONAL_MODULES = frozenset({"ssl", "_ssl", "_hashlib", "bz2", "_bz2", "lzma", "_lzma"})
ENCODINGS = ("__init__", "aliases", "utf_8", "latin_1", "ascii")  # start-up and C locale
# gzip -6: 6.80 MB in 1.3 s; -9 saves 45 KB (0.7 %) for 3.2 s more per build.
COMPRESS_LEVEL = 6
CONSOLE = ("dev/console", 0o020600, (5, 1))  # init's stdio before devtmpfs is mounted

_LDD_PATH = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x[0-9a-f]+\)")

PROBE = """\
import runpy, sys
out = sys.argv.pop(1)
try:
    runpy.run_module("ironsight_agent", run_name="__main__", alter_sys=True)
finally:
    v = sys.version_info
    files = {m.__file__ for m in list(sys.modules.values()) if getattr(m, "__file__", None)}
    with open(out, "w") as f:
        f.write(f"{sys.prefix}/{sys.platlibdir}/python{v[0]}.{v[1]}\\n" + "\\n".join(sorted(files)))
"""


class Writable(Protocol):
    def write(self, data: bytes, /) -> int: ...


@dataclass(frozen=True)
class Stats:
    entries: int
    uncompressed: int
    size: int
    stdlib_files: int


# --- staging --------------------------------------------------------------------------------------

def stage_base(root: Path) -> None:
    for directory in DIRS:
        (root / directory).mkdir(parents=True, exist_ok=True)
    (root / "tmp").chmod(0o1777)


def add_busybox(root: Path, busybox: Path = BUSYBOX) -> int:
    """busybox and a symlink per applet, where Debian would put it (`--list-full`)."""
    shutil.copyfile(busybox, root / "bin/busybox")
    (root / "bin/busybox").chmod(0o755)
    for lib in ldd(busybox):  # none for busybox-static; Debian's plain busybox works too
        _copy(lib, root)
    applets = run([busybox, "--list-full"]).split()
    for applet in applets:
        link = root / applet.lstrip("/")
        if not link.exists() and not link.is_symlink():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to("/bin/busybox")
    return len(applets)


def add_scripts(root: Path, files: Path = FILES) -> None:
    for src, dest in (("init", "init"), ("udhcpc.script", "etc/udhcpc.script")):
        shutil.copyfile(files / src, root / dest)
        (root / dest).chmod(0o755)


def add_modules(root: Path, modules: Sequence[Path]) -> list[str]:
    """Modules as /lib/modules/NAME.ko (uncompressed) and their load order in /etc/modules-load."""
    names = []
    for path in modules:
        name = kernel.module_name(path)
        (root / "lib/modules" / f"{name}.ko").write_bytes(kernel.ko_bytes(path))
        names.append(name)
    (root / "etc/modules-load").write_text("".join(name + "\n" for name in names))
    return names


def add_agent(root: Path, agent_dir: Path = AGENT_DIR) -> None:
    shutil.copytree(agent_dir, root / AGENT_NAME,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


# --- python ---------------------------------------------------------------------------------------

def add_python(root: Path, python: Path = PYTHON, agent_dir: Path = AGENT_DIR) -> int:
    """The interpreter as /usr/bin/python3, its libraries and the agent's stdlib closure."""
    copy_elf(root, python)
    (root / "usr/bin/python3").symlink_to(python.name)
    stdlib, files = probe_imports(python, agent_dir)
    wanted = [f for f in stdlib_subset(files, stdlib) if not is_optional(f, stdlib)]
    wanted += [stdlib / "encodings" / f"{name}.py" for name in ENCODINGS]
    for path in sorted(set(wanted)):
        if path.suffix == ".so":
            copy_elf(root, path)
        else:
            _copy(path, root)
    compile_pyc(root, python, [root / str(stdlib).lstrip("/"), root / AGENT_NAME])
    return len(set(wanted))


def probe_imports(python: Path, agent_dir: Path = AGENT_DIR) -> tuple[Path, list[Path]]:
    """(stdlib dir, files of every module loaded) by one real run of the agent with `python`.

    Run as in the ramdisk: `-S -E`, the package copied alone, busybox as `ip` on PATH (so
    the agent takes the same code paths), posting to a local server that accepts it. LLDP
    sockets are opened but not waited on (`--lldp-timeout 0`): the build host's switch has
    nothing to say to the ramdisk, and its modules are imported all the same.
    """
    with tempfile.TemporaryDirectory(prefix="ironsight-probe-") as tmp, _ProbeServer() as url:
        work = Path(tmp)
        add_agent(work, agent_dir)
        (work / "bin").mkdir()
        (work / "bin/ip").symlink_to(BUSYBOX)
        out = work / "modules.txt"
        run([python, "-S", "-E", "-c", PROBE, out, "--callback-url", url, "--retries", "0",
             "--lldp-timeout", "0"],
            cwd=work, env={"PATH": str(work / "bin")}, timeout=120)
        lines = out.read_text().splitlines()
    return Path(lines[0]), [Path(line) for line in lines[1:]]


def stdlib_subset(files: Sequence[Path], stdlib: Path) -> list[Path]:
    return sorted(f for f in files if f.is_relative_to(stdlib)
                  and "site-packages" not in f.parts and "dist-packages" not in f.parts)


def is_optional(path: Path, stdlib: Path) -> bool:
    """`ssl.py`, `lib-dynload/_ssl.cpython-311-x86_64-linux-gnu.so`, `bz2.py`..."""
    top = path.relative_to(stdlib).parts[0]
    if top == "lib-dynload":
        top = path.name.split(".")[0]
    return top.removesuffix(".py") in OPTIONAL_MODULES


def compile_pyc(root: Path, python: Path, dirs: Sequence[Path]) -> None:
    """With the target interpreter (its magic number), paths as seen in the ramdisk."""
    run([python, "-S", "-E", "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash",
         "-s", root, "-p", "/", *dirs], timeout=300)


def copy_elf(root: Path, path: Path) -> None:
    """A binary or library at the same path in `root`, with the libraries `ldd` lists."""
    for item in [path, *ldd(path)]:
        if not (root / str(item).lstrip("/")).exists():
            _copy(item, root)


def ldd(path: Path) -> list[Path]:
    try:
        proc = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=60,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RamdiskError(f"ldd {path}: {exc}") from None
    if "not a dynamic executable" in proc.stdout + proc.stderr:  # static (busybox-static)
        return []
    if proc.returncode != 0:
        raise RamdiskError(f"ldd {path} failed: {proc.stderr.strip()}")
    return parse_ldd(proc.stdout)


def parse_ldd(output: str) -> list[Path]:
    """Library paths from `ldd` output (vdso and "not a dynamic executable" give none)."""
    found = []
    for line in output.splitlines():
        if "not found" in line:
            raise RamdiskError(f"ldd: {line.strip()}")
        match = _LDD_PATH.search(line)
        if match:
            found.append(Path(match.group(1)))
    return found


def _copy(src: Path, root: Path) -> None:
    """Contents (symlinks followed: /lib64 -> usr/lib64) at the same absolute path under root."""
    dest = root / str(src).lstrip("/")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    dest.chmod(0o755 if os.access(src, os.X_OK) else 0o644)


class _Sink(http.server.BaseHTTPRequestHandler):
    """Accepts the probe's report like discoverd would."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"uuid": "probe"}'
        self.send_response(202)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _ProbeServer:
    def __enter__(self) -> str:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1/continue"

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- the archive ----------------------------------------------------------------------------------

def write_newc(root: Path, out: Writable, *, mtime: int = 0,
               devices: Sequence[tuple[str, int, tuple[int, int]]] = (CONSOLE,)) -> int:
    """cpio newc of `root`'s contents (root itself excluded); returns the entry count."""
    special = {name: (mode, rdev) for name, mode, rdev in devices}
    names = sorted({*walk(root), *special}, key=os.fsencode)
    for ino, name in enumerate(names, start=1):
        if name in special:
            mode, rdev = special[name]
            out.write(newc_header(name, ino=ino, mode=mode, size=0, mtime=mtime, rdev=rdev))
            continue
        path = root / name
        info = path.lstat()
        data = _entry_data(path, info)
        out.write(newc_header(name, ino=ino, mode=_mode(info), size=len(data), mtime=mtime,
                              nlink=2 if stat.S_ISDIR(info.st_mode) else 1))
        out.write(data + b"\0" * (-len(data) % 4))
    out.write(newc_header("TRAILER!!!", ino=0, mode=0, size=0, mtime=0))
    return len(names)


def walk(root: Path) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath).relative_to(root)
        for name in [*dirnames, *filenames]:
            yield str(base / name) if str(base) != "." else name


def newc_header(name: str, *, ino: int, mode: int, size: int, mtime: int, nlink: int = 1,
                rdev: tuple[int, int] = (0, 0)) -> bytes:
    encoded = os.fsencode(name) + b"\0"
    fields = (ino, mode, 0, 0, nlink, mtime, size, 0, 0, rdev[0], rdev[1], len(encoded), 0)
    header = b"070701" + b"".join(b"%08X" % value for value in fields) + encoded
    return header + b"\0" * (-len(header) % 4)


def _mode(info: os.stat_result) -> int:
    """Owner root, permissions normalised: the staging umask must not leak into the archive."""
    kind = stat.S_IFMT(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        return kind | 0o777
    if stat.S_ISDIR(info.st_mode):
        return kind | (0o1777 if info.st_mode & stat.S_ISVTX else 0o755)
    return kind | (0o755 if info.st_mode & 0o111 else 0o644)


def _entry_data(path: Path, info: os.stat_result) -> bytes:
    if stat.S_ISLNK(info.st_mode):
        return os.fsencode(os.readlink(path))
    if stat.S_ISREG(info.st_mode):
        return path.read_bytes()
    return b""


def pack(root: Path, dest: Path, mtime: int = 0) -> tuple[int, int]:
    """gzip -n of the cpio archive into `dest`: (entries, uncompressed size)."""
    with dest.open("wb") as raw, gzip.GzipFile(
            filename="", mode="wb", compresslevel=COMPRESS_LEVEL, fileobj=raw, mtime=mtime) as gz:
        counter = _Counter(gz)
        entries = write_newc(root, counter, mtime=mtime)
    return entries, counter.count


class _Counter:
    """Counts what goes through to the gzip stream (the uncompressed size)."""

    def __init__(self, inner: Writable) -> None:
        self.inner = inner
        self.count = 0

    def write(self, data: bytes) -> int:
        self.count += len(data)
        return self.inner.write(data)


# --- all together ---------------------------------------------------------------------------------

def build(dest: Path, modules: Sequence[Path], *, python: Path = PYTHON,
          busybox: Path = BUSYBOX, agent_dir: Path = AGENT_DIR, mtime: int = 0) -> Stats:
    with tempfile.TemporaryDirectory(prefix="ironsight-initramfs-") as tmp:
        root = Path(tmp) / "root"
        stage_base(root)
        add_busybox(root, busybox)
        add_scripts(root)
        add_modules(root, modules)
        add_agent(root, agent_dir)
        stdlib_files = add_python(root, python, agent_dir)
        entries, uncompressed = pack(root, dest, mtime)
    return Stats(entries, uncompressed, dest.stat().st_size, stdlib_files)
