"""Users, projects and role assignments for the Keystone recording, then a token per user.

    .venv/bin/python tests/compat/ironic_peer/keystone_setup.py http://127.0.0.1:5001/v3 \
        ADMIN_PASSWORD OUTDIR      (peer.sh keystone runs it)

Idempotent (what exists is kept). Writes OUTDIR/tokens.json ({user: token}) and
OUTDIR/vars.json ({project_a, project_b, project_c: project ids}), the recorder's --tokens
and --vars.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

# user -> (password, scope, roles); scope "system" = system-scoped, else a project name
USERS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "sys-member": ("sys-member-pw-1", "system", ("member",)),
    "sys-reader": ("sys-reader-pw-1", "system", ("reader",)),
    "a-admin": ("a-admin-pw-1", "ks-proj-a", ("admin",)),
    "a-member": ("a-member-pw-1", "ks-proj-a", ("member",)),
    "a-reader": ("a-reader-pw-1", "ks-proj-a", ("reader",)),
    "b-member": ("b-member-pw-1", "ks-proj-b", ("member",)),
    "b-reader": ("b-reader-pw-1", "ks-proj-b", ("reader",)),
    "c-admin": ("c-admin-pw-1", "ks-proj-c", ("admin",)),
    "ironic": ("ironic-svc-pw-1", "service", ("service",)),
}
API: Any = {"endpoint_filter": {"service_type": "identity", "interface": "public"}}


def session(url: str, user: str, password: str, scope: str) -> ks_session.Session:
    kw: dict[str, Any] = {"auth_url": url, "username": user, "password": password,
                          "user_domain_name": "Default"}
    if scope == "system":
        kw["system_scope"] = "all"
    else:
        kw.update(project_name=scope, project_domain_name="Default")
    return ks_session.Session(auth=v3.Password(**kw))


def provision(url: str, admin_password: str) -> tuple[dict[str, str], dict[str, str]]:
    """USERS in the Keystone at `url`: ({user: token}, {project_a...: project id}). The
    replay (tests/functional/api/test_ironic39_keystone_parity.py) calls it too."""
    admin = session(url, "admin", admin_password, "admin")

    def ids(kind: str) -> dict[str, str]:
        return {i["name"]: i["id"] for i in admin.get(f"/{kind}", **API).json()[kind]}

    projects, roles, users = ids("projects"), ids("roles"), ids("users")
    if "service" not in roles:
        roles["service"] = admin.post("/roles", json={"role": {"name": "service"}},
                                      **API).json()["role"]["id"]
    for user, (password, scope, granted) in USERS.items():
        if scope != "system" and scope not in projects:
            body = {"project": {"name": scope, "domain_id": "default"}}
            projects[scope] = admin.post("/projects", json=body, **API).json()["project"]["id"]
        if user not in users:
            body = {"user": {"name": user, "password": password, "domain_id": "default"}}
            users[user] = admin.post("/users", json=body, **API).json()["user"]["id"]
        for role in granted:
            where = "/system" if scope == "system" else f"/projects/{projects[scope]}"
            admin.put(f"{where}/users/{users[user]}/roles/{roles[role]}", **API)
    tokens = {
        # the bootstrap admin: system-scoped, and in its project `admin`
        "sys-admin": session(url, "admin", admin_password, "system").get_token(),
        "admin-project": admin.get_token(),
    }
    for user, (password, scope, _) in USERS.items():
        if user != "ironic":
            tokens[user] = session(url, user, password, scope).get_token()
    variables = {"project_a": projects["ks-proj-a"], "project_b": projects["ks-proj-b"],
                 "project_c": projects["ks-proj-c"], "project_admin": projects["admin"]}
    return tokens, variables


def main() -> None:
    url, admin_password, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    tokens, variables = provision(url, admin_password)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokens.json").write_text(json.dumps(tokens, indent=1) + "\n")
    (out / "vars.json").write_text(json.dumps(variables, indent=1) + "\n")
    print(f"{len(tokens)} tokens in {out / 'tokens.json'}")


if __name__ == "__main__":
    main()
