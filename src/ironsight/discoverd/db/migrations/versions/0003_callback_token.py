"""introspections: the SHA-256 of the current callback token (never the token)

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('di_introspections',
                  sa.Column('callback_token_hash', sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('di_introspections') as batch:
        batch.drop_column('callback_token_hash')
