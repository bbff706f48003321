"""A real Keystone for the tests of auth_strategy = keystone: keystone from PyPI in a venv of its
own (`make test` creates it: scripts/ensure-keystone.sh), set up and served by
keystone_server.py on a free port, with the users the tests act as.

Keystone's default roles are ours: admin, member, reader. The operators work in project
`admin` (one of ironsight's default `allowed_projects`), the services' user in project
`service` with the `service` role (which lets it validate other users' tokens) and member.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from .conftest import free_tcp_port
from .security import Sections

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("IRONSIGHT_TEST_KEYSTONE_VENV") or ROOT / ".state" / "keystone-venv")
SERVER = Path(__file__).with_name("keystone_server.py")
ADMIN_PASSWORD = "ks-admin-2b9d"

# user -> (password, project, roles)
USERS = {
    "op-admin": ("op-admin-pass-51a0", "admin", ("admin",)),
    "op-member": ("op-member-pass-c2e4", "admin", ("member",)),
    "op-reader": ("op-reader-pass-7d13", "admin", ("reader",)),
    "svc": ("svc-pass-e08b", "service", ("service", "member")),
    # projects that are not operators': their tokens act for their project only (Ironic's
    # project scope: the nodes whose owner or lessee the project is)
    "outsider": ("outsider-pass-9f42", "tenant-x", ("admin",)),
    "tenant-a-member": ("ta-member-pass-61d0", "tenant-a", ("member",)),
    "tenant-b-reader": ("tb-reader-pass-2c87", "tenant-b", ("reader",)),
    "nobody": ("nobody-pass-3a6c", "admin", ("service",)),  # none of our roles
}


def missing_reason() -> str | None:
    if not (VENV / "bin" / "keystone-manage").exists():
        return (f"no Keystone venv at {VENV}: `make test` creates it "
                "(scripts/ensure-keystone.sh .state), or set IRONSIGHT_TEST_KEYSTONE_VENV")
    return None


@dataclass
class Keystone:
    where: Path
    port: int = field(default_factory=free_tcp_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v3"

    @property
    def log(self) -> Path:
        return self.where / "keystone.log"

    def start(self, timeout: float = 60) -> Keystone:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [str(VENV / "bin" / "python"), "-P", str(SERVER),  # -P: not this folder
                 str(self.where), str(self.port)],
                env={**os.environ, "KEYSTONE_ADMIN_PASSWORD": ADMIN_PASSWORD},
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"keystone exited:\n{self.log.read_text()[-3000:]}")
            try:
                if httpx.get(self.url, timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"keystone did not answer:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def session(self, user: str = "admin", password: str = ADMIN_PASSWORD,
                project: str = "admin") -> ks_session.Session:
        auth = v3.Password(auth_url=self.url, username=user, password=password,
                           project_name=project, user_domain_name="Default",
                           project_domain_name="Default")
        return ks_session.Session(auth=auth)

    def create_users(self) -> None:
        """USERS, their projects and role assignments (through Keystone's REST API)."""
        admin = self.session()
        api: Any = {"endpoint_filter": {"service_type": "identity", "interface": "public"}}

        def ids(kind: str) -> dict[str, str]:
            found = admin.get(f"/{kind}", **api).json()[kind]
            return {item["name"]: item["id"] for item in found}

        projects, roles = ids("projects"), ids("roles")
        for project in {p for _, p, _ in USERS.values()} - set(projects):
            body = {"project": {"name": project, "domain_id": "default"}}
            resp = admin.post("/projects", json=body, **api)
            projects[project] = resp.json()["project"]["id"]
        for user, (password, project, granted) in USERS.items():
            body = {"user": {"name": user, "password": password, "domain_id": "default"}}
            uid = admin.post("/users", json=body, **api).json()["user"]["id"]
            for role in granted:
                admin.put(f"/projects/{projects[project]}/users/{uid}/roles/{roles[role]}",
                          **api)

    def register(self, service_type: str, name: str, url: str) -> None:
        """Put a service and its public endpoint in Keystone's catalog (where clients that
        are given no endpoint find it)."""
        admin = self.session()
        api: Any = {"endpoint_filter": {"service_type": "identity", "interface": "public"}}
        found = admin.get("/services", params={"type": service_type}, **api).json()["services"]
        for old in found:  # an earlier module's service, on another port: gone with its URL
            admin.delete(f"/services/{old['id']}", **api)
        body = {"service": {"type": service_type, "name": name}}
        sid = admin.post("/services", json=body, **api).json()["service"]["id"]
        admin.post("/endpoints", json={"endpoint": {"service_id": sid, "interface": "public",
                                                    "url": url, "region_id": "RegionOne"}},
                   **api)

    def project_id(self, user: str) -> str:
        """The ID of the project `user`'s tokens are scoped to."""
        password, project, _ = USERS[user]
        return str(self.session(user, password, project).get_project_id())

    def token(self, user: str) -> str:
        password, project, _ = USERS[user]
        return str(self.session(user, password, project).get_token())


def keystone_sections(keystone: Keystone) -> Sections:
    """auth_strategy = keystone against `keystone`, the services as user svc."""
    return {"DEFAULT": {"auth_strategy": "keystone"},
            "keystone_authtoken": {"auth_url": keystone.url, "username": "svc",
                                   "password": USERS["svc"][0], "project_name": "service"}}


class TokenAuth(httpx.Auth):
    """httpx's `auth` sending a Keystone token (what Service.client() and friends use)."""

    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["X-Auth-Token"] = self.token
        yield request
