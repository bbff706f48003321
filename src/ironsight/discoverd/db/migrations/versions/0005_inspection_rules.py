"""inspection rules: one table for both API dialects

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'inspection_rules',
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('dialect', sa.String(length=16), nullable=False),
        sa.Column('priority', sa.Integer(), nullable=False),
        sa.Column('description', sa.Text(), nullable=True),
        sa.Column('phase', sa.String(length=16), nullable=False),
        sa.Column('sensitive', sa.Boolean(), nullable=False),
        sa.Column('scope', sa.String(length=255), nullable=True),
        sa.Column('conditions', sa.JSON(), nullable=False),
        sa.Column('actions', sa.JSON(), nullable=False),
        sa.Column('original', sa.JSON(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('revision', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('uuid'))
    op.create_index('inspection_rules_dialect_idx', 'inspection_rules',
                    ['dialect', 'created_at'])


def downgrade() -> None:
    op.drop_index('inspection_rules_dialect_idx', table_name='inspection_rules')
    op.drop_table('inspection_rules')
