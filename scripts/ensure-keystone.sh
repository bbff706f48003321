#!/usr/bin/env bash
# Create (once) the virtualenv holding a real Keystone for the functional tests of
# auth_strategy = keystone, under $1 (default .state), and print its path. Keystone and its
# dependencies (oslo.*, eventlet, their own SQLAlchemy pins) stay out of the project's venv.
# Idempotent: a venv already installed is left as it is.
set -euo pipefail
statedir=${1:-.state}
venv=$(realpath -m "$statedir/keystone-venv")
if [ ! -x "$venv/bin/keystone-manage" ] || [ ! -f "$venv/.installed" ]; then
  mkdir -p "$statedir"
  rm -rf "$venv"
  echo "installing Keystone into $venv (log: $statedir/keystone-pip.log)" >&2
  { ${PYTHON:-python3} -m venv "$venv" && "$venv/bin/pip" install -q "keystone>=30,<31"; } \
    > "$statedir/keystone-pip.log" 2>&1 || { cat "$statedir/keystone-pip.log" >&2; exit 1; }
  touch "$venv/.installed"
fi
echo "$venv"
