"""A real Keystone for the tests, run by the Python of its own venv (never the project's):
`python -P keystone_server.py DIR PORT`, the bootstrap admin's password in
$KEYSTONE_ADMIN_PASSWORD. On a fresh DIR it writes keystone.conf
(SQLite, fernet tokens, an in-memory cache) and does what `keystone-manage db_sync`,
`fernet_setup`, `credential_setup` and `bootstrap` do, in this one process (four
keystone-manage runs cost ~4 s each, mostly imports); then it serves Keystone's API on
127.0.0.1:PORT with the standard library's threaded WSGI server until killed."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

CONF_TEXT = """[DEFAULT]
use_stderr = true
[database]
connection = sqlite:///{d}/keystone.db
[token]
provider = fernet
[fernet_tokens]
key_repository = {d}/fernet-keys
[fernet_receipts]
key_repository = {d}/fernet-keys
[credential]
key_repository = {d}/credential-keys
[identity]
password_hash_rounds = 4
[cache]
enabled = true
backend = dogpile.cache.memory
"""


def set_up(where: Path, port: int, admin_password: str) -> Path:
    conf = where / "keystone.conf"
    if (where / "bootstrapped").exists():
        return conf
    for sub in ("fernet-keys", "credential-keys"):
        (where / sub).mkdir(parents=True, exist_ok=True)
    conf.write_text(CONF_TEXT.format(d=where))
    from keystone.cmd import cli  # type: ignore[import-not-found]
    from keystone.conf import CONF  # type: ignore[import-not-found]

    owner = ["--keystone-user", "root", "--keystone-group", "root"]
    if os.getuid() != 0:
        import grp
        import pwd
        owner = ["--keystone-user", pwd.getpwuid(os.getuid()).pw_name,
                 "--keystone-group", grp.getgrgid(os.getgid()).gr_name]
    for command in (["db_sync"], ["fernet_setup", *owner], ["credential_setup", *owner],
                    ["bootstrap", "--bootstrap-password", admin_password,
                     "--bootstrap-username", "admin", "--bootstrap-project-name", "admin",
                     "--bootstrap-role-name", "admin", "--bootstrap-service-name", "keystone",
                     "--bootstrap-region-id", "RegionOne",
                     "--bootstrap-public-url", f"http://127.0.0.1:{port}/v3"]):
        CONF.clear()
        cli.main(argv=["keystone-manage", "--config-file", str(conf), *command])
    CONF.clear()
    CONF.unregister_opt(cli.command_opt)  # the server's own parse must not want a command
    from keystone.common import provider_api  # type: ignore[import-not-found]

    provider_api.ProviderAPIs._clear_registry_instances()  # the server registers its own
    (where / "bootstrapped").touch()
    return conf


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    where, port = Path(sys.argv[1]).resolve(), int(sys.argv[2])
    password = os.environ["KEYSTONE_ADMIN_PASSWORD"]
    conf = set_up(where, port, password)
    os.environ["OS_KEYSTONE_CONFIG_FILES"] = str(conf)
    sys.argv = sys.argv[:1]  # oslo.config would parse our arguments as its own
    from keystone.server.wsgi import (  # type: ignore[import-not-found]
        initialize_public_application,
    )

    app = initialize_public_application()
    make_server("127.0.0.1", port, app, server_class=_Server,
                handler_class=_Quiet).serve_forever()


if __name__ == "__main__":
    main()
