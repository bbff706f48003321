"""fleet stamps: the nodes changed or created since a time, found by index (discoverd's
fleet index asks for them before every fleet query)

Revision ID: 0011
Revises: 0010
"""

from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('bm_nodes_updated_idx', 'bm_nodes', ['updated_at'])
    op.create_index('bm_nodes_created_idx', 'bm_nodes', ['created_at'])


def downgrade() -> None:
    op.drop_index('bm_nodes_created_idx', 'bm_nodes')
    op.drop_index('bm_nodes_updated_idx', 'bm_nodes')
