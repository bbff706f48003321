"""The ramdisk's endpoints, open without credentials and rate-limited per source address, as
discoverd's `/v1/continue`:
- `POST /v1/continue_inspection`: newer ramdisks (ironic-python-agent without a callback URL)
  post their report to the bare-metal API; the conductor hands it to discoverd, which owns
  processing and checks the callback token;
- `GET /v1/lookup` and `POST /v1/heartbeat/{node}`: what a stock IPA does next, answered with
  Ironic 39's shapes, texts and agent-token rules (conductor/agent.py says who gets a token)."""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from ironsight.baremetal.api.base import Ctx, links
from ironsight.baremetal.api.schemas import normalize_mac
from ironsight.baremetal.conductor.agent import (
    LOOKUP_FIELDS,
    MASK,
    TOKEN_KEY,
    AgentRecords,
    masked_internal_info,
)
from ironsight.common.api.body import read_json
from ironsight.common.api.endpoint import endpoint
from ironsight.common.exceptions import Invalid
from ironsight.common.ids import is_uuid_like

# discoverd's callback token header (ironsight.discoverd.callback_token.HEADER: the bare-metal
# service does not import discoverd).
TOKEN_HEADER = "X-Ironsight-Callback-Token"


@endpoint
async def continue_inspection(ctx: Ctx) -> Any:
    client = ctx.request.client
    ctx.deps.ramdisk_limiter.check(client.host if client else None)
    ctx.query({"node_uuid"})  # accepted for compatibility; discoverd looks the node up itself
    conf = ctx.deps.conf
    data = await read_json(ctx.request, conf.introspection.max_callback_size,
                           conf.api.max_json_depth, "Ramdisk data")
    if not isinstance(data, dict):
        raise Invalid("The ramdisk data must be a JSON object")
    # The callback token is discoverd's to check: forwarded unchanged, never logged here.
    token = ctx.request.headers.get(TOKEN_HEADER)
    result = await ctx.deps.conductor.continue_inspection(data, token)
    return 202, {"uuid": result.get("uuid")}


RAMDISK_ENDPOINTS = 22  # lookup and heartbeat exist from 1.22 (404 below, as Ironic)
AGENT_TOKEN = 62  # lookup hands out the agent token from 1.62


def _limit(ctx: Ctx) -> None:
    client = ctx.request.client
    ctx.deps.ramdisk_limiter.check(client.host if client else None)


def _agents(ctx: Ctx) -> AgentRecords:
    return AgentRecords(ctx.deps.records, ctx.deps.conf.api.agent_lookup_window)


def _macs(raw: str | None) -> list[str]:
    """Ironic ignores the addresses that are not MACs (it only logs them)."""
    found = []
    for item in (raw or "").split(","):
        try:
            found.append(normalize_mac(item.strip()))
        except ValueError:
            continue
    return found


def agent_config(ctx: Ctx, token: str | None) -> dict[str, Any]:
    """Ironic's lookup `config`, with the values that mean "nothing extra" for ironsight."""
    return {
        "metrics": {"backend": "noop", "prepend_host": False, "prepend_uuid": False,
                    "prepend_host_reverse": True, "global_prefix": None},
        "metrics_statsd": {"statsd_host": "localhost", "statsd_port": 8125},
        "heartbeat_timeout": ctx.deps.conf.api.ramdisk_heartbeat_timeout,
        "agent_containers": {"allow_arbitrary_containers": False, "allowed_containers": [],
                             "container_steps_file": "/etc/ironic-python-agent.d/mysteps.yaml",
                             "runner": "podman", "pull_options": [],
                             "run_options": ["--rm", "--network=host"]},
        "agent_token": token, "agent_token_required": True,
        "agent_md5_checksum_enable": False, "disable_deep_image_inspection": False,
        "permitted_image_formats": ["raw", "gpt", "qcow2", "iso"],
        "agent_skip_bmc_detect": False, "enable_bios_bootloader_install": False,
        "tls_min_version": "1.2", "tls_cipher_suites": None,
    }


@endpoint
async def lookup(ctx: Ctx) -> Any:
    _limit(ctx)
    params = ctx.query({"addresses", "node_uuid"})
    node_uuid = params.get("node_uuid")
    if node_uuid is not None and not is_uuid_like(node_uuid):
        raise Invalid(f"Expected UUID for node_uuid: {node_uuid}")
    macs = _macs(params.get("addresses"))
    if not macs and not node_uuid:
        raise Invalid("At least one of 'addresses' and 'node_uuid' parameters is required")
    agents = _agents(ctx)
    node = await agents.find(node_uuid, macs)
    node, token = await agents.lookup(node, with_token=ctx.at_least(AGENT_TOKEN))
    if token is None and (node.get("driver_internal_info") or {}).get(TOKEN_KEY):
        token = MASK
    doc: dict[str, Any] = {f: node[f] for f in LOOKUP_FIELDS}
    doc["driver_internal_info"] = masked_internal_info(node.get("driver_internal_info"))
    doc["links"] = links(ctx.base_url, f"nodes/{node['uuid']}")
    return 200, {"node": doc, "config": agent_config(ctx, token)}


def _string(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise Invalid(f"Invalid value for {name}: {value!r} is not a string")
    return value


@endpoint
async def heartbeat(ctx: Ctx) -> Any:
    """`POST /v1/heartbeat/{node}`, or `POST /v1/heartbeat` naming the node in the body, as
    Ironic routes both. A node named by UUID is looked up before the token is checked (an
    unknown one is a 404, as Ironic); one named by name is not, so that a caller without a
    token cannot probe node names."""
    _limit(ctx)
    body = await ctx.body()
    if not isinstance(body, dict):
        raise Invalid("The heartbeat must be a JSON object")
    ident = ctx.request.path_params.get("node_ident") or body.pop("node_ident", None)
    if not isinstance(ident, str) or not ident:
        raise Invalid("Missing mandatory parameter: node_ident")
    if is_uuid_like(ident):
        await ctx.deps.records.get_node(ident)
    callback_url = _string(body, "callback_url")
    if callback_url is None:
        raise Invalid("Missing mandatory parameter: callback_url")
    if callback_url and not callback_url.startswith(("http://", "https://")):
        raise Invalid('An issue with the supplied "callback_url" has been detected.')
    token = _string(body, "agent_token")
    version = _string(body, "agent_version")
    for name in ("agent_verify_ca", "agent_status", "agent_status_message"):
        _string(body, name)  # accepted: ironsight never calls the agent back
    if token is None:
        raise Invalid("Agent token is required for heartbeat processing.")
    if version is None:
        raise Invalid("Agent did not transmit a version, and a version is required. "
                      "Please update the agent being used.")
    await _agents(ctx).heartbeat(ident, callback_url, token, version)
    return 202, None


routes = [Route("/v1/continue_inspection", continue_inspection, methods=["POST"]),
          Route("/v1/lookup", lookup, methods=["GET"]),
          Route("/v1/heartbeat", heartbeat, methods=["POST"]),
          Route("/v1/heartbeat/{node_ident}", heartbeat, methods=["POST"])]
