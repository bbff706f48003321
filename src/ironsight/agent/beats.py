"""Progress beats: after its hello, the agent tells discoverd what it is doing and sends the
ramdisk's log as it grows, so that a ramdisk that hangs or fails to report leaves its last
words with discoverd (which keeps the last 64 KiB of each attempt's log).

The log is /init's (`/tmp/ramdisk.log`) and the agent's own output (`/tmp/agent.log`, where
/init tees it); each beat carries what was added since the previous one. A beat is one short
try: a lost one is only a gap, the next one carries the text again.
"""

from __future__ import annotations

import json
import os
import threading

from . import cmdline, post

INTERVAL = 5.0
TIMEOUT = 5.0
CHUNK = 16 * 1024  # text per beat at most (discoverd takes 20 KiB)
LOG_FILES = ("tmp/ramdisk.log", "tmp/agent.log")


def url_for(hello_url: str) -> str:
    base, sep, query = hello_url.partition("?")
    return base.removesuffix("/hello") + "/beat" + sep + query


class Beats:
    def __init__(self, url: str, token: str | None, macs: list[str], root: str = "/",
                 interval: float = INTERVAL) -> None:
        self.url = url
        self.headers = {cmdline.TOKEN_HEADER: token} if token else {}
        self.macs = macs
        self.root = root
        self.interval = interval
        self.stage = "collecting"
        self._offsets = dict.fromkeys(LOG_FILES, 0)
        self._pending: dict[str, int] = {}  # the offsets once the beat being sent is taken
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="beats", daemon=True)

    def start(self) -> Beats:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.send()

    def finish(self, stage: str) -> None:
        """The last beat, at once (before the report, or after it could not be posted)."""
        self._stop.set()
        self.stage = stage
        self.send()

    def send(self) -> bool:
        with self._lock:
            text = self._new_text()
            body = json.dumps({"macs": self.macs, "stage": self.stage, "log": text}).encode()
            try:
                post.post(self.url, body, attempts=1, timeout=TIMEOUT, headers=self.headers)
            except post.PostError:
                return False  # the text goes again with the next beat
            self._commit()
            return True

    def _new_text(self) -> str:
        parts = []
        self._pending.clear()
        for name in LOG_FILES:
            path = os.path.join(self.root, name)
            try:
                with open(path, "rb") as f:
                    f.seek(self._offsets[name])
                    data = f.read(CHUNK)
            except OSError:
                continue
            self._pending[name] = self._offsets[name] + len(data)
            if data:
                parts.append(data.decode("utf-8", errors="replace"))
        return "".join(parts)[-CHUNK:]

    def _commit(self) -> None:
        self._offsets.update(self._pending)
