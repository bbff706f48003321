"""Built-in inspection rules: `[inspection_rules] built_in_rules`, a YAML list of Ironic-dialect
rules that processing applies with the stored ones and the APIs show read-only.

Ironic re-reads its file on every rule run; here it is read again only when its modification
time (or size) changes: a stat per report instead of a parse. A file that no longer parses
keeps the previous good set (an operator's editing mistake must not silently drop every rule
mid-fleet), and says why in the log once per change; at start-up (`load_at_start`) a bad file
is an error instead, so that `ironsight serve` refuses to run with rules it cannot read.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from ironsight.common.exceptions import ConfigError, Invalid
from ironsight.discoverd.rules.model import Rule
from ironsight.discoverd.rules.validate import parse_ironic

LOG = logging.getLogger(__name__)
OPTION = "[inspection_rules] built_in_rules"


def default_uuid(index: int) -> str:
    """Ironic's UUID for the `index`-th rule of the file when it has none."""
    return f"00000000-0000-0000-0000-{index:012x}"


def parse_file(text: str) -> list[Rule]:
    """The rules of a built-in rules file; Invalid naming the rule (by index) at fault."""
    try:
        docs = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise Invalid(f"not valid YAML: {exc}") from None
    if docs is None:
        return []
    if not isinstance(docs, list):
        raise Invalid("expected a list of rules at the top level")
    rules: list[Rule] = []
    seen: set[str] = set()
    for index, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise Invalid(f"rule {index}: expected a mapping, got {type(doc).__name__}")
        body: dict[str, Any] = dict(doc)
        if body.get("uuid") is None:
            body["uuid"] = default_uuid(index)
        try:
            rule = replace(parse_ironic(body, built_in=True), built_in=True)
        except Invalid as exc:
            raise Invalid(f"rule {index}: {exc}") from None
        if rule.uuid in seen:
            raise Invalid(f"rule {index}: UUID {rule.uuid} is used by an earlier rule")
        seen.add(rule.uuid)
        rules.append(rule)
    return rules


class BuiltInRules:
    """The file's current rules; `__call__` checks the file and returns them."""

    def __init__(self, path: str) -> None:
        self.path = Path(path).expanduser() if path else None
        self._stamp: tuple[int, int] | None = None
        self._rules: list[Rule] = []

    def load_at_start(self) -> None:
        """Read the file now; ConfigError (naming the option and the fault) when it cannot be
        read or parsed."""
        if self.path is None:
            return
        try:
            stamp = self._stat()
            self._rules = parse_file(self.path.read_text(encoding="utf-8"))
        except (OSError, Invalid) as exc:
            raise ConfigError(f"{OPTION}: {self.path}: {_why(exc)}") from None
        self._stamp = stamp
        LOG.info("%d built-in inspection rule(s) loaded from %s", len(self._rules), self.path)

    def __call__(self) -> list[Rule]:
        if self.path is None:
            return []
        try:
            stamp = self._stat()
        except OSError as exc:
            if self._stamp != (-1, -1):
                LOG.error("%s: %s: %s; the previous %d built-in rule(s) stay in use", OPTION,
                          self.path, _why(exc), len(self._rules))
                self._stamp = (-1, -1)
            return list(self._rules)
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self._rules = parse_file(self.path.read_text(encoding="utf-8"))
                LOG.info("%d built-in inspection rule(s) loaded from %s", len(self._rules),
                         self.path)
            except (OSError, Invalid) as exc:
                LOG.error("%s: %s: %s; the previous %d built-in rule(s) stay in use", OPTION,
                          self.path, _why(exc), len(self._rules))
        return list(self._rules)

    def _stat(self) -> tuple[int, int]:
        assert self.path is not None
        st = os.stat(self.path)
        return st.st_mtime_ns, st.st_size


def _why(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)
