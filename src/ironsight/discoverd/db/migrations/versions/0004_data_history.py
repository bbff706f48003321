"""data history: an introspection's run number, and stored data per run (the last N kept)

Each start of a node's introspection is a new run (`di_introspections.run`, 1 for the first).
`di_data` keys its rows by run, so a new introspection no longer replaces the data of the
previous ones. Existing rows belong to their introspection's current (first) run, and take
its start time.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

_FILL_STARTED = ("UPDATE di_data SET started_at = (SELECT i.started_at FROM di_introspections i "
                 "WHERE i.uuid = di_data.uuid)")


def upgrade() -> None:
    op.add_column('di_introspections',
                  sa.Column('run', sa.Integer(), nullable=False, server_default='1'))
    if op.get_bind().dialect.name == 'postgresql':
        op.add_column('di_data', sa.Column('run', sa.Integer(), nullable=False,
                                           server_default='1'))
        op.add_column('di_data', sa.Column('started_at', sa.DateTime(), nullable=True))
        op.execute(_FILL_STARTED)
        op.alter_column('di_data', 'started_at', nullable=False)
        op.drop_constraint('di_data_pkey', 'di_data', type_='primary')
        op.create_primary_key('di_data_pkey', 'di_data', ['uuid', 'run', 'processed'])
        return
    # SQLite cannot change a primary key in place: copy into the new shape.
    op.create_table(
        'di_data_new',
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('run', sa.Integer(), nullable=False, server_default='1'),
        sa.Column('processed', sa.Boolean(), nullable=False),
        sa.Column('started_at', sa.DateTime(), nullable=False),
        sa.Column('data', sa.JSON(), nullable=False),
        sa.Column('stored_at', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['uuid'], ['di_introspections.uuid'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('uuid', 'run', 'processed'))
    op.execute("INSERT INTO di_data_new (uuid, run, processed, started_at, data, stored_at) "
               "SELECT d.uuid, 1, d.processed, i.started_at, d.data, d.stored_at "
               "FROM di_data d JOIN di_introspections i ON i.uuid = d.uuid")
    op.drop_table('di_data')
    op.rename_table('di_data_new', 'di_data')


def downgrade() -> None:
    # Only each node's latest run survives (the old key holds one row of each kind).
    op.execute("DELETE FROM di_data WHERE run < (SELECT max(d.run) FROM di_data d "
               "WHERE d.uuid = di_data.uuid)")
    with op.batch_alter_table('di_data', recreate='always') as batch:
        batch.drop_column('started_at')
        batch.drop_column('run')
        batch.create_primary_key('di_data_pkey', ['uuid', 'processed'])
    with op.batch_alter_table('di_introspections') as batch:
        batch.drop_column('run')
