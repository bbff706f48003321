#!/usr/bin/env bash
# The venv of python-ironicclient's own OSC functional tests (ironicclient/tests/functional/osc,
# shipped in its wheel) and what they need: the `openstack` CLI they call, tempest's CLI
# helpers, its test-requirements (ddt...), a test runner; under $1 (default .state); prints its path.
# The pin is the suite's version: 5.6.0, the last release whose suite runs. 5.7.0 and 5.8.0 ship
# the same tests but a base class whose setUp reads an attribute nothing sets (`auth_ref`), so
# each of their tests errors before it starts, whatever the server; 5.9.0 removed the suite.
exec "$(dirname "$0")/ensure-tool-venv.sh" "${1:-.state}" ironicclient-suite \
  python-ironicclient==5.6.0 python-openstackclient tempest ddt fixtures testtools oslotest pytest
