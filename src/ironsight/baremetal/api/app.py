"""The bare-metal service's ASGI applications: Ironic's v1 API, built from the common toolkit,
and the open subset a ramdisk needs, for a listener of its own on the provisioning network."""

from __future__ import annotations

from starlette.applications import Starlette

from ironsight.baremetal.api import (
    allocations,
    chassis,
    conductors,
    deploy_templates,
    discovery,
    events,
    fleet,
    inspection_rules,
    microversions,
    node_extras,
    node_inventory,
    nodes,
    portgroups,
    ports,
    project_scope,
    ramdisk,
    root,
    runbooks,
    vmedia,
    volume,
)
from ironsight.baremetal.api.base import VERSIONS, BaremetalDeps
from ironsight.baremetal.api.legacy_paths import LegacyPaths
from ironsight.common.api.app import ApiSpec
from ironsight.common.api.app import create_app as build_app
from ironsight.common.api.errors import ironic_envelope
from ironsight.common.api.metrics import Metrics
from ironsight.common.auth.policy import READS, VERSION_DOCUMENTS, AccessRules, rule
from ironsight.common.auth.strategy import authenticator

ALL_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}
# Open without credentials: what Ironic leaves open too (version discovery, the ramdisk's
# callbacks; those are protected by other means, see docs/security.md).
ACCESS = AccessRules(
    public=(VERSION_DOCUMENTS,
            rule({"POST"}, r"/v1/continue_inspection"),
            rule({"GET"}, r"/v1/lookup"),
            rule({"POST"}, r"/v1/heartbeat(/[^/]+)?"),
            # a node's virtual media, fetched by its BMC (admitted by the image's random name)
            rule({"GET", "HEAD"}, r"/vmedia/[^/]+/[^/]+\.iso")),
    admin_only=(rule({"DELETE"}, r"/v1/nodes/[^/]+"),
                # Ironic's baremetal:events:post: the networking service (admin)
                rule({"POST"}, r"/v1/events"),
                # Ironic's baremetal:inspection_rule:{create,update,delete}: admin
                rule({"POST", "PATCH", "PUT", "DELETE"}, r"/v1/inspection_rules(/.*)?"),
                # ironsight's own: another service's events (POST .../changes, a node
                # write with events that go with it, needs a member, as a PATCH does)
                rule({"POST"}, r"/v1/nodes/[^/]+/history"),
                # ironsight's own: lifting (or confirming) a discovered node's quarantine
                rule({"POST"}, r"/v1/discovery/(approve|reject)"),
                # Ironic's baremetal:{node,driver}:vendor_passthru: admin, listing too
                rule(ALL_METHODS, r"/v1/(nodes|drivers)/[^/]+/vendor_passthru(/methods)?")),
    # Ironic's baremetal:node:get_console, get_boot_device (also .../supported) and
    # validate: a reader is refused
    member_only=(rule(READS, r"/v1/nodes/[^/]+/states/console"),
                 rule(READS, r"/v1/nodes/[^/]+/management/boot_device(/supported)?"),
                 rule(READS, r"/v1/nodes/([^/]+/)?validate")))


def _spec(deps: BaremetalDeps, metrics: Metrics | None, *, open_only: bool) -> ApiSpec:
    conf = deps.conf.api
    return ApiSpec(versions=VERSIONS, envelope=ironic_envelope,
                   public_endpoint=conf.public_endpoint, max_body_size=conf.max_body_size,
                   max_json_depth=conf.max_json_depth, metrics=metrics,
                   authenticator=None if open_only else authenticator(deps.conf),
                   access=ACCESS, gate=microversions.check,
                   authorize=project_scope.authorize, conceal=project_scope.conceal)


def create_app(deps: BaremetalDeps, metrics: Metrics | None = None) -> Starlette:
    return _legacy(build_app(_spec(deps, metrics, open_only=False), deps,
                     [*root.routes, *nodes.routes, *node_extras.routes, *node_inventory.routes,
                      *ports.routes,
                      *ramdisk.routes, *vmedia.routes, *chassis.routes, *portgroups.routes,
                      *conductors.routes,
                      *deploy_templates.routes, *runbooks.routes, *volume.routes,
                      *allocations.routes, *inspection_rules.routes, *events.routes,
                      *discovery.routes, *fleet.routes,
                      # last: what no other route took under a node (never a bare 404)
                      *node_extras.fallback_routes]))


def create_ramdisk_app(deps: BaremetalDeps) -> Starlette:
    """Only the open endpoints, for `[api] ramdisk_host`: nothing there needs credentials."""
    return _legacy(build_app(_spec(deps, None, open_only=True), deps,
                             [*root.routes, *ramdisk.routes, *vmedia.routes]))


def _legacy(app: Starlette) -> Starlette:
    """Outermost: Ironic's other URL forms become the canonical path before authentication
    and routing see the request."""
    app.add_middleware(LegacyPaths, versions=VERSIONS)
    return app
