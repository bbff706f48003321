"""members: discoverd's live replicas, and which one owns the PXE side

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('di_members',
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('hostname', sa.String(length=255), nullable=False),
    sa.Column('pid', sa.Integer(), nullable=False),
    sa.Column('started_at', sa.DateTime(), nullable=False),
    sa.Column('heartbeat_at', sa.DateTime(), nullable=False),
    sa.Column('pxe_network', sa.String(length=255), nullable=True),
    sa.Column('pxe_since', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('name')
    )


def downgrade() -> None:
    op.drop_table('di_members')
