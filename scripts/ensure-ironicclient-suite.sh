#!/usr/bin/env bash
# The venv of python-ironicclient's own OSC functional tests (ironicclient/tests/functional/osc,
# shipped in its wheel up to 5.8.0, the last release that has them) and what they need: the
# `openstack` CLI they call, tempest's CLI helpers, a test runner; under $1 (default .state);
# prints its path. The pin is the suite's version: the tests are run as shipped, so they must
# not move under us.
exec "$(dirname "$0")/ensure-tool-venv.sh" "${1:-.state}" ironicclient-suite \
  python-ironicclient==5.8.0 python-openstackclient tempest pytest
