#!/usr/bin/env bash
# The venv of openstacksdk's own bare-metal functional tests (shipped in its wheel) and what they
# need, under $1 (default .state); prints its path. The pin is the suite's version: the tests
# are run as shipped, so they must not move under us.
exec "$(dirname "$0")/ensure-tool-venv.sh" "${1:-.state}" sdk-suite openstacksdk==4.22.0 \
  pytest oslotest fixtures testtools testscenarios requests-mock
