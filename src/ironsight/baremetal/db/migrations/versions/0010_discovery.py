"""discovery: a discovered node's approval (pending, approved, rejected); NULL for a node
an operator enrolled

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('bm_nodes') as batch:
        batch.add_column(sa.Column('discovery', sa.String(16), nullable=True))
        batch.create_index('bm_nodes_discovery_idx', ['discovery'])


def downgrade() -> None:
    with op.batch_alter_table('bm_nodes') as batch:
        batch.drop_index('bm_nodes_discovery_idx')
        batch.drop_column('discovery')
