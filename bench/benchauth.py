"""`--auth` of the benchmarks: both services with http_basic (a bcrypt htpasswd file at
`htpasswd -B`'s default cost, 5; BENCH_BCRYPT_COST to change it), authenticating to each
other, and the benchmark's clients sending the credentials of an admin user. Off:
CREDENTIALS stays empty and nothing is sent."""

from __future__ import annotations

import os
from pathlib import Path

import bcrypt

from ironsight.common.auth.credentials import Credentials

COST = int(os.environ.get("BENCH_BCRYPT_COST", "5"))
USERS = {"bench": "bench-pass-1", "bm-svc": "bm-svc-pass-2", "di-svc": "di-svc-pass-3"}
CREDENTIALS = Credentials()


def enable(state: Path, headers: dict[str, str]) -> dict[str, str]:
    """Write the user file; the benchmark's clients authenticate from now on (`headers`, the
    loadgen headers of the bare-metal API, get the Authorization header). The lines each
    config section needs."""
    global CREDENTIALS
    path = state / "htpasswd"
    path.write_text("".join(f"{user}:{bcrypt.hashpw(pw.encode(), bcrypt.gensalt(COST)).decode()}\n"
                            for user, pw in USERS.items()))
    CREDENTIALS = Credentials("bench", USERS["bench"])
    headers.update(CREDENTIALS.headers())
    return {"DEFAULT": f"auth_strategy = http_basic\nhttp_basic_auth_user_file = {path}\n"
                       "http_basic_roles = bench:admin,bm-svc:member,di-svc:member\n",
            "discoverd": f"username = bm-svc\npassword = {USERS['bm-svc']}\n",
            "introspection": f"ironic_username = di-svc\nironic_password = {USERS['di-svc']}\n"}
