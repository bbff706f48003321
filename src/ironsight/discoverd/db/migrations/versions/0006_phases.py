"""timelines: each introspection attempt's phases (when, where seen, details)

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
    op.create_table(
        'di_phases',
        sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('run', sa.Integer(), nullable=False),
        sa.Column('phase', sa.String(length=32), nullable=False),
        sa.Column('at', sa.DateTime(), nullable=False),
        sa.Column('source', sa.String(length=16), nullable=False),
        sa.Column('details', sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(['uuid'], ['di_introspections.uuid'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'))
    op.create_index('di_phases_run_idx', 'di_phases', ['uuid', 'run', 'id'])


def downgrade() -> None:
    op.drop_index('di_phases_run_idx', table_name='di_phases')
    op.drop_table('di_phases')
