"""A real browser for the web console's tests: Playwright (sync API) driving Debian's own
Chromium (the `chromium` package, installed by scripts/install-deps.sh), headless.

Playwright's browser download (`playwright install`) is not used: the browser is
/usr/lib/chromium/chromium, the binary itself. /usr/bin/chromium works too, but it is a shell
wrapper that sources /etc/chromium.d (API keys, --enable-gpu-rasterization and other flags of
the desktop browser); the binary gets exactly Playwright's arguments and ours.

Fixtures:

- `chromium_path` (session): the Chromium executable; skips every browser test, with the
  reason, only where the package is not installed.
- `browser` (package): one headless Chromium (playwright.sync_api.Browser) for the tests of
  this package; Playwright stops after its last test (see "asyncio" below).
- `js_errors` (function): the JavaScript errors of the test's `page`, as strings: every
  console message of type "error" ("console.error <url>:<line>: <text>", which includes
  Chromium's own "Failed to load resource" lines) and every uncaught exception
  ("pageerror: <name>: <message>"). The test may assert on it.
- `page` (function): a fresh page in a fresh context (no cookies or storage shared with
  other tests; HTTPS errors ignored: test services use their own CA). After the test the
  context is closed (which delivers late console messages) and the test fails if
  `js_errors` is not empty (pytest.fail, reported as an error at its teardown): no
  JavaScript error in the browser console, on any page. Headless Chromium asks every site
  for /favicon.ico: a 404 there is such an error. `@pytest.mark.allow_js_errors` lets a
  test expect errors: without arguments any error, with arguments only errors containing
  one of those strings.

The tests here are marked `functional` by their folder (tests/conftest.py).

asyncio: the sync API runs Playwright's own event loop in this thread (in a greenlet), and
between two sync calls it leaves that loop marked as the thread's running loop
(asyncio._set_running_loop in playwright/_impl/_greenlets.py) for as long as Playwright is
started. Nothing asyncio can run in this thread meanwhile: an async test or fixture of
pytest-asyncio (asyncio_mode = auto) fails with "Runner.run() cannot be called from a running
event loop" (or "Cannot run the event loop while another loop is running"), as does
asyncio.run(). Hence the tests here are sync, the services they test run in another process
or thread, and Playwright lives for this package only, not for the session (it was: every
async test of the folders after this one failed): it stops before they run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Error, Page

CHROMIUM = "/usr/lib/chromium/chromium"  # Debian's chromium package (the binary, no wrapper)

# Root in a container: Chromium's sandbox needs user namespaces (or a setuid helper, which
# Debian does not ship) and refuses root anyway; Docker's default /dev/shm is 64 MB, too
# small for the renderer (it uses /tmp instead); no GPU. Playwright itself already passes
# --no-sandbox (chromium_sandbox=False) and --disable-dev-shm-usage: said here once more
# so that they do not depend on Playwright's defaults.
LAUNCH_ARGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's Chromium binary; skips where the `chromium` package is not installed."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"{CHROMIUM} is missing: the browser tests need Debian's chromium package "
                    "(scripts/install-deps.sh installs it)")
    return CHROMIUM


@pytest.fixture(scope="package")
def browser(chromium_path: str) -> Iterator[Browser]:
    """One headless Chromium for the tests of this package (not the session's: see asyncio
    in the docstring of this module; __init__.py makes this folder a package)."""
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=chromium_path, headless=True,
                                             args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


@pytest.fixture
def js_errors() -> list[str]:
    """The JavaScript errors of the test's `page` (filled by `page`)."""
    return []


@pytest.fixture
def page(browser: Browser, js_errors: list[str], request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh page in a fresh context; the test fails on any JavaScript error in it."""
    context = browser.new_context(ignore_https_errors=True)

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            where = message.location
            js_errors.append(f"console.error {where.get('url', '')}:{where.get('lineNumber', '')}: "
                             f"{message.text}")

    def on_page_error(error: Error) -> None:
        js_errors.append(f"pageerror: {error.name}: {error.message}")

    # on the context, not the page: also the popups and pages a test opens itself
    context.on("console", on_console)
    context.on("weberror", lambda web_error: on_page_error(web_error.error))
    try:
        yield context.new_page()
    finally:
        context.close()  # delivers the console messages still on their way
    marker = request.node.get_closest_marker("allow_js_errors")
    if marker is not None:
        unexpected = [e for e in js_errors if marker.args and not any(a in e for a in marker.args)]
    else:
        unexpected = list(js_errors)
    if unexpected:
        pytest.fail("JavaScript errors in the browser console:\n" + "\n".join(unexpected),
                    pytrace=False)


# a rule every lab inspection runs and matches (it only logs), for the node page's rules tab
LAB_RULE = {"description": "console lab: more than 4 GiB",
            "conditions": [{"op": "gt", "args": {
                "values": ["{inventory[memory][physical_mb]}", 4096]}}],
            "actions": [{"op": "log", "args": {"msg": "a lab machine"}}]}


@pytest.fixture(scope="package")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """`ironsight serve` with users of every role (tests/functional/security.py) and a small
    fleet: two big GPU nodes and one small node inspected, one node never inspected."""
    from .lab import start

    found = start(tmp_path_factory.mktemp("console"))
    try:
        with httpx.Client(base_url=found.svc.di_url, auth=found.svc_user, timeout=30) as di:
            resp = di.post("/v1/inspection_rules", json=LAB_RULE)  # traced on the rules tab
            assert resp.status_code == 201, resp.text
        big = [found.make_node(name=f"gpu-{i}") for i in (1, 2)]
        for i, node in enumerate(big):
            found.inspect(node, cpus=64, memory_mb=512 * 1024, gpus=4, vendor="Dell Inc.",
                          product="PowerEdge XE8545", serial=f"GPU{i}")
        small = found.make_node(name="small-1")
        found.inspect(small, cpus=4, memory_mb=8192, vendor="ACME", product="Mini",
                      serial="S1")
        found.make_node(name="fresh-1")
        yield found
    finally:
        found.svc.stop()
