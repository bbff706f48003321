#!/usr/bin/env bash
# Create (once) the virtualenv holding a stock ironic-python-agent (13.x, from the package
# registry) for the functional tests that run it against live services, under $1 (default
# .state), and print its path. IPA's dependencies (oslo.*, tooz, pyudev...) stay out of the
# project's venv. Idempotent: a venv already installed is left as it is.
set -euo pipefail
statedir=${1:-.state}
venv=$(realpath -m "$statedir/ipa-venv")
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.installed" ]; then
  mkdir -p "$statedir"
  rm -rf "$venv"
  echo "installing ironic-python-agent into $venv (log: $statedir/ipa-pip.log)" >&2
  { ${PYTHON:-python3} -m venv "$venv" && "$venv/bin/pip" install -q "ironic-python-agent>=13,<14"; } \
    > "$statedir/ipa-pip.log" 2>&1 || { cat "$statedir/ipa-pip.log" >&2; exit 1; }
  touch "$venv/.installed"
fi
echo "$venv"
