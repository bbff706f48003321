#!/usr/bin/env bash
# The venv of the `openstack` CLI (python-openstackclient) with python-ironic-inspector-client's
# plugin (`openstack baremetal introspection ...`), under $1 (default .state); prints its path.
# A venv of its own: python-openstackclient pulls in several service clients that the project
# does not need. Pinned so that the compatibility tests run against the same client each time.
exec "$(dirname "$0")/ensure-tool-venv.sh" "${1:-.state}" osc \
  python-openstackclient==10.5.0 python-ironic-inspector-client==5.4.0
