"""discoverd's ASGI applications: the inspector's v1 API, built from the common toolkit, plus
the PXE side's boot-file routes when it runs; and the open subset booting nodes need (the
callback and the boot files), for a listener of its own on the provisioning network."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.routing import BaseRoute

from ironsight.common.api.app import ApiSpec
from ironsight.common.api.app import create_app as build_app
from ironsight.common.api.errors import inspector_envelope
from ironsight.common.api.metrics import Metrics
from ironsight.common.auth.identity import Identity
from ironsight.common.auth.policy import VERSION_DOCUMENTS, AccessRules, rule
from ironsight.common.auth.strategy import authenticator
from ironsight.common.exceptions import Forbidden
from ironsight.discoverd.api import (
    callback,
    deadlines,
    discovery,
    fleet,
    inspection_rules,
    introspection,
    members,
    phases,
    rejected,
    root,
    rules,
    webhooks,
)
from ironsight.discoverd.api.base import VERSIONS, DiscoverdDeps

# Open without credentials: version discovery, the ramdisk's report (checked by its callback
# token instead) and the boot files iPXE fetches.
ACCESS = AccessRules(public=(VERSION_DOCUMENTS,
                             rule({"POST"}, r"/v1/continue|/v1/hello|/v1/beat"),
                             rule({"GET", "HEAD"}, r"/boot\.ipxe|/boot/[^/]+\.ipxe|/pxe/[^/]+")),
                     # Inspection rules change what every inspection writes (and may carry
                     # secrets): admin only, as upstream's rule policies; reads need a reader.
                     admin_only=(rule({"POST", "PUT", "PATCH", "DELETE"},
                                      r"/v1/rules(/[^/]+)?|/v1/inspection_rules(/[^/]+)?"),
                                 # a callback token for a ramdisk the caller boots itself,
                                 # and the steps of that boot
                                 rule({"POST"}, r"/v1/introspection/[^/]+/boot_params"),
                                 rule({"POST"}, r"/v1/phases"),
                                 # the delivery manifest names BMC credentials (by file),
                                 # a resolution moves ports or creates a node
                                 rule({"POST"}, r"/v1/discovery/.*"),
                                 # a delivery sent again, to a receiver outside
                                 rule({"POST"}, r"/v1/webhooks/.*")),
                     # a fleet query's long form only reads
                     read_only=(rule({"POST"}, r"/v1/fleet/query"),))


async def system_only(ctx: Any) -> None:
    """The inspector's API has no project scope (upstream's policies are the system's): a
    caller acting for one project is refused here, whatever its role."""
    identity = ctx.request.scope.get("state", {}).get("identity")
    if isinstance(identity, Identity) and identity.project:
        raise Forbidden(f"User {identity.user!r} acts for project {identity.project!r}; "
                        "inspection is the operators': use a token scoped to the system or "
                        "to an operators' project.")


def _spec(deps: DiscoverdDeps, metrics: Metrics | None, *, open_only: bool) -> ApiSpec:
    conf = deps.conf.introspection
    return ApiSpec(versions=VERSIONS, envelope=inspector_envelope,
                   public_endpoint=conf.public_endpoint, max_body_size=conf.max_body_size,
                   max_json_depth=conf.max_json_depth, metrics=metrics,
                   authenticator=None if open_only else authenticator(deps.conf),
                   access=ACCESS, authorize=system_only)


def create_app(deps: DiscoverdDeps, extra_routes: Sequence[BaseRoute] = (),
               metrics: Metrics | None = None) -> Starlette:
    return build_app(_spec(deps, metrics, open_only=False), deps,
                     [*root.routes, *introspection.routes, *callback.routes,
                      *members.routes, *phases.routes, *rejected.routes, *deadlines.routes,
                      *discovery.routes, *fleet.routes,
                      *rules.routes, *inspection_rules.routes, *webhooks.routes,
                      *extra_routes])


def create_ramdisk_app(deps: DiscoverdDeps, boot_routes: Sequence[BaseRoute] = ()
                       ) -> Starlette:
    """Only the open endpoints, for `[introspection] ramdisk_host`."""
    return build_app(_spec(deps, None, open_only=True), deps,
                     [*root.routes, *callback.routes, *boot_routes])
