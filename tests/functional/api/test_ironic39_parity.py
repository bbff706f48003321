"""ironsight against recorded Ironic 39 behaviour (issue 27): the request sequences of
tests/compat/ironic_peer/cases.py were run against a real Ironic 39.0.0 (fake-hardware,
noauth; how: tests/compat/ironic_peer/README.md) and what it answered is in
ironic39/recorded.json. Each case is replayed here against ironsight in-process and compared
step by step: status, Content-Type and Allow, the version headers Ironic sent, the body's
shape (keys and value types), Ironic's error text and its envelope's form, and the exact
values a step names. Like the other API tests, each case runs on SQLite and on PostgreSQL (the
latter when IRONSIGHT_TEST_PG_URL is set; ~20 s for both).

A step where ironsight is known to answer otherwise is listed in KNOWN_DIFFERENCES with what
differs; a case whose only differences are listed ones is an expected failure, and a listed
step that now matches fails the test (remove it from the list), as xfail(strict=True) would.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from ironsight.baremetal.discoverd_proxy import DiscoverdProxy
from ironsight.baremetal.service import BaremetalService
from ironsight.discoverd.service import DiscoverdService
from ironsight.discoverd.service import upgrade_database as upgrade_discoverd

from ...compat.ironic_peer import cases, record

RECORDING = json.loads((Path(__file__).parent / "ironic39" / "recorded.json").read_text())
CASES = {c["name"]: c for c in cases.CASES}

# "case/step" -> what differs (Ironic 39's answer vs ironsight's).
KNOWN_DIFFERENCES: dict[str, str] = {
    'gate-events/post@1.54':
        'status: Ironic 204, here 404; header content-type: Ironic None, here '
        "'application/json'; header x-openstack-ironic-api-version: Ironic '1.54', here "
        "None; body: Ironic '<empty>', here '<ironic error>'; error_form: Ironic None, here "
        "'debuginfo,faultcode,faultstring'; error: Ironic None, here 'The resource could "
        "not be found: /v1/events'",
    'gate-deploy_templates/list@1.54':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'",
    'gate-deploy_templates/create@1.54':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'",
    'gate-deploy_templates/create@1.55':
        'shape: description extra',
    'gate-runbooks/list@1.91':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'",
    'gate-runbooks/create@1.91':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'",
    'gate-inspection_rules/create@1.96':
        'shape: built_in extra',
    'gate-node_subresources_a/portgroups@1.23':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic '', here 'The resource could not "
        "be found.'",
    'gate-node_subresources_a/vifs@1.27':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic '', here 'The resource could not "
        "be found.'",
    'gate-node_subresources_a/bios@1.39':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic '', here 'The resource could not "
        "be found.'",
    'gate-node_subresources_a/allocation@1.51':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic '', here 'The API version does "
        "not allow allocations'",
    'gate-node_subresources_b/history@1.77':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic '', here 'The resource could not "
        "be found.'",
    'gate-node_subresources_b/history@1.78':
        "shape: history.<item>: None vs {'created_at': 'str', 'event': 'str', 'links': "
        "{'<list>': 2, '<item>': {'href': 'str', 'rel': 'str'}}, 'severity': 'str', 'uuid': "
        "'str'}; history.<list>: 0 vs 1; values: Ironic {'history.*.event': []}, here "
        "{'history.*.event': ['Node created with driver fake-hardware']}",
    'gate-node_subresources_b/inventory@1.80':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic '', here 'The resource could not "
        "be found.'",
    'gate-node_subresources_b/inventory@1.81':
        "error: Ironic 'Node inventory record for node 1 could not be found.', here 'Node "
        "inventory record for node {node} could not be found.'",
    'gate-node_subresources_b/children@1.83':
        "status: Ironic 200, here 400; body: Ironic None, here '<ironic error>'; shape: "
        "<body>: {'children': {'<list>': 0, '<item>': None}, 'links': {'href': 'str', "
        "'rel': 'str'}} vs None; error_form: Ironic None, here "
        "'debuginfo,faultcode,faultstring'; error: Ironic None, here 'Driver fake-hardware "
        'does not support parent (disabled or not implemented): ironsight does not '
        "implement GET /v1/nodes/{node}/children.'",
    'gate-node_subresources_b/firmware@1.85':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic '', here 'The resource could not "
        "be found.'",
    'gate-node_subresources_b/vmedia GET@1.93':
        "status: Ironic 400, here 200; body: Ironic '<ironic error>', here None; shape: "
        "<body>: None vs {'vmedia': {'<list>': 0, '<item>': None}}; error_form: Ironic "
        "'debuginfo,faultcode,faultstring', here None; error: Ironic 'Driver fake-hardware "
        "does not support get_virtual_media (disabled or not implemented).', here None",
    'gate-node_traits/PUT traits@1.36':
        "header allow: Ironic 'DELETE, GET, PATCH, POST', here None; error_form: Ironic "
        "'code,description,title', here 'debuginfo,faultcode,faultstring'; error: Ironic "
        "'', here 'The method is not allowed for this resource.'",
    'gate-node_actions/PUT inject_nmi@1.29':
        "error: Ironic 'Driver fake-hardware does not support inject_nmi (disabled or not "
        "implemented).', here 'Driver fake-hardware does not support management (disabled "
        'or not implemented): ironsight does not implement PUT '
        "/v1/nodes/{node}/management/inject_nmi.'",
    'gate-node_actions/PUT states/boot_mode@1.76':
        'status: Ironic 202, here 400; header content-type: Ironic None, here '
        "'application/json'; body: Ironic '<empty>', here '<ironic error>'; error_form: "
        "Ironic None, here 'debuginfo,faultcode,faultstring'; error: Ironic None, here "
        "'Driver fake-hardware does not support management (disabled or not implemented): "
        "ironsight does not implement PUT /v1/nodes/{node}/states/boot_mode.'",
    'gate-node_actions/PUT states/secure_boot@1.76':
        'status: Ironic 202, here 400; header content-type: Ironic None, here '
        "'application/json'; body: Ironic '<empty>', here '<ironic error>'; error_form: "
        "Ironic None, here 'debuginfo,faultcode,faultstring'; error: Ironic None, here "
        "'Driver fake-hardware does not support management (disabled or not implemented): "
        "ironsight does not implement PUT /v1/nodes/{node}/states/secure_boot.'",
    'gate-node_actions/POST vmedia@1.88':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic '', here 'The resource could not "
        "be found.'",
    'gate-port_filters/portgroup@1.24':
        "status: Ironic 404, here 400; error: Ironic 'Portgroup nosuch-pg could not be "
        "found.', here 'portgroup: Portgroup nosuch-pg could not be found.'",
    'gate-port_filters/shard@1.81':
        "error: Ironic 'Request not acceptable. The minimal required API version should be "
        "1.82', here 'Request not acceptable.'",
    'gate-node_filters/fields=traits@1.36':
        "error: Ironic 'Request not acceptable.', here 'Request not acceptable: the field "
        "traits needs API version 1.37 or newer.'",
    'gate-port_physical_network/POST port@1.34':
        'shape: category extra; description extra; is_smartnic extra; name extra; vendor '
        'extra',
    'gate-port_physical_network/POST plain port':
        'shape: category extra; description extra; is_smartnic extra; name extra; '
        'physical_network extra; vendor extra',
    'gate-port_physical_network/PATCH add physical_network@1.34':
        'shape: category extra; description extra; is_smartnic extra; name extra; vendor '
        'extra',
    'gate-port_physical_network/port2 after':
        'shape: available_for_dynamic_portgroup missing',
    'gate-node_states/states@1.11':
        "shape: provision_updated_at: 'null' vs 'str'",
    'gate-node_states/states@1.12':
        "shape: provision_updated_at: 'null' vs 'str'",
    'gate-node_states/states@1.74':
        "shape: provision_updated_at: 'null' vs 'str'",
    'gate-node_states/states@1.75':
        "shape: provision_updated_at: 'null' vs 'str'",
    'legacy-reads/GET /nodes/{uuid}':
        "shape: provision_updated_at: 'null' vs 'str'",
    'legacy-reads/GET /drivers':
        "values: Ironic {'drivers.*.name': ['fake-hardware', 'ipmi']}, here "
        "{'drivers.*.name': ['fake-hardware', 'pxe_ipmitool']}",
    'legacy-post_node/POST /nodes':
        "shape: provision_updated_at: 'null' vs 'str'",
    'legacy-post_node/GET /v1/nodes/legacy-post':
        "shape: provision_updated_at: 'null' vs 'str'",
    'legacy-web_json_node/create web.json@1.90':
        "shape: provision_updated_at: 'null' vs 'str'",
    'legacy-web_json_node/GET web.json@1.90':
        "shape: provision_updated_at: 'null' vs 'str'",
    'legacy-web_json_node/GET web.json@1.91':
        "shape: provision_updated_at: 'null' vs 'str'",
    'legacy-heartbeat/POST /v1/heartbeat node_ident':
        'status: Ironic 400, here 404; header x-openstack-ironic-api-version: Ironic '
        "'1.115', here None; error: Ironic 'Agent token is required for heartbeat "
        "processing.', here 'The resource could not be found: /v1/heartbeat'",
    'legacy-heartbeat/POST /v1/heartbeat no ident':
        'status: Ironic 400, here 404; header x-openstack-ironic-api-version: Ironic '
        "'1.115', here None; error: Ironic 'Missing mandatory parameter: node_ident', here "
        "'The resource could not be found: /v1/heartbeat'",
    'legacy-heartbeat/POST /v1/heartbeat/nosuch':
        "status: Ironic 404, here 400; error: Ironic 'Node <uuid> could not be found.', "
        "here 'Agent token is required for heartbeat processing.'",
    'validate-deploy_template_steps/create':
        'shape: description extra',
    'validate-deploy_template_steps/add /steps/1':
        "shape: description extra; updated_at: 'null' vs 'str'",
    'validate-deploy_template_steps/replace /steps/0':
        "error: Ironic 'Deploy template invalid: Duplicate deploy steps. A template cannot "
        'have multiple deploy steps with the same interface and step. Duplicates: '
        'interface: raid, step: delete_configuration.\', here "Invalid input for field '
        "'steps': Value error, Duplicate deploy steps. A template cannot have multiple "
        'deploy steps with the same interface and step. Duplicates: interface: raid, step: '
        'delete_configuration"',
    'validate-deploy_template_steps/remove /steps/0':
        "shape: description extra; updated_at: 'null' vs 'str'",
    'validate-deploy_template_steps/remove /steps/0 (last)':
        'error: Ironic \'Schema error for patch: [] should be non-empty\', here "Invalid '
        "input for field 'steps': the value is too short (List should have at least 1 item "
        'after validation, not 0)"',
    'validate-deploy_template_steps/add /steps/5':
        'error: Ironic "Couldn\'t apply patch \'{\'op\': \'add\', \'path\': \'/steps/5\', '
        "'value': {'interface': 'bios', 'step': 'apply_configuration', 'args': {'settings': "
        "[{'name': 'LogicalProc', 'value': 'Enabled'}]}, 'priority': 150}}'. Reason: can't "
        'insert outside of list", here "Couldn\'t apply patch \'{\'op\': \'add\', \'path\': '
        '\'/steps/5\'}\'. Reason: can\'t add outside of list"',
    'validate-deploy_template_steps/replace /steps/0 bad':
        'error: Ironic "Schema error for patch: \'step\' is a required property", here '
        '"Invalid input for field \'steps.0.step\': Field required; Invalid input for field '
        "'steps.0.args': Field required; Invalid input for field 'steps.0.priority': Field "
        'required"',
    'validate-runbook_steps/add /steps/1':
        "shape: updated_at: 'null' vs 'str'",
    'validate-runbook_steps/replace /steps/0':
        "status: Ironic 400, here 200; body: Ironic '<ironic error>', here None; shape: "
        "<body>: None vs {'created_at': 'str', 'description': 'null', 'disable_ramdisk': "
        "'bool', 'extra': {}, 'links': {'<list>': 2, '<item>': {'href': 'str', 'rel': "
        "'str'}}, 'name': 'str', 'owner': 'null', 'public': 'bool', 'steps': {'<list>': 2, "
        "'<item>': {'args': {}, 'interface': 'str', 'order': 'int', 'step': 'str'}}, "
        "'traits': {'<list>': 0,...",
    'validate-runbook_steps/remove /steps/0':
        "shape: updated_at: 'null' vs 'str'",
    'validate-runbook_steps/remove /steps/0 (last)':
        'error: Ironic \'Schema error for patch: [] should be non-empty\', here "Invalid '
        "input for field 'steps': the value is too short (List should have at least 1 item "
        'after validation, not 0)"',
    'validate-runbook_steps/add /steps/5':
        'error: Ironic "Couldn\'t apply patch \'{\'op\': \'add\', \'path\': \'/steps/5\', '
        "'value': {'interface': 'bios', 'step': 'apply_configuration', 'args': {'settings': "
        "[{'name': 'LogicalProc', 'value': 'Enabled'}]}, 'order': 1}}'. Reason: can't "
        'insert outside of list", here "Couldn\'t apply patch \'{\'op\': \'add\', \'path\': '
        '\'/steps/5\'}\'. Reason: can\'t add outside of list"',
    'validate-patch_remove_interfaces/remove /deploy_interface':
        "shape: provision_updated_at: 'null' vs 'str'; updated_at: 'str' vs 'null'",
    'validate-patch_remove_interfaces/remove /rescue_interface':
        "shape: provision_updated_at: 'null' vs 'str'",
    'validate-patch_remove_interfaces/remove /boot_interface':
        "shape: provision_updated_at: 'null' vs 'str'",
    'validate-patch_remove_interfaces/remove /network_interface':
        "shape: provision_updated_at: 'null' vs 'str'",
    'validate-patch_remove_interfaces/remove /storage_interface':
        "shape: provision_updated_at: 'null' vs 'str'",
    'validate-patch_remove_interfaces/remove /driver':
        'error: Ironic "Schema error for patch: \'driver\' is a required property", here '
        '"Invalid input for field \'driver\': Input should be a valid string"',
    'validate-patch_remove_interfaces/remove /nosuch_interface':
        "error: Ironic 'Cannot patch /nosuch_interface. Only the following can be updated: "
        'automated_clean, bios_interface, boot_interface, chassis_uuid, conductor_group, '
        'console_interface, deploy_interface, description, disable_power_off, driver, '
        'driver_info, extra, inspect_interface, instance_info, instance_name, '
        'instance_uuid, lessee, maintenance, management_interface, name, network_data, '
        'network_interface, owner, power...',
    'validate-patch_remove_interfaces/replace /deploy_interface nosuch':
        "status: Ironic 400, here 200; body: Ironic '<ironic error>', here None; shape: "
        "<body>: None vs {'allocation_uuid': 'null', 'automated_clean': 'null', "
        "'bios_interface': 'str', 'boot_interface': 'str', 'boot_mode': 'null', "
        "'chassis_uuid': 'null', 'clean_step': {}, 'conductor': 'str', 'conductor_group': "
        "'str', 'console_enabled': 'bool', 'console_interface': 'str', 'created_at': 'str', "
        "'deploy_interface': 'str', 'depl...",
    'validate-boot_device/GET boot_device/supported':
        'shape: supported_boot_devices.<list>: 1 vs 2; values: Ironic '
        "{'supported_boot_devices': ['pxe']}, here {'supported_boot_devices': ['pxe', "
        "'disk']}",
    'validate-boot_device/PUT boot_device disk':
        "status: Ironic 400, here 204; header content-type: Ironic 'application/json', here "
        "None; body: Ironic '<ironic error>', here '<empty>'; error_form: Ironic "
        "'debuginfo,faultcode,faultstring', here None; error: Ironic 'Invalid boot device "
        "disk specified.', here None",
    'validate-boot_device/GET boot_device after':
        "values: Ironic {'boot_device': 'pxe', 'persistent': False}, here {'boot_device': "
        "'pxe', 'persistent': True}",
    'discovery-v1/GET /v1@1.1':
        'shape: media_types.<item> extra; media_types.<list> extra; media_types.base '
        'missing; media_types.type missing',
    'discovery-v1/GET /v1@1.22':
        'shape: media_types.<item> extra; media_types.<list> extra; media_types.base '
        'missing; media_types.type missing',
    'discovery-v1/GET /v1@1.52':
        'shape: media_types.<item> extra; media_types.<list> extra; media_types.base '
        'missing; media_types.type missing',
    'discovery-v1/GET /v1@1.82':
        'shape: media_types.<item> extra; media_types.<list> extra; media_types.base '
        'missing; media_types.type missing',
    'discovery-v1/GET /v1@1.92':
        'shape: media_types.<item> extra; media_types.<list> extra; media_types.base '
        'missing; media_types.type missing',
    'discovery-v1/GET /v1@1.96':
        'shape: media_types.<item> extra; media_types.<list> extra; media_types.base '
        'missing; media_types.type missing',
    'discovery-v1/GET /v1@1.115':
        'shape: media_types.<item> extra; media_types.<list> extra; media_types.base '
        'missing; media_types.type missing',
    'discovery-v1/GET /v1@latest':
        'shape: media_types.<item> extra; media_types.<list> extra; media_types.base '
        'missing; media_types.type missing',
    'discovery-v1/GET /v1 no header':
        'shape: media_types.<item> extra; media_types.<list> extra; media_types.base '
        'missing; media_types.type missing',
    'discovery-v1/GET /v1/ no header':
        'shape: media_types.<item> extra; media_types.<list> extra; media_types.base '
        'missing; media_types.type missing',
    'discovery-v1/GET /v1@1.200':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'",
    'discovery-v1/GET /v1@2.1':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic 'Mutually exclusive versions "
        'requested. Version 2.1 requested but not supported by this service. The supported '
        "version range is: [1.1, 1.115].', here 'Version 2.1 was requested but the minor "
        'version is not supported by this service. The supported version range is: [1.1, '
        "1.115].'",
    'discovery-v1/GET /v1@bogus':
        "status: Ironic 406, here 400; error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic 'Invalid value for "
        'X-OpenStack-Ironic-API-Version header\', here "Invalid value for '
        "X-OpenStack-Ironic-API-Version header: 'bogus' (expected MAJOR.MINOR or "
        '\'latest\')"',
    'fake-console/enabled not a bool':
        'error: Ironic "Invalid enabled: Unrecognized value \'maybe\', acceptable values '
        "are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', "
        '\'yes\'", here "Invalid enabled: \'maybe\' is not a boolean (true/false, or one of '
        '0, 1, f, false, n, no, off, on, t, true, y, yes)"',
    'fake-vendor_passthru/POST no method':
        "error: Ironic 'Missing mandatory parameter: method', here 'Method not specified'",
    'unknown-paths/GET /v1/nosuch':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic '', here 'The resource could not "
        "be found: /v1/nosuch'",
    'unknown-paths/GET /nosuch':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic '', here 'The resource could not "
        "be found: /v1/nosuch'",
    'unknown-paths/GET /v2':
        "error_form: Ironic 'code,description,title', here "
        "'debuginfo,faultcode,faultstring'; error: Ironic '', here 'The resource could not "
        "be found: /v1/v2'",
    'unknown-paths/GET /v1/nodes/{node}/nosuch':
        "error: Ironic 'Field nosuch is not a valid field.', here 'Driver fake-hardware "
        'does not support nosuch (disabled or not implemented): ironsight does not '
        "implement GET /v1/nodes/{node}/nosuch.'",
    'unknown-methods/PUT /v1/nodes':
        "header allow: Ironic 'DELETE, GET, PATCH, POST', here None; error_form: Ironic "
        "'code,description,title', here 'debuginfo,faultcode,faultstring'; error: Ironic "
        "'', here 'Method PUT is not allowed on /v1/nodes'",
    'unknown-methods/DELETE /v1/nodes':
        'status: Ironic 400, here 405; header x-openstack-ironic-api-version: Ironic '
        "'1.115', here None; error: Ironic 'Missing mandatory parameter: node_ident', here "
        "'Method DELETE is not allowed on /v1/nodes'",
    'unknown-methods/PATCH /v1/ports':
        'status: Ironic 400, here 405; header x-openstack-ironic-api-version: Ironic '
        "'1.115', here None; error: Ironic 'Missing mandatory parameter: port_ident', here "
        "'Method PATCH is not allowed on /v1/ports'",
    'unknown-methods/POST /v1/nodes/{node}':
        'status: Ironic 400, here 405; header x-openstack-ironic-api-version: Ironic '
        '\'1.115\', here None; error: Ironic "Schema error for node: \'{node}\' is not of '
        'type \'object\'", here \'Method POST is not allowed on /v1/nodes/{node}\'',
    'unknown-methods/PUT /v1/nodes/{node}':
        "header allow: Ironic 'DELETE, GET, PATCH, POST', here None; error_form: Ironic "
        "'code,description,title', here 'debuginfo,faultcode,faultstring'; error: Ironic "
        "'', here 'Method PUT is not allowed on /v1/nodes/{node}'",
    'unknown-methods/POST /v1/nodes/{node}/states':
        "status: Ironic 405, here 400; header allow: Ironic 'GET', here None; error_form: "
        "Ironic 'code,description,title', here 'debuginfo,faultcode,faultstring'; error: "
        "Ironic '', here 'Driver fake-hardware does not support states (disabled or not "
        "implemented): ironsight does not implement POST /v1/nodes/{node}/states.'",
    'unknown-methods/DELETE /v1/drivers':
        "header allow: Ironic 'GET', here None; error_form: Ironic "
        "'code,description,title', here 'debuginfo,faultcode,faultstring'; error: Ironic "
        "'', here 'Method DELETE is not allowed on /v1/drivers'",
    'unknown-methods/POST /v1/conductors':
        "header allow: Ironic 'GET', here None; error_form: Ironic "
        "'code,description,title', here 'debuginfo,faultcode,faultstring'; error: Ironic "
        "'', here 'Method POST is not allowed on /v1/conductors'",
    'unknown-methods/DELETE /v1':
        "header x-openstack-ironic-api-version: Ironic '1.115', here None; error: Ironic "
        "'The server could not comply with the request since it is either malformed or "
        "otherwise incorrect.', here 'Method DELETE is not allowed on /v1'",
    'unknown-methods/POST /':
        "status: Ironic 200, here 405; header x-openstack-ironic-api-version: Ironic '1.1', "
        "here None; body: Ironic None, here '<ironic error>'; shape: <body>: "
        "{'default_version': {'id': 'str', 'links': {'<list>': 1, '<item>': {'href': 'str', "
        "'rel': 'str'}}, 'min_version': 'str', 'status': 'str', 'version': 'str'}, "
        "'description': 'str', 'name': 'str', 'versions': {'<list>': 1, '<item>': {'id': "
        "'str', 'links': {'<list>': 1,...",
}


# cases whose requests ironsight forwards to discoverd (it keeps the inspection rules)
NEEDS_DISCOVERD = {"gate-inspection_rules"}


@pytest.fixture
def conf_overrides(tmp_path: Path) -> dict[str, dict[str, str]]:
    return {
        # two hardware types, as the peer has (fake-hardware and ipmi)
        "conductor": {"enabled_hardware_types": "fake-hardware,pxe_ipmitool"},
        # discoverd in-process for NEEDS_DISCOVERD, reached through an ASGI transport
        "discoverd": {"service_url": "http://di.test/v1"},
        "introspection": {"connection": f"sqlite:///{tmp_path / 'di.sqlite'}"},
    }


@asynccontextmanager
async def discoverd_for(service: BaremetalService) -> AsyncIterator[None]:
    upgrade_discoverd(service.conf)
    discoverd = DiscoverdService(service.conf)
    await discoverd.start()
    proxy = DiscoverdProxy(service.conf, transport=httpx.ASGITransport(app=discoverd.app))
    service.app.state.deps = dataclasses.replace(service.app.state.deps, discoverd=proxy)
    try:
        yield
    finally:
        await proxy.close()
        await discoverd.stop()


def test_the_recording_covers_every_case_and_step() -> None:
    recorded = RECORDING["cases"]
    for name, case in CASES.items():
        assert name in recorded, f"{name} is not recorded: re-record (README)"
        assert [s["name"] for s in case["steps"]] == list(recorded[name]), \
            f"{name}: the recording's steps are not the case's: re-record it"
    for key in KNOWN_DIFFERENCES:
        case_name, _, step_name = key.partition("/")
        assert step_name in recorded.get(case_name, {}), f"KNOWN_DIFFERENCES: no step {key}"


@pytest.mark.parametrize("case_name", list(CASES))
async def test_ironsight_answers_as_ironic_39(service: BaremetalService, case_name: str) -> None:
    case = CASES[case_name]
    transport = httpx.ASGITransport(app=service.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bm.test") as client:
        if case_name in NEEDS_DISCOVERD:
            async with discoverd_for(service):
                observed = await record.run_case(client, case)
        else:
            observed = await record.run_case(client, case)
    recorded: dict[str, Any] = RECORDING["cases"][case_name]
    unexpected, known, fixed = [], [], []
    for step in case["steps"]:
        if step.get("not_compared"):
            continue
        key = f"{case_name}/{step['name']}"
        diffs = record.compare(recorded[step["name"]], observed[step["name"]],
                               step.get("volatile", ()))
        line = f"{key} ({step['method']} {step['path']} @{step['version']}): " + "; ".join(diffs)
        if key in KNOWN_DIFFERENCES:
            (known if diffs else fixed).append(line if diffs else key)
        elif diffs:
            unexpected.append(line)
    assert not unexpected, "differs from Ironic 39:\n" + "\n".join(unexpected)
    assert not fixed, "these match Ironic 39 now: remove them from KNOWN_DIFFERENCES:\n" + \
        "\n".join(fixed)
    if known:
        pytest.xfail("known differences:\n" + "\n".join(known))
