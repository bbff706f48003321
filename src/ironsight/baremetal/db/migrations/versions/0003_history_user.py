"""history user: who asked for each change (the authenticated user; empty with noauth)

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('bm_node_history') as batch:
        batch.add_column(sa.Column('user', sa.String(255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('bm_node_history') as batch:
        batch.drop_column('user')
