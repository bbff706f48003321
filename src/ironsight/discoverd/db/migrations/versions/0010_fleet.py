"""fleet hardware: each inspection's component change events, the webhook outbox, and the
introspections changed since a time found by index (the fleet index's stamps)

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('di_introspections_updated_idx', 'di_introspections', ['updated_at'])
    op.create_table(
        'di_component_events',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('run', sa.Integer(), nullable=False),
        sa.Column('at', sa.DateTime(), nullable=False),
        sa.Column('component', sa.String(16), nullable=False),
        sa.Column('key', sa.String(255), nullable=False),
        sa.Column('change', sa.String(16), nullable=False),
        sa.Column('severity', sa.String(16), nullable=False),
        sa.Column('before', sa.JSON(), nullable=True),
        sa.Column('after', sa.JSON(), nullable=True),
        sa.Column('fields', sa.JSON(), nullable=True),
        sa.Column('message', sa.Text(), nullable=False))
    op.create_index('di_component_events_node_idx', 'di_component_events', ['uuid', 'id'])
    op.create_index('di_component_events_at_idx', 'di_component_events', ['at'])
    op.create_table(
        'di_webhook_deliveries',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column('event_id', sa.String(36), nullable=False),
        sa.Column('event_type', sa.String(64), nullable=False),
        sa.Column('url', sa.String(2048), nullable=False),
        sa.Column('payload', sa.JSON(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False, server_default='0'),
        sa.Column('next_attempt_at', sa.DateTime(), nullable=True),
        sa.Column('last_attempt_at', sa.DateTime(), nullable=True),
        sa.Column('last_status_code', sa.Integer(), nullable=True),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('delivered_at', sa.DateTime(), nullable=True),
        sa.Column('lease_owner', sa.String(255), nullable=True),
        sa.Column('lease_until', sa.DateTime(), nullable=True))
    op.create_index('di_webhook_deliveries_due_idx', 'di_webhook_deliveries',
                    ['status', 'next_attempt_at'])
    op.create_index('di_webhook_deliveries_created_idx', 'di_webhook_deliveries',
                    ['created_at'])


def downgrade() -> None:
    op.drop_index('di_introspections_updated_idx', 'di_introspections')
    op.drop_table('di_webhook_deliveries')
    op.drop_table('di_component_events')
