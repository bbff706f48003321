"""target RAID configuration (API 1.12): what an operator asks a node's RAID to be; stored and
shown (the fake RAID interface applies nothing)

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('bm_nodes') as batch:
        batch.add_column(sa.Column('target_raid_config', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('bm_nodes') as batch:
        batch.drop_column('target_raid_config')
