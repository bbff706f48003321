"""refused callbacks: reports and hellos refused before they could change anything

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
    op.create_table(
        'di_rejected',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('at', sa.DateTime(), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('reason', sa.String(length=32), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=True),
        sa.Column('macs', sa.JSON(), nullable=False),
        sa.Column('bmc_address', sa.String(length=64), nullable=True),
        sa.Column('source_address', sa.String(length=64), nullable=True),
        sa.Column('message', sa.String(length=1024), nullable=False),
        sa.PrimaryKeyConstraint('id'))
    op.create_index('di_rejected_at_idx', 'di_rejected', ['at'])


def downgrade() -> None:
    op.drop_index('di_rejected_at_idx', table_name='di_rejected')
    op.drop_table('di_rejected')
