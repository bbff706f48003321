#!/usr/bin/env bash
# The venv of sushy-tools' Redfish emulator (2.x) with libvirt-python, the Redfish BMC in front
# of the lab's libvirt domains (the redfish driver's tests and the lab); prints its path.
# libvirt-python compiles against Debian's libvirt-dev (scripts/install-deps.sh).
exec "$(dirname "$0")/ensure-tool-venv.sh" "${1:-.state}" sushy-tools \
  "sushy-tools>=2.2,<3" "libvirt-python>=9"
