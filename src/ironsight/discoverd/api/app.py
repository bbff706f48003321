"""discoverd's ASGI application: the inspector's v1 API, built from the common toolkit, plus
the PXE side's boot-file routes when it runs."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.applications import Starlette
from starlette.routing import BaseRoute

from ironsight.common.api.app import ApiSpec
from ironsight.common.api.app import create_app as build_app
from ironsight.common.api.errors import inspector_envelope
from ironsight.common.api.metrics import Metrics
from ironsight.discoverd.api import callback, introspection, members, root
from ironsight.discoverd.api.base import VERSIONS, DiscoverdDeps


def create_app(deps: DiscoverdDeps, extra_routes: Sequence[BaseRoute] = (),
               metrics: Metrics | None = None) -> Starlette:
    conf = deps.conf.introspection
    spec = ApiSpec(versions=VERSIONS, envelope=inspector_envelope,
                   public_endpoint=conf.public_endpoint, max_body_size=conf.max_body_size,
                   max_json_depth=conf.max_json_depth, metrics=metrics)
    return build_app(spec, deps, [*root.routes, *introspection.routes, *callback.routes,
                                  *members.routes, *extra_routes])
