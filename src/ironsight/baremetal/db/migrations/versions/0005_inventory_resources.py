"""inventory resources: chassis, portgroups, deploy templates, runbooks, volume connectors and
targets, allocations; ports' portgroup, nodes' chassis and allocation, conductors' group

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def _base() -> list[sa.Column]:
    return [sa.Column('id', sa.Integer(), primary_key=True, autoincrement=True),
            sa.Column('uuid', sa.String(36), nullable=False, unique=True)]


def _stamps() -> list[sa.Column]:
    return [sa.Column('created_at', sa.DateTime(), nullable=False),
            sa.Column('updated_at', sa.DateTime(), nullable=True)]


def _node(nullable: bool = False, ondelete: str = 'CASCADE') -> sa.Column:
    return sa.Column('node_id', sa.Integer(), sa.ForeignKey('bm_nodes.id', ondelete=ondelete),
                     nullable=nullable)


# The new columns of existing tables carry no foreign key: adding one makes SQLite rebuild the
# table, and dropping the old copy would cascade to its children. The code keeps them
# consistent (a chassis with nodes, a portgroup with ports, cannot be deleted).
def upgrade() -> None:
    op.create_table(
        'bm_chassis', *_base(),
        sa.Column('description', sa.String(255), nullable=True),
        sa.Column('extra', sa.JSON(), nullable=False), *_stamps())
    op.create_table(
        'bm_portgroups', *_base(),
        sa.Column('name', sa.String(255), nullable=True, unique=True), _node(),
        sa.Column('address', sa.String(18), nullable=True, unique=True),
        sa.Column('standalone_ports_supported', sa.Boolean(), nullable=False),
        sa.Column('mode', sa.String(255), nullable=True),
        sa.Column('properties', sa.JSON(), nullable=False),
        sa.Column('physical_network', sa.String(64), nullable=True),
        sa.Column('category', sa.String(80), nullable=True),
        sa.Column('dynamic_portgroup', sa.Boolean(), nullable=False),
        sa.Column('internal_info', sa.JSON(), nullable=False),
        sa.Column('extra', sa.JSON(), nullable=False), *_stamps())
    op.create_index('bm_portgroups_node_idx', 'bm_portgroups', ['node_id'])
    op.create_table(
        'bm_deploy_templates', *_base(),
        sa.Column('name', sa.String(255), nullable=False, unique=True),
        sa.Column('steps', sa.JSON(), nullable=False),
        sa.Column('description', sa.String(255), nullable=True),
        sa.Column('extra', sa.JSON(), nullable=False), *_stamps())
    op.create_table(
        'bm_runbooks', *_base(),
        sa.Column('name', sa.String(255), nullable=False, unique=True),
        sa.Column('steps', sa.JSON(), nullable=False),
        sa.Column('description', sa.String(255), nullable=True),
        sa.Column('disable_ramdisk', sa.Boolean(), nullable=False),
        sa.Column('public', sa.Boolean(), nullable=False),
        sa.Column('owner', sa.String(255), nullable=True),
        sa.Column('extra', sa.JSON(), nullable=False), *_stamps())
    op.create_table(
        'bm_volume_connectors', *_base(), _node(),
        sa.Column('type', sa.String(32), nullable=False),
        sa.Column('connector_id', sa.String(255), nullable=False),
        sa.Column('extra', sa.JSON(), nullable=False), *_stamps(),
        sa.UniqueConstraint('type', 'connector_id', name='uniq_bm_volume_connectors_type_id'))
    op.create_table(
        'bm_volume_targets', *_base(), _node(),
        sa.Column('volume_type', sa.String(64), nullable=False),
        sa.Column('properties', sa.JSON(), nullable=False),
        sa.Column('boot_index', sa.Integer(), nullable=False),
        sa.Column('volume_id', sa.String(36), nullable=False),
        sa.Column('extra', sa.JSON(), nullable=False), *_stamps(),
        sa.UniqueConstraint('node_id', 'boot_index', name='uniq_bm_volume_targets_node_boot'))
    op.create_table(
        'bm_allocations', *_base(),
        sa.Column('name', sa.String(255), nullable=True, unique=True),
        _node(nullable=True, ondelete='SET NULL'),
        sa.Column('state', sa.String(15), nullable=False),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('resource_class', sa.String(80), nullable=True),
        sa.Column('traits', sa.JSON(), nullable=False),
        sa.Column('candidate_nodes', sa.JSON(), nullable=False),
        sa.Column('owner', sa.String(255), nullable=True),
        sa.Column('extra', sa.JSON(), nullable=False), *_stamps())
    with op.batch_alter_table('bm_ports') as batch:
        batch.add_column(sa.Column('portgroup_id', sa.Integer(), nullable=True))
    with op.batch_alter_table('bm_nodes') as batch:
        batch.add_column(sa.Column('chassis_id', sa.Integer(), nullable=True))
        batch.add_column(sa.Column('allocation_id', sa.Integer(), nullable=True))
    with op.batch_alter_table('bm_conductors') as batch:
        batch.add_column(sa.Column('conductor_group', sa.String(255), nullable=False,
                                   server_default=''))


def downgrade() -> None:
    with op.batch_alter_table('bm_conductors') as batch:
        batch.drop_column('conductor_group')
    with op.batch_alter_table('bm_nodes') as batch:
        batch.drop_column('allocation_id')
        batch.drop_column('chassis_id')
    with op.batch_alter_table('bm_ports') as batch:
        batch.drop_column('portgroup_id')
    for table in ('bm_allocations', 'bm_volume_targets', 'bm_volume_connectors',
                  'bm_runbooks', 'bm_deploy_templates', 'bm_portgroups', 'bm_chassis'):
        op.drop_table(table)
