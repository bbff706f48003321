#!/usr/bin/env bash
# A real Ironic 39 to record against (README.md): ironic from PyPI in a venv of its own, one
# all-in-one `ironic` process on SQLite, fake-hardware. Everything lives under PEER (a folder
# outside the checkout, e.g. /work/peer).
#
#   peer.sh install  PEER            venv PEER/venv with ironic==39.* (once)
#   peer.sh start    PEER            noauth peer on 127.0.0.1:6385 (fresh database)
#   peer.sh keystone PEER            Keystone on 127.0.0.1:5001 (the project's keystone venv and
#                                    tests/functional/keystone_server.py), its users
#                                    (keystone_setup.py -> PEER/ks/tokens.json, vars.json), and
#                                    the keystone peer on 127.0.0.1:6386 (fresh database)
#   peer.sh tokens   PEER            new tokens (Keystone's expire after an hour)
#   peer.sh stop     PEER            stop whatever of the three runs
set -euo pipefail

cmd=${1:?usage: peer.sh install|start|keystone|tokens|stop PEER}
PEER=$(realpath -m "${2:?usage: peer.sh $cmd PEER}")
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
PY=$ROOT/.venv/bin/python
KS_VENV=${IRONSIGHT_TEST_KEYSTONE_VENV:-$ROOT/.state/keystone-venv}
KS_PORT=5001

# $1: config file, $2: state folder, $3: port, $4: auth_strategy, $5: conductor host
write_conf() {
  mkdir -p "$2/state/locks" "$2/logs" "$2/httpboot" "$2/tftpboot"
  cat > "$1" <<EOF
[DEFAULT]
auth_strategy = $4
rpc_transport = none
host = $5
enabled_hardware_types = fake-hardware,ipmi
enabled_bios_interfaces = fake,no-bios
enabled_boot_interfaces = fake,pxe
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake,direct
enabled_firmware_interfaces = fake,no-firmware
enabled_inspect_interfaces = agent,fake,no-inspect
enabled_management_interfaces = fake,ipmitool
enabled_network_interfaces = noop
enabled_power_interfaces = fake,ipmitool
enabled_raid_interfaces = fake,no-raid
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = fake,noop
enabled_vendor_interfaces = fake,no-vendor
# fake-hardware lists its fake interfaces first, so with fake enabled its nodes default to
# fake for bios/boot/console/deploy/firmware/management/power/raid/rescue/vendor. Setting
# default_<x>_interface = fake instead stops the conductor: the ipmi type supports no fake
# interface ("no default value found for deploy interface").
default_inspect_interface = agent
default_network_interface = noop
default_storage_interface = noop
log_dir = $2/logs
log_file = ironic.log
debug = false
state_path = $2/state
pybasedir = $PEER/venv/lib/python3.11/site-packages/ironic

[api]
host_ip = 127.0.0.1
port = $3

[database]
connection = sqlite:///$2/state/ironic.sqlite

[dhcp]
dhcp_provider = none

[conductor]
sync_power_state_interval = -1
automated_clean = false

[deploy]
http_root = $2/httpboot

[pxe]
tftp_root = $2/tftpboot

[inspector]
require_managed_boot = false
hooks = \$default_hooks,cpus,memory,root-device,boot-mode
add_ports = all
power_off = true

[oslo_concurrency]
lock_path = $2/state/locks
EOF
  if [ "$4" = keystone ]; then
    cat >> "$1" <<EOF

[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:$KS_PORT/v3
auth_url = http://127.0.0.1:$KS_PORT/v3
auth_type = password
username = ironic
password = ironic-svc-pw-1
project_name = service
user_domain_name = Default
project_domain_name = Default
interface = public
EOF
  fi
}

wait_http() {  # $1: URL, $2: log to show on failure
  for _ in $(seq 60); do
    curl -sf -o /dev/null "$1" && return 0
    sleep 1
  done
  echo "no answer from $1; see $2" >&2
  return 1
}

# $1: config file, $2: state folder, $3: pid file, $4: port
start_ironic() {
  rm -f "$2/state/ironic.sqlite"
  "$PEER/venv/bin/ironic-dbsync" --config-file "$1" create_schema > "$2/logs/dbsync.log" 2>&1
  # exec: the pid saved is the server's own (a session and process group of its own)
  (cd "$PEER"; exec setsid "$PEER/venv/bin/ironic" --config-file "$1" \
     > "$2/logs/ironic.stdout" 2>&1 < /dev/null) &
  echo $! > "$3"
  wait_http "http://127.0.0.1:$4/" "$2/logs/ironic.log"
  echo "Ironic $(curl -s "http://127.0.0.1:$4/" | "$PY" -c \
    'import json,sys; print(json.load(sys.stdin)["default_version"]["version"])') on :$4"
}

stop_pid() {  # $1: pid file; TERM, then KILL (a master whose worker crash-loops ignores TERM)
  [ -f "$1" ] || return 0
  local pid; pid=$(cat "$1")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 10); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$1"
}

tokens() {
  "$PY" "$HERE/keystone_setup.py" "http://127.0.0.1:$KS_PORT/v3" \
    "$(cat "$PEER/keystone/admin_password")" "$PEER/ks"
}

case $cmd in
  install)
    mkdir -p "$PEER"
    python3 -m venv "$PEER/venv"
    "$PEER/venv/bin/pip" install -q -U pip setuptools wheel
    "$PEER/venv/bin/pip" install -q 'ironic==39.*'
    "$PEER/venv/bin/pip" show ironic | grep -i '^version' ;;
  start)
    stop_pid "$PEER/ironic.pid"
    write_conf "$PEER/ironic.conf" "$PEER" 6385 noauth peer-conductor
    start_ironic "$PEER/ironic.conf" "$PEER" "$PEER/ironic.pid" 6385 ;;
  keystone)
    stop_pid "$PEER/ironic-keystone.pid"
    stop_pid "$PEER/keystone.pid"
    mkdir -p "$PEER/keystone" "$PEER/logs"
    [ -s "$PEER/keystone/admin_password" ] || echo "ks-admin-peer-4e1f" > "$PEER/keystone/admin_password"
    (export KEYSTONE_ADMIN_PASSWORD; KEYSTONE_ADMIN_PASSWORD=$(cat "$PEER/keystone/admin_password")
     exec setsid "$KS_VENV/bin/python" -P "$ROOT/tests/functional/keystone_server.py" \
       "$PEER/keystone" "$KS_PORT" > "$PEER/logs/keystone.log" 2>&1 < /dev/null) &
    echo $! > "$PEER/keystone.pid"
    wait_http "http://127.0.0.1:$KS_PORT/v3" "$PEER/logs/keystone.log"
    tokens
    write_conf "$PEER/ironic-keystone.conf" "$PEER/ks" 6386 keystone peer-conductor-ks
    start_ironic "$PEER/ironic-keystone.conf" "$PEER/ks" "$PEER/ironic-keystone.pid" 6386 ;;
  tokens) tokens ;;
  stop)
    stop_pid "$PEER/ironic.pid"
    stop_pid "$PEER/ironic-keystone.pid"
    stop_pid "$PEER/keystone.pid" ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
