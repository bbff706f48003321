"""The console across a kill -9 of its service: sessions live on (the signed cookie and its
key file outlast the process), and a bulk action cut short leaves each node either done or
untouched, none locked, so that running it again finishes the job."""

from __future__ import annotations

import contextlib
import re
import signal
import threading
from pathlib import Path

import httpx
from tests.functional.waits import until

from .lab import Lab, csrf_of, logged_in, start

NODES = 200  # one at a time, ~0.3 s in all: the kill lands well before the last


def kill_and_restart(lab: Lab) -> None:
    assert lab.svc.proc is not None
    lab.svc.proc.send_signal(signal.SIGKILL)
    lab.svc.proc.wait(10)
    lab.svc.start()


def traits(lab: Lab) -> dict[str, list[str]]:
    with lab.api() as api:
        nodes = api.get("/v1/nodes/detail", params={"limit": "1000"}).json()["nodes"]
    return {n["uuid"]: n["traits"] for n in nodes}


def test_a_session_outlives_a_kill_of_the_service(tmp_path: Path) -> None:
    lab = start(tmp_path)
    try:
        with logged_in(lab, "viewer") as client:
            kill_and_restart(lab)
            page = client.get("/nodes")
        assert page.status_code == 200
        assert re.search(r'id="whoami">viewer<', page.text)
    finally:
        lab.svc.stop()


def test_a_bulk_action_cut_by_a_kill_leaves_nodes_done_or_untouched_and_runs_again(
        tmp_path: Path) -> None:
    # one node at a time, so that the kill lands in the middle of the run
    lab = start(tmp_path, console={"bulk_concurrency": "1"})
    try:
        # "all that match" acts in UUID order: the smallest is done first
        first = min(lab.make_node(managed=False, owner="cut-short")["uuid"]
                    for _ in range(NODES))
        with logged_in(lab, "admin") as client:
            form = {"csrf": csrf_of(client), "action": "add_trait", "scope": "matching",
                    "trait": "CUSTOM_CUT_SHORT", "f_owner": "cut-short",
                    "expected": str(NODES)}
            run = threading.Thread(target=lambda: _post_ignoring_the_cut(client, form))
            run.start()
            with lab.api() as api:  # asked as often as it answers: the run is fast
                until(lambda: api.get(f"/v1/nodes/{first}").json()["traits"], 30,
                      "the first node done", interval=0)
            kill_and_restart(lab)
            run.join(30)
            done = [u for u, t in traits(lab).items() if t]
            assert 0 < len(done) < NODES, len(done)
            with lab.api() as api:
                nodes = api.get("/v1/nodes/detail").json()["nodes"]
            assert all(n["reservation"] is None for n in nodes)
            assert all(t in ([], ["CUSTOM_CUT_SHORT"]) for t in traits(lab).values())
            again = client.post("/nodes/bulk/run", data={**form, "csrf": csrf_of(client)})
        assert again.status_code == 200, again.text
        assert f"{NODES} of {NODES} done" in again.text
        assert all(t == ["CUSTOM_CUT_SHORT"] for t in traits(lab).values())
    finally:
        lab.svc.stop()


def _post_ignoring_the_cut(client: httpx.Client, form: dict[str, str]) -> None:
    # the service is killed under it: what the test is about
    with contextlib.suppress(httpx.TransportError):
        client.post("/nodes/bulk/run", data=form, timeout=60)
