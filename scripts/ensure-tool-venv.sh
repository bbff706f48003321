#!/usr/bin/env bash
# Create (once) a virtualenv of its own for a tool the tests run beside the project (a real
# Keystone, a stock ironic-python-agent, openstacksdk's own test suite), so that its
# dependencies stay out of the project's venv; print its path.
#   scripts/ensure-tool-venv.sh STATEDIR NAME REQUIREMENT...
# Idempotent: a venv already installed with the same requirements is left as it is.
set -euo pipefail
statedir=$1 name=$2
shift 2
venv=$(realpath -m "$statedir/$name-venv")
reqs="$*"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.installed" 2>/dev/null)" != "$reqs" ]; then
  mkdir -p "$statedir"
  rm -rf "$venv"
  echo "installing $reqs into $venv (log: $statedir/$name-pip.log)" >&2
  { ${PYTHON:-python3} -m venv "$venv" && "$venv/bin/pip" install -q "$@"; } \
    > "$statedir/$name-pip.log" 2>&1 || { cat "$statedir/$name-pip.log" >&2; exit 1; }
  echo "$reqs" > "$venv/.installed"
fi
echo "$venv"
