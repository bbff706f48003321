"""auto-discovery: conflicts as refused-callback records with their signals and resolution;
the identity claims of discovered machines, the discovered nodes, the MACs found not to be
unique, and the delivery manifest

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('di_rejected') as batch:
        batch.add_column(sa.Column('key', sa.String(255), nullable=True))
        batch.add_column(sa.Column('signals', sa.JSON(), nullable=True))
        batch.add_column(sa.Column('matched', sa.JSON(), nullable=True))
        batch.add_column(sa.Column('serial', sa.String(255), nullable=True))
        batch.add_column(sa.Column('system_uuid', sa.String(64), nullable=True))
        batch.add_column(sa.Column('data', sa.JSON(), nullable=True))
        batch.add_column(sa.Column('repeats', sa.Integer(), nullable=False,
                                   server_default='0'))
        batch.add_column(sa.Column('resolution', sa.String(32), nullable=True))
        batch.add_column(sa.Column('resolved_at', sa.DateTime(), nullable=True))
        batch.add_column(sa.Column('resolved_by', sa.String(255), nullable=True))
        batch.create_index('di_rejected_key_idx', ['key'])
    op.create_table(
        'di_claims',
        sa.Column('kind', sa.String(8), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        sa.Column('node_uuid', sa.String(36), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('kind', 'value'))
    op.create_index('di_claims_node_idx', 'di_claims', ['node_uuid'])
    op.create_table(
        'di_discovered',
        sa.Column('node_uuid', sa.String(36), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('source_address', sa.String(64), nullable=True),
        sa.Column('subnet', sa.String(64), nullable=True),
        sa.Column('serial', sa.String(255), nullable=True),
        sa.Column('system_uuid', sa.String(64), nullable=True),
        sa.Column('manifest_serial', sa.String(255), nullable=True),
        sa.Column('bmc_probe', sa.JSON(), nullable=True),
        sa.Column('seen_count', sa.Integer(), nullable=False, server_default='0'),
        sa.Column('last_seen_at', sa.DateTime(), nullable=True),
        sa.Column('complete', sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.PrimaryKeyConstraint('node_uuid'))
    op.create_index('di_discovered_subnet_idx', 'di_discovered', ['subnet', 'created_at'])
    op.create_table(
        'di_non_unique_macs',
        sa.Column('mac', sa.String(64), nullable=False),
        sa.Column('reason', sa.String(255), nullable=False),
        sa.Column('recorded_at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('mac'))
    op.create_table(
        'di_manifest',
        sa.Column('serial', sa.String(255), nullable=False),
        sa.Column('entry', sa.JSON(), nullable=False),
        sa.Column('imported_at', sa.DateTime(), nullable=False),
        sa.Column('node_uuid', sa.String(36), nullable=True),
        sa.Column('arrived_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('serial'))


def downgrade() -> None:
    op.drop_table('di_manifest')
    op.drop_table('di_non_unique_macs')
    op.drop_index('di_discovered_subnet_idx', 'di_discovered')
    op.drop_table('di_discovered')
    op.drop_index('di_claims_node_idx', 'di_claims')
    op.drop_table('di_claims')
    with op.batch_alter_table('di_rejected') as batch:
        batch.drop_index('di_rejected_key_idx')
        for column in ('resolved_by', 'resolved_at', 'resolution', 'repeats', 'data',
                       'system_uuid', 'serial', 'matched', 'signals', 'key'):
            batch.drop_column(column)
