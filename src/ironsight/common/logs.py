"""Logging set-up: one format for both services; secrets are never passed to loggers."""

from __future__ import annotations

import logging
import sys


def setup(debug: bool = False, log_file: str = "") -> None:
    handler: logging.Handler = (logging.FileHandler(log_file) if log_file
                                else logging.StreamHandler(sys.stderr))
    handler.setFormatter(logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    for noisy in ("pyghmi", "asyncssh", "httpx", "httpcore", "aiohttp", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
