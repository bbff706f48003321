"""the ramdisk's log of each attempt, as its progress beats send it (the last 64 KiB)

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
    op.create_table(
        'di_ramdisk_logs',
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('run', sa.Integer(), nullable=False),
        sa.Column('stage', sa.String(length=32), nullable=False),
        sa.Column('log', sa.Text(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['uuid'], ['di_introspections.uuid'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('uuid', 'run'))


def downgrade() -> None:
    op.drop_table('di_ramdisk_logs')
