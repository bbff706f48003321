"""The inspection board: how many running inspections are at each step, and the attempts
quiet the longest first (discoverd's `GET /v1/board`); the page polls for itself."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ironsight.baremetal.console.pages import console_of, fleet_wide, render

LIMIT = 50


async def board(request: Request) -> Response:
    fleet_wide(request)
    reply = await console_of(request).calls.discoverd("GET", "board", {"limit": str(LIMIT)})
    template = "board_part.html" if request.query_params.get("part") == "1" else "board.html"
    return render(request, template, board=reply.data if reply.ok else None,
                  problem=None if reply.ok else reply.error)
