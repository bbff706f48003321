#!/usr/bin/env bash
# Install the system packages ironsight's tests and demo need (Debian 12). Idempotent: only
# missing packages are installed; needs root (or sudo) when something is missing.
set -euo pipefail
need=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# ipmitool: pxe_ipmitool; openssh-*: pxe_ssh tests; dnsmasq-base iptables ipxe: discoverd's
# PXE side; busybox-static cpio kmod: the ramdisk builder; qemu-*: the VM lab and e2e tests;
# haproxy: the load balancer of the scale-out guide, run by its tests; libvirt-*: the real
# hypervisor of the pxe_ssh tests (not libvirt-daemon-system: no system service, no network);
# openssl: the root password hash its sshd sees in those tests; ovmf: the UEFI lab VMs'
# firmware; shim-signed grub-efi-amd64-signed: shim and GRUB (Debian-signed), served by
# discoverd to UEFI machines for Secure Boot; nftables: the lab's IPv6-only VMs; curl: a TFTP
# client of the functional tests (discoverd's TFTP server); libvirt-dev pkg-config: libvirt-python
# of the Redfish emulator's venv (scripts/ensure-sushy-tools.sh); xorriso mtools grub-pc-bin: the
# ramdisk's virtual-media ISO (its image, its UEFI FAT image, its BIOS GRUB); prometheus: its
# promtool checks the shipped alert rules (docs/examples/prometheus-alerts.yml) and a
# Prometheus server of a test's own (a free port) scrapes a test service with them and runs
# the Grafana dashboard's queries; chromium: the web console's browser tests, driven headless by
# Playwright (tests/functional/console; Playwright's own browser download is not used).
for pkg in ipmitool openssh-server openssh-client python3-venv python3.11 iproute2 dnsmasq-base \
           iptables ipxe busybox-static cpio kmod qemu-system-x86 qemu-utils ipxe-qemu haproxy \
           libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients openssl \
           ovmf shim-signed grub-efi-amd64-signed nftables curl libvirt-dev pkg-config \
           xorriso mtools grub-pc-bin prometheus chromium; do
  have "$pkg" || need+=("$pkg")
done
# PostgreSQL: only when no server answers and none is installed.
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  need+=(postgresql)
fi
if ((${#need[@]})); then
  echo "installing system packages: ${need[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # policy-rc.d: packages must not start system services (sshd, postgresql) on install
  $SUDO sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d'
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  $SUDO rm -f /usr/sbin/policy-rc.d
fi
# libvirt's QEMU driver resolves the user and the group libvirt-qemu before it reads its
# configuration; libvirt-daemon-system would create them, we do without it.
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
if ! getent group libvirt-qemu >/dev/null; then
  $SUDO groupadd -r libvirt-qemu
fi
if ! getent passwd libvirt-qemu >/dev/null; then
  $SUDO useradd -r -g libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu
fi
