#!/usr/bin/env bash
# Create (once) the virtualenv holding openstacksdk's own bare-metal functional tests (shipped in
# its wheel) and what they need to run, under $1 (default .state), and print its path. The pin is
# the suite's version: the tests are run as shipped, so they must not move under us.
# Idempotent: a venv already installed with the same requirements is left as it is.
set -euo pipefail
statedir=${1:-.state}
venv=$(realpath -m "$statedir/sdk-suite-venv")
reqs="openstacksdk==4.22.0 pytest oslotest fixtures testtools testscenarios requests-mock"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.installed" 2>/dev/null)" != "$reqs" ]; then
  mkdir -p "$statedir"
  rm -rf "$venv"
  echo "installing openstacksdk's test suite into $venv (log: $statedir/sdk-suite-pip.log)" >&2
  # shellcheck disable=SC2086  # $reqs is a list of requirement words
  { ${PYTHON:-python3} -m venv "$venv" && "$venv/bin/pip" install -q $reqs; } \
    > "$statedir/sdk-suite-pip.log" 2>&1 || { cat "$statedir/sdk-suite-pip.log" >&2; exit 1; }
  echo "$reqs" > "$venv/.installed"
fi
echo "$venv"
