#!/usr/bin/env bash
# The venv of a real Keystone (30.x, the release the auth_strategy = keystone tests were written
# against) under $1 (default .state); prints its path.
exec "$(dirname "$0")/ensure-tool-venv.sh" "${1:-.state}" keystone "keystone>=30,<31"
