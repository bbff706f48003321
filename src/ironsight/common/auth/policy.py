"""Which role each request needs. A service lists its public routes (version documents, the
ramdisk's endpoints), the requests only an admin may make and the reads only a member may
make; any other read needs a reader and any other write a member. Deciding by method and
path, before routing, also covers unknown paths: an anonymous caller learns nothing, not even
which paths exist."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ironsight.common.auth.identity import Role

READS = frozenset({"GET", "HEAD", "OPTIONS"})
Rule = tuple[frozenset[str], re.Pattern[str]]


def rule(methods: Iterable[str], path: str) -> Rule:
    """`path` is a regular expression matched against the whole request path."""
    return frozenset(methods), re.compile(path)


def _matches(rules: tuple[Rule, ...], method: str, path: str) -> bool:
    return any(method in methods and pattern.fullmatch(path) for methods, pattern in rules)


@dataclass(frozen=True)
class AccessRules:
    public: tuple[Rule, ...] = ()
    admin_only: tuple[Rule, ...] = ()
    # reads that need a member: they act on the hardware, or show what only an operator
    # of the machine should see (a console's address)
    member_only: tuple[Rule, ...] = ()
    # writes by method only: a POST that reads (a query too long for a URL)
    read_only: tuple[Rule, ...] = ()

    def required(self, method: str, path: str) -> Role | None:
        """The least role a request needs; None when it needs none."""
        if _matches(self.public, method, path):
            return None
        if _matches(self.admin_only, method, path):
            return Role.ADMIN
        if _matches(self.read_only, method, path):
            return Role.READER
        if method not in READS or _matches(self.member_only, method, path):
            return Role.MEMBER
        return Role.READER


VERSION_DOCUMENTS = rule(READS, r"/(v1/?)?")
