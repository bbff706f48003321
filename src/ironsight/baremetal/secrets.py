"""Secret driver_info fields: which they are, and their encryption at rest.

With `[DEFAULT] secrets_key_file` set, the conductor stores each secret field as
`fernet:<token>` (the JSON of the value, encrypted with the key file's newest key) when it
writes driver_info, and decrypts it only where a driver needs it: when it builds the
driver's view of the node (`context`). The API masks these fields as before, whatever their
form; drivers never see a token. Without a key file, values are stored as given (and a
plain value and a token may sit side by side while existing nodes are being encrypted:
`ironsight secrets encrypt`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from cryptography.fernet import InvalidToken

from ironsight.baremetal.drivers.base import NodeContext
from ironsight.common.config import Config
from ironsight.common.exceptions import InvalidParameterValue
from ironsight.common.keyfile import KeyFile

PREFIX = "fernet:"
# Keys that are secret whatever the hardware type says (as Ironic masks them).
SECRET_HINTS = ("password", "secret", "token", "key_contents", "private_key")


def is_secret(key: str, secret_keys: Collection[str]) -> bool:
    low = key.lower()
    return key in secret_keys or any(hint in low for hint in SECRET_HINTS)


def is_sealed(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


class SecretUnreadable(InvalidParameterValue):
    """A stored secret that cannot be decrypted: names the node and the field, never the
    value."""


class DriverSecrets:
    """Encrypts secret driver_info fields as they are stored, decrypts them for drivers.

    `secret_keys`: the fields the hardware types declare secret (all of them: a node's
    driver may change, its fields stay), besides those named like secrets (SECRET_HINTS).
    """

    def __init__(self, keys: KeyFile | None, secret_keys: Collection[str] = ()) -> None:
        self.keys = keys
        self.secret_keys = frozenset(secret_keys)

    @classmethod
    def from_config(cls, conf: Config, secret_keys: Collection[str] = ()) -> DriverSecrets:
        """ConfigError (naming the file) when the configured key file is missing or bad."""
        path = conf.DEFAULT.secrets_key_file
        return cls(KeyFile(Path(path).expanduser()) if path else None, secret_keys)

    @property
    def enabled(self) -> bool:
        return self.keys is not None

    def _secret(self, key: str) -> bool:
        return is_secret(key, self.secret_keys)

    def seal(self, info: Mapping[str, Any] | None,
             stored: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """driver_info as it is to be stored: each secret field encrypted, except those
        left as they are stored (`stored`: the current driver_info; its tokens are kept,
        not encrypted again). Without a key file: as given."""
        new = dict(info or {})
        if self.keys is None:
            return new
        stored = stored or {}
        for key, value in new.items():
            if value is None or value == "" or not self._secret(key):
                continue
            if is_sealed(value) and stored.get(key) == value:
                continue  # unchanged: the stored token
            new[key] = self._encrypt(value)
        return new

    def reseal(self, info: Mapping[str, Any]) -> dict[str, Any] | None:
        """driver_info with every secret field encrypted with the newest key (plain ones
        encrypted, tokens of older keys encrypted again); None when it is so already. For
        `ironsight secrets encrypt` and `rotate-key`."""
        assert self.keys is not None
        new = dict(info)
        changed = False
        for key, value in info.items():
            if is_sealed(value):
                token = value[len(PREFIX):].encode()
                if self.keys.is_primary(token):
                    continue
                new[key] = PREFIX + self.keys.encrypt(self.keys.decrypt(token)).decode()
                changed = True
            elif value not in (None, "") and self._secret(key):
                new[key] = self._encrypt(value)
                changed = True
        return new if changed else None

    def _encrypt(self, value: Any) -> str:
        assert self.keys is not None
        return PREFIX + self.keys.encrypt(json.dumps(value).encode()).decode()

    def reveal(self, uuid: str, info: Mapping[str, Any] | None) -> Mapping[str, Any]:
        """driver_info with its tokens decrypted, for a driver (the same mapping when it
        holds none, the usual case without a key file). SecretUnreadable (400) names the
        node and the field when a token cannot be decrypted."""
        info = info or {}
        sealed = [key for key, value in info.items() if is_sealed(value)]
        if not sealed:
            return info
        plain = dict(info)
        for key in sealed:
            plain[key] = self._decrypt(uuid, key, info[key][len(PREFIX):])
        return plain

    def _decrypt(self, uuid: str, key: str, token: str) -> Any:
        where = f"Node {uuid}: driver_info field '{key}' is encrypted"
        if self.keys is None:
            raise SecretUnreadable(f"{where} but no key file is configured ([DEFAULT] "
                                   "secrets_key_file)")
        try:
            return json.loads(self.keys.decrypt(token.encode()))
        except (InvalidToken, ValueError):
            raise SecretUnreadable(f"{where} and no key of {self.keys.path} decrypts it "
                                   "(encrypted with another key?); set the field again "
                                   "or configure the key it was encrypted with") from None

    def context(self, node: Mapping[str, Any]) -> NodeContext:
        """What a driver sees of the node: its driver_info decrypted."""
        info = node["driver_info"] or {}
        plain = self.reveal(str(node["uuid"]), info)
        if plain is info:
            return NodeContext.of(node)
        return NodeContext.of({**node, "driver_info": plain})
