"""runbook traits (API 1.112): the traits a runbook matches nodes on, apart from its name

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('bm_runbooks') as batch:
        batch.add_column(sa.Column('traits', sa.JSON(), nullable=False,
                                   server_default=sa.text("'[]'")))


def downgrade() -> None:
    with op.batch_alter_table('bm_runbooks') as batch:
        batch.drop_column('traits')
