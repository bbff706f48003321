"""The browser harness itself (conftest.py): Debian's Chromium, driven by Playwright, loads a
page from a local HTTP server and reads its DOM, and JavaScript errors are caught."""

from __future__ import annotations

import functools
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.functional.conftest import free_tcp_port

PAGES = {
    # a data: icon, or Chromium asks for /favicon.ico and logs the 404 as a console error
    "index.html": """<!doctype html>
<html><head><meta charset="utf-8"><title>Ironsight harness</title>
<link rel="icon" href="data:,"></head>
<body><h1 id="heading">Nodes</h1><p id="count"></p>
<script>document.getElementById("count").textContent = 3 + " nodes";</script>
</body></html>
""",
    "broken.html": """<!doctype html>
<html><head><meta charset="utf-8"><title>Broken</title><link rel="icon" href="data:,"></head>
<body><script>throw new Error("harness-boom");</script>
<script>console.error("harness-logged");</script></body></html>
""",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """PAGES served by http.server (in a thread) on a free port: its base URL."""
    root: Path = tmp_path_factory.mktemp("site")
    for name, text in PAGES.items():
        (root / name).write_text(text)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    port = free_tcp_port()
    server = ThreadingHTTPServer(("127.0.0.1", port),
                                 functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_page_title_and_dom(page: Page, js_errors: list[str], site: str) -> None:
    page.goto(f"{site}/index.html")
    assert page.title() == "Ironsight harness"
    expect(page.locator("#heading")).to_have_text("Nodes")
    expect(page.locator("#count")).to_have_text("3 nodes")  # written by the page's script
    assert js_errors == []


@pytest.mark.allow_js_errors("harness-boom", "harness-logged")
def test_javascript_errors_are_caught(page: Page, js_errors: list[str], site: str) -> None:
    page.goto(f"{site}/broken.html")
    expect(page).to_have_title("Broken")
    page.evaluate("() => 0")  # one more round trip: the load's events have been delivered
    assert any("pageerror" in e and "harness-boom" in e for e in js_errors), js_errors
    assert any(e.startswith("console.error") and "harness-logged" in e for e in js_errors), \
        js_errors


CHILD_TESTS = """
import pytest

THROWS = "data:text/html,<title>t</title><script>throw new Error('child-boom')</script>"


def test_unexpected_error(page):
    page.goto(THROWS)


@pytest.mark.allow_js_errors("some-other-error")
def test_error_not_among_the_allowed(page):
    page.goto(THROWS)
"""


def test_unexpected_javascript_error_fails_the_test(chromium_path: str, tmp_path: Path) -> None:
    """Without the marker (or with one allowing other errors) a JavaScript error fails the
    test: shown by a pytest of its own on this conftest.py (a second Playwright cannot start
    in this thread while ours runs, see conftest.py). `chromium_path`: skipped with the others
    where Chromium is missing."""
    (tmp_path / "conftest.py").write_text(Path(__file__).with_name("conftest.py").read_text())
    (tmp_path / "test_child.py").write_text(CHILD_TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    allow_js_errors: expected\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "test_child.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "2 passed, 2 errors" in out, out
    # Each failing test's own teardown section (the short summary repeats it only where the
    # terminal is wide enough, so it is not counted).
    for name in ("test_unexpected_error", "test_error_not_among_the_allowed"):
        assert f"ERROR at teardown of {name} _" in out, out
    assert "JavaScript errors in the browser console" in out, out
    assert "pageerror: Error: child-boom" in out, out
