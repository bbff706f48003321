"""Which secrets a rule may read, and hiding what sensitive rules did.

As upstream, the values of the keys `password`, `auth_token` and `bmc_password` (at any
depth of the inventory and the plugin data) read as "***" unless `[inspection_rules]
mask_secrets` lets the rule see them: `never` masks nothing, `sensitive` masks them for
rules not flagged sensitive, `always` (the default) for every rule. Traces of sensitive rules
hide their arguments and the values they wrote, since those may be secrets too.
"""

from __future__ import annotations

from typing import Any

from ironsight.discoverd.rules.model import MaskPolicy, Rule

SECRET_KEYS = frozenset({"password", "auth_token", "bmc_password"})
MASK = "***"


def hides_secrets(policy: MaskPolicy, rule: Rule) -> bool:
    """Whether `rule` reads masked values under `policy`."""
    if policy is MaskPolicy.NEVER:
        return False
    if policy is MaskPolicy.SENSITIVE:
        return not rule.sensitive
    return True


def masked(value: Any) -> Any:
    """A copy of `value` with the secret keys' values replaced by "***", at any depth; the
    original is not modified."""
    if isinstance(value, dict):
        return {k: (MASK if k in SECRET_KEYS else masked(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def hidden(value: Any) -> Any:
    """What a sensitive rule's trace shows of an argument or a written value: its structure
    (keys of objects) but none of its scalar values."""
    if isinstance(value, dict):
        return {k: hidden(v) for k, v in value.items()}
    if isinstance(value, list):
        return [hidden(v) for v in value]
    return MASK
