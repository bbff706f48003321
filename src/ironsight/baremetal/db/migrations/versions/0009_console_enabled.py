"""console_enabled: whether the node's console runs, set by the conductor once its console
interface started or stopped it (the API only asks)

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('bm_nodes') as batch:
        batch.add_column(sa.Column('console_enabled', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table('bm_nodes') as batch:
        batch.drop_column('console_enabled')
