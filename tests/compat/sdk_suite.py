"""openstacksdk's own bare-metal functional tests, as shipped in its wheel, against a live
`ironsight serve`: the harness, its record of what still fails, and a command to run it.

Only the run's configuration is ours (the service's options, clouds.yaml, timeouts); the tests
are never patched. The suite runs in a venv of its own (scripts/ensure-sdk-suite.sh), the
service with the Python running this module, which must import ironsight.

By hand: `.venv/bin/python tests/compat/sdk_suite.py` (see tests/compat/README.md).
"""

from __future__ import annotations

import argparse
import configparser
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

SDK_VERSION = "4.22.0"  # the pin of scripts/ensure-sdk-suite.sh
SUITE_SIZE = 96  # tests in openstack/tests/functional/baremetal of that version
ROOT = Path(__file__).resolve().parents[2]
ENSURE_VENV = ROOT / "scripts" / "ensure-sdk-suite.sh"
CLOUDS = ("devstack", "devstack-admin", "devstack-alt", "devstack-system-admin")

# The first failure of a test, where the suite's fake type is refused.
FAKE_HARDWARE = "node create: driver 'fake-hardware' refused (400)"

# Tests of the suite that fail today (module.Class.test) -> why: the first failure seen, and
# ("then") the one seen behind it with `fake-hardware` accepted; more may hide behind those.
# A test listed here that passes makes the project's test fail: remove it. The list only shrinks.
KNOWN_FAILURES: dict[str, str] = {}


@dataclass(frozen=True)
class Outcome:
    """One test of the suite: passed, failed, error or skipped, and the first line of why."""

    status: str
    message: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class SuiteRun:
    outcomes: dict[str, Outcome]
    seconds: float
    workdir: Path

    def passed(self) -> list[str]:
        return sorted(t for t, o in self.outcomes.items() if o.status == "passed")

    def not_passed(self) -> dict[str, Outcome]:
        return {t: o for t, o in sorted(self.outcomes.items()) if o.status != "passed"}


def ensure_venv(state_dir: Path) -> Path:
    """The suite's venv under `state_dir`, created the first time (about 40 s)."""
    out = subprocess.run([str(ENSURE_VENV), str(state_dir)], check=True,
                         stdout=subprocess.PIPE, text=True)
    return Path(out.stdout.strip())


def _free_ports(count: int) -> list[int]:
    """`count` distinct free loopback ports: all bound at once, so that the kernel cannot
    hand the same one out twice (two ports picked one after the other once were one)."""
    socks = [socket.socket() for _ in range(count)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def fake_hardware_type() -> str:
    """Ironic's name for the fake type, which the suite uses, once ironsight knows it;
    ironsight's older name `fake` until then (the suite's nodes are then refused)."""
    known = {ep.name for ep in entry_points(group="ironsight.hardware_types")}
    return "fake-hardware" if "fake-hardware" in known else "fake"


@dataclass(frozen=True)
class Service:
    url: str
    introspection_url: str
    log: Path


@contextmanager
def serving(workdir: Path, timeout: float = 60) -> Iterator[Service]:
    """`ironsight serve` on free loopback ports with a fresh state dir under `workdir`:
    noauth (the default on loopback), the fake hardware type, discoverd in the process (the
    bare-metal API's `[discoverd] service_url`, for the inspection rules)."""
    state = workdir / "state"
    state.mkdir(parents=True)
    port, di_port = _free_ports(2)
    url, di_url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{di_port}"
    conf = configparser.ConfigParser(default_section="\x00none", interpolation=None)
    conf.read_dict({
        "DEFAULT": {"state_dir": str(state), "auth_strategy": "noauth"},
        "api": {"host": "127.0.0.1", "port": str(port)},
        "conductor": {"enabled_hardware_types": fake_hardware_type()},
        "introspection": {"port": str(di_port), "ironic_url": url},
        # where the bare-metal API forwards /v1/inspection_rules (inspection stays off)
        "discoverd": {"service_url": f"{di_url}/v1"},
    })
    conf_file = workdir / "ironsight.conf"
    with open(conf_file, "w") as fh:
        conf.write(fh)
    log = workdir / "service.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ironsight.cli", "serve", "--config-file", str(conf_file)],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"ironsight serve exited:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/v1", timeout=1):
                    break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"ironsight serve did not answer:\n{log.read_text()[-3000:]}") from None
                time.sleep(0.1)
        yield Service(url, di_url, log)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def clouds_yaml(service: Service) -> str:
    """The clouds the suite acts as, all the same no-auth cloud. `auth.endpoint` gives the
    no-auth plugin endpoint data: without it, the microversion check of every test class
    with a minimum version skips the class."""
    cloud = {"auth_type": "none", "auth": {"endpoint": service.url},
             "baremetal_endpoint_override": service.url,
             "baremetal_introspection_endpoint_override": service.introspection_url,
             "has_compute": False, "has_image": False}
    return json.dumps({"clouds": {name: cloud for name in CLOUDS}}, indent=2)  # JSON is YAML


def run_suite(venv: Path, service: Service, workdir: Path, *, test_timeout: int = 30,
              wait_timeout: int = 20, deadline: float = 900) -> SuiteRun:
    """Run the shipped suite with the venv's pytest; its junit XML, output and clouds.yaml
    stay in `workdir`."""
    py = venv / "bin" / "python"
    found = subprocess.run([str(py), "-c", "import openstack; print(openstack.__file__)"],
                           check=True, stdout=subprocess.PIPE, text=True)
    tests = Path(found.stdout.strip()).parent / "tests" / "functional" / "baremetal"
    clouds = workdir / "clouds.yaml"
    clouds.write_text(clouds_yaml(service))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OS_", "OPENSTACKSDK_", "PYTHON"))}
    env.update({
        "OS_CLIENT_CONFIG_FILE": str(clouds), "OS_CLOUD": "devstack-admin",
        "OS_CLIENT_SECURE_FILE": str(workdir / "no-secure.yaml"),
        "OS_TEST_TIMEOUT": str(test_timeout),  # per test (the suite's own fixture)
        "OPENSTACKSDK_FUNC_TEST_TIMEOUT": str(wait_timeout),  # waits inside a test
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
    })
    return run_pytest(py, tests, workdir, env, deadline)


