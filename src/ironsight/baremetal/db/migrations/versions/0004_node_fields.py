"""node fields: every field of Ironic's node document stored (resource class, owner, lessee,
retired, protected, shard, ... and all interface fields), and node traits

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

# What the stored-only interfaces showed before they were stored.
_LEGACY = {"bios": "no-bios", "console": "no-console", "firmware": "no-firmware",
           "network": "noop", "raid": "no-raid", "rescue": "no-rescue", "storage": "noop",
           "vendor": "no-vendor"}

_COLUMNS = (
    ('resource_class', sa.String(80)),
    ('owner', sa.String(255)),
    ('lessee', sa.String(255)),
    ('description', sa.Text()),
    ('protected_reason', sa.Text()),
    ('retired_reason', sa.Text()),
    ('shard', sa.String(255)),
    ('parent_node', sa.String(36)),
    ('automated_clean', sa.Boolean()),
    ('instance_name', sa.String(255)),
    ('network_data', sa.JSON()),
    ('deploy_step', sa.JSON()),
    ('clean_step', sa.JSON()),
    ('service_step', sa.JSON()),
)
_FLAGS = ('protected', 'retired', 'disable_power_off')


def upgrade() -> None:
    with op.batch_alter_table('bm_nodes') as batch:
        for name, type_ in _COLUMNS:
            batch.add_column(sa.Column(name, type_, nullable=True))
        for name in _FLAGS:
            batch.add_column(sa.Column(name, sa.Boolean(), nullable=False,
                                       server_default=sa.false()))
        batch.add_column(sa.Column('conductor_group', sa.String(255), nullable=False,
                                   server_default=''))
        for iface in _LEGACY:
            batch.add_column(sa.Column(f'{iface}_interface', sa.String(255), nullable=True))
        batch.create_index('bm_nodes_resource_class_idx', ['resource_class'])
        batch.create_index('bm_nodes_instance_uuid_idx', ['instance_uuid'])
    nodes = sa.table('bm_nodes', *(sa.column(f'{i}_interface', sa.String) for i in _LEGACY))
    op.execute(nodes.update().values({f'{i}_interface': v for i, v in _LEGACY.items()}))
    op.create_table(
        'bm_node_traits',
        sa.Column('node_id', sa.Integer(), sa.ForeignKey('bm_nodes.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('trait', sa.String(255), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('node_id', 'trait'),
    )


def downgrade() -> None:
    op.drop_table('bm_node_traits')
    with op.batch_alter_table('bm_nodes') as batch:
        batch.drop_index('bm_nodes_instance_uuid_idx')
        batch.drop_index('bm_nodes_resource_class_idx')
        for iface in _LEGACY:
            batch.drop_column(f'{iface}_interface')
        batch.drop_column('conductor_group')
        for name in _FLAGS:
            batch.drop_column(name)
        for name, _ in _COLUMNS:
            batch.drop_column(name)
