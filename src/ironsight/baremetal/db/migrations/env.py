"""Alembic environment of the baremetal tables."""

from ironsight.baremetal.db.models import metadata
from ironsight.common.db import run_alembic_env

run_alembic_env(metadata)
