"""The rules' storage runs SQL: its specifications hold on each backend."""

from __future__ import annotations

import pytest

from ironsight.common.db import Database
from ironsight.discoverd.rules.store import RuleStore


@pytest.fixture
def store(db_each: Database) -> RuleStore:
    return RuleStore(db_each)
