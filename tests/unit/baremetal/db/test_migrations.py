"""The bare-metal service's migrations make the schema its models describe, and keep what was
stored: nodes enrolled before revision 0010 get the BMC hosts discovery's lookup reads, from
their driver_info."""

from __future__ import annotations

import json
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, text

from ironsight.baremetal.db.models import VERSION_TABLE, metadata
from ironsight.baremetal.service import MIGRATIONS
from ironsight.common.db import engine_url, run_migrations

from ...databases import migrate_to


def migrate(url: str, revision: str) -> None:
    migrate_to(url, revision, "ironsight.baremetal.db:migrations", VERSION_TABLE)


def test_nodes_enrolled_before_discovery_get_their_bmc_hosts(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bm.sqlite'}"
    migrate(url, "0009")
    engine = create_engine(engine_url(url))
    with engine.begin() as conn:
        for number, info in ((1, {"ipmi_address": "10.0.0.5", "ipmi_password": "x"}),
                             (2, {"redfish_address": "https://[FD00::5]:8443"}), (3, {})):
            conn.execute(text(
                "INSERT INTO bm_nodes (uuid, driver, driver_info, driver_internal_info, "
                "properties, extra, instance_info, provision_state, maintenance, lock_epoch, "
                "created_at, protected, retired, conductor_group, disable_power_off, "
                "console_enabled) VALUES (:u, 'fake-hardware', :i, '{}', '{}', '{}', '{}', "
                "'enroll', false, 0, '2026-01-01', false, false, '', false, false)"),
                {"u": f"00000000-0000-4000-8000-00000000000{number}", "i": json.dumps(info)})
    migrate(url, "head")
    with engine.begin() as conn:
        found = dict(conn.execute(text("SELECT uuid, bmc_hosts FROM bm_nodes")).all())
    engine.dispose()
    assert list(found.values()) == [" 10.0.0.5 ", " fd00::5 ", None]


def test_the_migrations_make_the_schema_the_models_describe(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'schema.sqlite'}"
    run_migrations(url, MIGRATIONS, VERSION_TABLE)
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
            assert compare_metadata(context, metadata) == []
    finally:
        engine.dispose()
