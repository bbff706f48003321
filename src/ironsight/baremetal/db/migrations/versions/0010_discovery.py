"""discovery: a discovered node's approval (pending, approved, rejected); NULL for a node
an operator enrolled. bmc_hosts: the BMC hosts its driver_info names, for discovery's lookup
(filled in here for the nodes there are)

Revision ID: 0010
Revises: 0009
"""

import json

import sqlalchemy as sa
from alembic import op

from ironsight.common.bmc import hosts_text

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('bm_nodes') as batch:
        batch.add_column(sa.Column('discovery', sa.String(16), nullable=True))
        batch.create_index('bm_nodes_discovery_idx', ['discovery'])
        batch.add_column(sa.Column('bmc_hosts', sa.String(1024), nullable=True))
    conn = op.get_bind()
    table = sa.table('bm_nodes', sa.column('id', sa.Integer), sa.column('driver_info', sa.Text),
                     sa.column('bmc_hosts', sa.String))
    rows = conn.execute(sa.select(table.c.id, table.c.driver_info)).all()
    for row_id, info in rows:
        hosts = hosts_text(json.loads(info) if isinstance(info, str) else info)
        if hosts is not None:
            conn.execute(table.update().where(table.c.id == row_id).values(bmc_hosts=hosts))


def downgrade() -> None:
    with op.batch_alter_table('bm_nodes') as batch:
        batch.drop_column('bmc_hosts')
        batch.drop_index('bm_nodes_discovery_idx')
        batch.drop_column('discovery')
