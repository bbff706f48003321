"""Alembic environment of the discoverd tables."""

from ironsight.common.db import run_alembic_env
from ironsight.discoverd.db.models import metadata

run_alembic_env(metadata)
