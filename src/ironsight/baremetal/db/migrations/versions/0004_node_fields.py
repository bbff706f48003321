"""node fields: resource class and traits

PLACEHOLDER written by i12d so that its branch runs; i12c's 0004_node_fields.py replaces it at
merge (it adds exactly these two things, which allocations need).

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('bm_nodes') as batch:
        batch.add_column(sa.Column('resource_class', sa.String(80), nullable=True))
    op.create_table(
        'bm_node_traits',
        sa.Column('node_id', sa.Integer(), sa.ForeignKey('bm_nodes.id', ondelete='CASCADE'),
                  primary_key=True),
        sa.Column('trait', sa.String(255), primary_key=True),
        sa.Column('created_at', sa.DateTime(), nullable=True))


def downgrade() -> None:
    op.drop_table('bm_node_traits')
    with op.batch_alter_table('bm_nodes') as batch:
        batch.drop_column('resource_class')
