"""What PostgreSQL itself saw a benchmark do, per database: statements by kind, transactions,
round trips. Counted by the server (pg_stat_statements, pg_stat_database), not by our code,
so an older commit without counters is counted the same way.

Needs a server started with `shared_preload_libraries = pg_stat_statements` and
`pg_stat_statements.track_utility = on` (BEGIN, COMMIT, ROLLBACK are then counted too). Every
client call is one round trip with psycopg 3 (BEGIN is its own), so the calls are the round
trips. Without the extension, only transactions are counted.
"""

from __future__ import annotations

import collections
from typing import Any

import psycopg
from sqlalchemy.engine import make_url


def _dsn(url: str, database: str) -> str:
    u = make_url(url).set(drivername="postgresql", database=database)
    return u.render_as_string(hide_password=False)


def fresh_databases(url: str, names: list[str]) -> list[str]:
    """(Re)create empty databases on the server of `url`; their SQLAlchemy URLs."""
    with psycopg.connect(_dsn(url, "postgres"), autocommit=True) as conn:
        for name in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
    return [make_url(url).set(database=n).render_as_string(hide_password=False) for n in names]


class PgStats:
    """Counts of the given databases between reset() and counts()."""

    def __init__(self, url: str) -> None:
        self.dsn = _dsn(url, "postgres")
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            found = conn.execute("SELECT 1 FROM pg_extension WHERE extname = "
                                 "'pg_stat_statements'").fetchone()
            if found is None:
                try:
                    conn.execute("CREATE EXTENSION pg_stat_statements")
                    found = (1,)
                except psycopg.Error:
                    pass
            self.statements = found is not None
            if self.statements:
                try:
                    conn.execute("SELECT count(*) FROM pg_stat_statements")
                except psycopg.Error:  # installed, not preloaded
                    self.statements = False

    def reset(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            if self.statements:
                conn.execute("SELECT pg_stat_statements_reset()")
            self._xacts = self._transactions(conn)

    @staticmethod
    def _transactions(conn: Any) -> dict[str, tuple[int, int]]:
        """Transactions and sessions (connections opened: each costs the server a fork and
        its catalog caches) of each database."""
        rows = conn.execute("SELECT datname, xact_commit + xact_rollback, sessions "
                            "FROM pg_stat_database WHERE datname IS NOT NULL").fetchall()
        return {name: (int(n), int(s)) for name, n, s in rows}

    def counts(self, database: str) -> dict[str, int]:
        """Statement calls by first keyword ('select', 'insert', 'begin', ...), 'calls' (the
        round trips) and 'transactions' since reset(): as the server counts them, an
        autocommit statement is one (and so is each of autovacuum's)."""
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute("SELECT pg_stat_clear_snapshot()")
            xacts = self._transactions(conn)
            out: collections.Counter[str] = collections.Counter()
            now, then = xacts.get(database, (0, 0)), self._xacts.get(database, (0, 0))
            out["transactions"] = now[0] - then[0]
            out["sessions"] = now[1] - then[1]
            if self.statements:
                rows = conn.execute(
                    "SELECT lower(split_part(ltrim(query), ' ', 1)), sum(calls) "
                    "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
                    "WHERE d.datname = %s GROUP BY 1", (database,)).fetchall()
                for kind, calls in rows:
                    out[kind.rstrip(";")] += int(calls)
                    out["calls"] += int(calls)
        return dict(out)

    def top(self, database: str, limit: int = 15) -> list[tuple[int, str]]:
        """The most called statements of a database (what to cut first)."""
        if not self.statements:
            return []
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT calls, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) "
                "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
                "WHERE d.datname = %s ORDER BY calls DESC LIMIT %s", (database, limit)
            ).fetchall()
        return [(int(c), q) for c, q in rows]
