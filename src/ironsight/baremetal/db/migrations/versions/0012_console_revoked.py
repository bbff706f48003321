"""console sessions ended by a logout (bm_console_revoked), until their cookie's end

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'bm_console_revoked',
        sa.Column('session', sa.String(64), primary_key=True),
        sa.Column('expires_at', sa.DateTime, nullable=False))
    op.create_index('bm_console_revoked_expires_idx', 'bm_console_revoked', ['expires_at'])


def downgrade() -> None:
    op.drop_index('bm_console_revoked_expires_idx', 'bm_console_revoked')
    op.drop_table('bm_console_revoked')