def run_pytest(py: Path, tests: Path, workdir: Path, env: Mapping[str, str],
               deadline: float) -> SuiteRun:
    """Run a shipped suite with its venv's pytest (`py`) from `workdir`, where its junit XML
    and output stay; the outcome of each test."""
    ini = workdir / "pytest.ini"  # not the project's pyproject.toml, above the venv
    ini.write_text("[pytest]\n")
    junit = workdir / "junit.xml"
    started = time.monotonic()
    with open(workdir / "pytest.log", "wb") as out:
        subprocess.run(
            [str(py), "-m", "pytest", str(tests), "-c", str(ini), "--rootdir", str(workdir),
             "-p", "no:cacheprovider", "-q", "-rN", f"--junitxml={junit}",
             "-o", "junit_family=xunit1"],
            cwd=workdir, env=dict(env), stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, timeout=deadline)
    seconds = time.monotonic() - started
    if not junit.exists():
        raise RuntimeError(f"the suite wrote no results:\n"
                           f"{(workdir / 'pytest.log').read_text()[-3000:]}")
    return SuiteRun(parse_junit(junit), seconds, workdir)


def parse_junit(path: Path) -> dict[str, Outcome]:
    """Each test case of a pytest junit XML file, by `module.Class.test`."""
    outcomes: dict[str, Outcome] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = ".".join((Path(case.get("file", "")).stem,
                            case.get("classname", "").rsplit(".", 1)[-1], case.get("name", "")))
        status, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                status = "failed" if tag == "failure" else tag
                message = why(found.text or "", found.get("message") or "")
                break
        if test_id in outcomes and status == "passed":
            continue  # a teardown error is a second case of the same test: keep the error
        outcomes[test_id] = Outcome(status, message, float(case.get("time") or 0))
    return outcomes


_TRACEBACK = "Traceback (most recent call last):"


def why(report: str, summary: str) -> str:
    """The first line of the exception that ended a test (testtools' reports show the
    traceback twice, the exception after the last one), the service's URL left out."""
    lines = report.splitlines()
    start = max((i for i, line in enumerate(lines) if _TRACEBACK in line), default=-1)
    found = next((line for line in lines[start + 1:] if line and not line[0].isspace()),
                 summary.splitlines()[0] if summary else "")
    return re.sub(r"https?://127\.0\.0\.1:\d+", "", found).strip()


def unexpected(run: SuiteRun, known: Mapping[str, str] = KNOWN_FAILURES) -> dict[str, Outcome]:
    """Tests that did not pass and are not known failures (a skip is not a pass)."""
    return {t: o for t, o in run.not_passed().items() if t not in known}


def fixed(run: SuiteRun, known: Mapping[str, str] = KNOWN_FAILURES) -> list[str]:
    """Known failures that pass now: to be removed from KNOWN_FAILURES."""
    return sorted(t for t in known if t in run.outcomes and run.outcomes[t].status == "passed")


def stale(run: SuiteRun, known: Mapping[str, str] = KNOWN_FAILURES) -> list[str]:
    """Known failures the suite does not have (renamed or gone)."""
    return sorted(t for t in known if t not in run.outcomes)


def problems(run: SuiteRun, known: Mapping[str, str] = KNOWN_FAILURES) -> list[str]:
    """Everything that makes the run differ from the record, one line each."""
    found = []
    if len(run.outcomes) != SUITE_SIZE:
        found.append(f"the suite ran {len(run.outcomes)} tests, not {SUITE_SIZE}")
    found += [f"{t}: {o.status}: {o.message}" for t, o in unexpected(run, known).items()]
    found += [f"{t}: passes now: remove it from KNOWN_FAILURES" for t in fixed(run, known)]
    found += [f"{t}: listed in KNOWN_FAILURES, not in the suite" for t in stale(run, known)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--state", type=Path, default=ROOT / ".state",
                        help="where the suite's venv lives (default: .state)")
    parser.add_argument("--workdir", type=Path, help="keep the run's files here "
                        "(default: a new temporary directory)")
    parser.add_argument("--test-timeout", type=int, default=30, help="seconds per test")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print every test that does not pass, known or not")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="sdk-suite-"))
    workdir.mkdir(parents=True, exist_ok=True)
    venv = ensure_venv(args.state)
    with serving(workdir) as service:
        run = run_suite(venv, service, workdir, test_timeout=args.test_timeout)
    return report(run, f"openstacksdk {SDK_VERSION} bare-metal suite", problems(run),
                  verbose=args.verbose)


def report(run: SuiteRun, title: str, found: list[str], *, verbose: bool) -> int:
    """Print a run's result (and with `verbose` every test that did not pass) and how it
    differs from the record (`found`); the exit status: 1 when it differs."""
    print(f"{title}: {len(run.passed())} of {len(run.outcomes)} passed in "
          f"{run.seconds:.0f} s (files: {run.workdir})")
    if verbose:
        for test_id, outcome in run.not_passed().items():
            print(f"  {outcome.status:7} {test_id}: {outcome.message[:200]}")
    for line in found:
        print(f"NOT AS RECORDED: {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
