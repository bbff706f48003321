"""The bare-metal service's ASGI application: Ironic's v1 API, built from the common toolkit."""

from __future__ import annotations

from starlette.applications import Starlette

from ironsight.baremetal.api import nodes, ports, ramdisk, root
from ironsight.baremetal.api.base import VERSIONS, BaremetalDeps
from ironsight.common.api.app import ApiSpec
from ironsight.common.api.app import create_app as build_app
from ironsight.common.api.errors import ironic_envelope
from ironsight.common.api.metrics import Metrics


def create_app(deps: BaremetalDeps, metrics: Metrics | None = None) -> Starlette:
    conf = deps.conf.api
    spec = ApiSpec(versions=VERSIONS, envelope=ironic_envelope,
                   public_endpoint=conf.public_endpoint, max_body_size=conf.max_body_size,
                   max_json_depth=conf.max_json_depth, metrics=metrics)
    return build_app(spec, deps, [*root.routes, *nodes.routes, *ports.routes, *ramdisk.routes])
