"""python-ironicclient's own OSC functional tests, as shipped in its wheel, against a live
`ironsight serve`: the harness, its record of what still fails, and a command to run it.

The tests drive the `openstack baremetal ...` CLI in subprocesses (tempest's CLI helpers),
with `--os-auth-type none --os-endpoint <URL>` when their config names no Keystone. Only the
run's configuration is ours: their `test.conf` (`[functional] auth_strategy = noauth`,
`ironic_url`), the `.tox/<env>/bin` directory they look for the CLI in (a link to the suite's
venv), the service's options; the tests are never patched. The service is the one
sdk_suite.serving starts (noauth, the fake hardware type, a fresh state directory).

By hand: `.venv/bin/python tests/compat/ironicclient_suite.py` (see tests/compat/README.md).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as a script: its sibling is importable from here
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import sdk_suite  # type: ignore[import-not-found,no-redef]
else:
    from . import sdk_suite

CLIENT_VERSION = "5.6.0"  # the pin of scripts/ensure-ironicclient-suite.sh
SUITE_SIZE = 108  # tests pytest collects in ironicclient/tests/functional/osc (ddt expands 65)
ENSURE_VENV = sdk_suite.ROOT / "scripts" / "ensure-ironicclient-suite.sh"
TOX_ENV = "functional"  # OS_TESTENV_NAME: the CLI is looked for in .tox/<it>/bin

# Tests of the suite that fail today (module.Class.test, as ddt names them) -> why (the first
# failure seen; more may hide behind it). A test listed here that passes is reported by the
# run (exit status 1): remove it. The list only shrinks.
KNOWN_FAILURES: dict[str, str] = {}


def ensure_venv(state_dir: Path) -> Path:
    """The suite's venv under `state_dir`, created the first time (about a minute)."""
    out = subprocess.run([str(ENSURE_VENV), str(state_dir)], check=True,
                         stdout=subprocess.PIPE, text=True)
    return Path(out.stdout.strip())


def suite_config(service: sdk_suite.Service) -> str:
    """The suite's config (its base class reads `[functional]`): no Keystone, our API."""
    return ("[functional]\napi_version = 1\nauth_strategy = noauth\n"
            f"ironic_url = {service.url}\n")


def run_suite(venv: Path, service: sdk_suite.Service, workdir: Path, *,
              deadline: float = 3600) -> sdk_suite.SuiteRun:
    """Run the shipped suite with the venv's pytest from `workdir` (where its base class
    looks for `.tox/functional/bin`); junit XML, output and test.conf stay there."""
    py = venv / "bin" / "python"
    found = subprocess.run(
        [str(py), "-c", "import ironicclient; print(ironicclient.__file__)"],
        check=True, stdout=subprocess.PIPE, text=True)
    tests = Path(found.stdout.strip()).parent / "tests" / "functional" / "osc"
    cli_dir = workdir / ".tox" / TOX_ENV
    cli_dir.mkdir(parents=True, exist_ok=True)
    if not (cli_dir / "bin").exists():
        (cli_dir / "bin").symlink_to(venv / "bin")
    conf = workdir / "test.conf"
    conf.write_text(suite_config(service))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OS_", "IRONIC", "OPENSTACK", "PYTHON"))}
    env.update({
        "IRONICCLIENT_TEST_CONFIG": str(conf), "OS_TESTENV_NAME": TOX_ENV,
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
    })
    return sdk_suite.run_pytest(py, tests, workdir, env, deadline)


def problems(run: sdk_suite.SuiteRun, known: Mapping[str, str] = KNOWN_FAILURES) -> list[str]:
    """Everything that makes the run differ from the record, one line each."""
    found = []
    if len(run.outcomes) != SUITE_SIZE:
        found.append(f"the suite ran {len(run.outcomes)} tests, not {SUITE_SIZE}")
    found += [f"{t}: {o.status}: {o.message}"
              for t, o in sdk_suite.unexpected(run, known).items()]
    found += [f"{t}: passes now: remove it from KNOWN_FAILURES"
              for t in sdk_suite.fixed(run, known)]
    found += [f"{t}: listed in KNOWN_FAILURES, not in the suite"
              for t in sdk_suite.stale(run, known)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--state", type=Path, default=sdk_suite.ROOT / ".state",
                        help="where the suite's venv lives (default: .state)")
    parser.add_argument("--workdir", type=Path, help="keep the run's files here "
                        "(default: a new temporary directory)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print every test that does not pass, known or not")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="ironicclient-suite-"))
    workdir.mkdir(parents=True, exist_ok=True)
    venv = ensure_venv(args.state)
    with sdk_suite.serving(workdir) as service:
        run = run_suite(venv, service, workdir)
    return sdk_suite.report(run, f"python-ironicclient {CLIENT_VERSION} OSC functional suite",
                            problems(run), verbose=args.verbose)


if __name__ == "__main__":
    sys.exit(main())
