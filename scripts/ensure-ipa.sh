#!/usr/bin/env bash
# The venv of a stock ironic-python-agent (13.x, from the package registry), run by the
# functional tests against live services, under $1 (default .state); prints its path.
exec "$(dirname "$0")/ensure-tool-venv.sh" "${1:-.state}" ipa "ironic-python-agent>=13,<14"
