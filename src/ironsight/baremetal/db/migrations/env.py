"""Alembic environment for the bare-metal service's tables (URL given by the caller)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from ironsight.baremetal.db.models import metadata

config = context.config
url = config.attributes["url"]
version_table = config.attributes["version_table"]

engine = create_engine(url)
with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=metadata,
                      version_table=version_table, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
