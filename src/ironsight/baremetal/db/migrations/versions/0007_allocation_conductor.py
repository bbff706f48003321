"""allocation conductor: the replica processing an allocation, so that a live one can take
over the allocations of one that died (Ironic's conductor_affinity)

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('bm_allocations') as batch:
        batch.add_column(sa.Column('conductor', sa.String(255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('bm_allocations') as batch:
        batch.drop_column('conductor')
