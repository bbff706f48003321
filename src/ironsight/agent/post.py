"""POST the document to the callback URL, retrying like IPA.

Retried: connection errors, timeouts, HTTP 5xx, 409 (Ironic's "node locked") and 429 (rate
limited: the wait is at least its Retry-After).
Final: any other 4xx (the document or the node state is wrong: retrying will not
help), and URLs urllib cannot use. Waits grow exponentially (1, 2, 4 ... s,
capped); IPA waits 5-30 s, shorter here because the ramdisk has nothing else to do.
Proxies from the environment are ignored: the callback is on the provisioning
network.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

ATTEMPTS = 5
DELAY = 1.0
MAX_DELAY = 30.0
TIMEOUT = 30.0  # per request, as IPA's http_request_timeout


class PostError(Exception):
    """The document could not be delivered to this URL."""


class Response:
    def __init__(self, status: int, body: str) -> None:
        self.status = status
        self.body = body


def post(url: str, body: bytes, *, attempts: int = ATTEMPTS, delay: float = DELAY,
         max_delay: float = MAX_DELAY, timeout: float = TIMEOUT,
         sleep: Callable[[float], None] = time.sleep,
         headers: dict[str, str] | None = None) -> Response:
    """Deliver `body` (with `headers` on top of JSON's: the callback token's); raises
    PostError after a final answer or the last attempt."""
    import http.client  # already loaded by urllib.request: no extra cost
    import urllib.error
    import urllib.request  # imported here: `--print` never pays for it

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        request = urllib.request.Request(url, data=body, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json",
            **(headers or {})})
    except ValueError as exc:  # unknown URL type, malformed URL
        raise PostError(f"invalid callback URL {url!r}: {exc}") from None
    wait = delay
    for attempt in range(1, max(attempts, 1) + 1):
        pause = 0.0
        try:
            with opener.open(request, timeout=timeout) as reply:
                return Response(reply.status, _text(reply.read()))
        except urllib.error.HTTPError as exc:
            message = f"HTTP {exc.code} from {url}: {_text(exc.read())}"
            if exc.code not in (409, 429) and exc.code < 500:
                raise PostError(message) from None
            if exc.code == 429:
                pause = min(_seconds(exc.headers.get("Retry-After")), max_delay)
        except (OSError, http.client.HTTPException) as exc:  # URLError is an OSError
            message = f"cannot reach {url}: {getattr(exc, 'reason', None) or exc}"
        if attempt >= attempts:
            raise PostError(f"{message} (gave up after {attempt} attempts)")
        log(f"{message}; retrying in {max(wait, pause):g} s")
        sleep(max(wait, pause))
        wait = min(wait * 2, max_delay)
    raise AssertionError("unreachable")


def log(message: str) -> None:
    print("ironsight-agent:", message, file=sys.stderr, flush=True)


def _seconds(value: str | None) -> float:
    try:
        return max(float(value or 0), 0.0)
    except ValueError:
        return 0.0


def _text(data: bytes, limit: int = 2000) -> str:
    return data.decode("utf-8", "replace")[:limit]
