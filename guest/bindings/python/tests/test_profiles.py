"""WorkspaceProfiles against a real PostgreSQL on 127.0.0.1 (servers.Postgres), read by the role
`svc`, which may only SELECT: shares read and cached for `refresh`, a missing row, bad rows, the
database stopped and started again, a missing table or column, no permission, the read-only
session, the statement timeout, quoted names, concurrent callers, and no password in any log."""

from __future__ import annotations

import logging
import threading
import time
import uuid

import pytest

from capacity_admission import WorkspaceProfiles
from servers import free_port


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def logs(caplog):
    caplog.set_level(logging.INFO, logger="capacity_admission")

    def lines():
        return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "capacity_admission"]

    return lines


def new_table(postgres, rows, share_type="bigint", name=None):
    name = name or f"profiles_{uuid.uuid4().hex[:10]}"
    postgres.sql(f"CREATE TABLE {name} (workspace_id text, bulk_share {share_type})")
    for workspace, share in rows:
        postgres.sql(f"INSERT INTO {name} VALUES (%s, %s)", workspace, share)
    return name


def profiles(postgres, table, **options):
    options.setdefault("timeout", 2)
    return WorkspaceProfiles(options.pop("dsn", None) or postgres.dsn(), table=table, **options)


def replace_rows(postgres, table, rows):
    """The table's rows replaced without scanning it (an UPDATE would count a scan)."""
    postgres.sql(f"TRUNCATE {table}")
    for workspace, share in rows:
        postgres.sql(f"INSERT INTO {table} VALUES (%s, %s)", workspace, share)


def scans(postgres, table, expected):
    """Sequential scans of `table` the server has counted, once its sessions' statistics are in
    (a session reports them when it ends, just after the client has gone)."""
    deadline = time.monotonic() + 5
    while True:
        found = postgres.sql("SELECT seq_scan FROM pg_stat_user_tables WHERE relname = %s", table)[0][0]
        if found >= expected or time.monotonic() > deadline:
            time.sleep(0.3)
            return postgres.sql("SELECT seq_scan FROM pg_stat_user_tables WHERE relname = %s", table)[0][0]
        time.sleep(0.05)


def test_shares_are_read_once_and_a_changed_row_is_seen_after_refresh(postgres, clock, logs):
    table = new_table(postgres, [("acme", 4), ("beta", 0), ("corp", 4294967295)])
    with profiles(postgres, table, refresh=60, clock=clock) as p:
        assert (p.share("acme"), p.share("beta"), p.share("corp")) == (4, 0, 4294967295)
        replace_rows(postgres, table, [("acme", 9), ("beta", 0), ("corp", 4294967295), ("delta", 2)])
        clock.now += 59.9
        assert (p.share("acme"), p.share("delta")) == (4, 1), "a change was seen before refresh"
        assert scans(postgres, table, 1) == 1, "the table was read more than once within refresh"
        clock.now += 0.1
        assert (p.share("acme"), p.share("delta")) == (9, 2)
        c = p.counters()
        assert (c.loads, c.failures, c.rows, c.skipped_rows, c.workspaces, c.using_defaults, c.age_s) == \
            (2, 0, 4, 0, 4, False, 0.0)
        clock.now += 12
        assert p.counters().age_s == 12
    assert scans(postgres, table, 2) == 2
    assert logs() == []


def test_the_refresh_interval_runs_on_the_monotonic_clock_by_default(postgres):
    table = new_table(postgres, [("acme", 4)])
    with profiles(postgres, table, refresh=1.5) as p:
        assert p.share("acme") == 4
        postgres.sql(f"UPDATE {table} SET bulk_share = 5")
        assert p.share("acme") == 4
        time.sleep(1.6)
        assert p.share("acme") == 5


def test_a_workspace_without_a_row_gets_the_default_share(postgres, clock, logs):
    table = new_table(postgres, [("acme", 4)])
    with profiles(postgres, table, default_share=3, clock=clock) as p:
        assert (p.share("acme"), p.share("nobody"), p.share("")) == (4, 3, 3)
    empty = new_table(postgres, [])
    with profiles(postgres, empty, default_share=2, clock=clock) as p:
        assert p.share("acme") == 2
        assert (p.counters().loads, p.counters().using_defaults) == (1, False)
    assert logs() == []


def test_bad_rows_are_skipped_with_one_line_each_naming_the_workspace(postgres, clock, logs):
    table = new_table(postgres, [("good", 2), ("nul", None), ("neg", -1), ("frac", 2.5), ("huge", 4294967296),
                                 (None, 3), ("max", 4294967295), ("dup", 4), ("dup", 2), ("dup", 6), ("mixed", -1),
                                 ("mixed", 4), ("zero", 0)], share_type="numeric")
    with profiles(postgres, table, refresh=10, clock=clock) as p:
        got = {w: p.share(w) for w in ("good", "nul", "neg", "frac", "huge", "max", "dup", "mixed", "zero")}
        assert got == {"good": 2, "nul": 1, "neg": 1, "frac": 1, "huge": 1, "max": 4294967295, "dup": 2,
                       "mixed": 4, "zero": 0}
        c = p.counters()
        assert (c.rows, c.skipped_rows, c.workspaces) == (13, 6, 5)
        first = logs()
        assert [level for level, _ in first] == ["WARNING"] * 7, first
        text = "\n".join(m for _, m in first)
        for fragment in ("'nul': bulk_share is null;", "'neg': bulk_share is -1 (negative)",
                         "'frac': bulk_share is 2.5 (not a whole number)", "'huge': bulk_share is 4294967296 (above "
                         "4294967295)", "a row with a null workspace_id (share 3)", "'dup' has 3 rows (shares [2, 4, 6]); "
                         "the smallest, 2, is used", "'mixed': bulk_share is -1 (negative); the row is skipped and its "
                         "other row's share 4 is used"):
            assert fragment in text, (fragment, text)
        assert "'nul': bulk_share is null; the row is skipped and the workspace gets the default share 1" in text
        for _ in range(3):  # reloads with the same bad rows: nothing more
            clock.now += 10
            p.share("good")
        assert p.counters().loads == 4 and logs() == first
        postgres.sql(f"UPDATE {table} SET bulk_share = -2 WHERE workspace_id = 'neg'")
        postgres.sql(f"UPDATE {table} SET bulk_share = 2 WHERE workspace_id = 'frac'")
        clock.now += 10
        assert (p.share("neg"), p.share("frac")) == (1, 2)
        assert logs()[len(first):] == [("WARNING", f"workspace profiles in {table}: workspace 'neg': bulk_share is -2 "
                                        "(negative); the row is skipped and the workspace gets the default share 1")]


@pytest.mark.parametrize("share_type,value,why", [
    ("double precision", "NaN", "not a whole number"),
    ("double precision", 1.5, "not a whole number"),
    ("text", "4", "not a number"),
    ("boolean", True, "not a number"),
])
def test_a_share_column_of_another_type_is_judged_row_by_row(postgres, clock, logs, share_type, value, why):
    shown = {"NaN": "nan", "4": "'4'"}.get(value, value)
    table = new_table(postgres, [("bad", value)], share_type=share_type)
    if share_type == "double precision":
        postgres.sql(f"INSERT INTO {table} VALUES ('whole', 2.0)")
    with profiles(postgres, table, default_share=7, clock=clock) as p:
        assert p.share("bad") == 7
        if share_type == "double precision":
            assert p.share("whole") == 2
    assert [m for _, m in logs()] == [f"workspace profiles in {table}: workspace 'bad': bulk_share is "
                                      f"{shown} ({why}); the row is skipped and the "
                                      "workspace gets the default share 7"]


def test_the_database_stopped_keeps_the_last_good_then_defaults_then_recovers(postgres, clock, logs):
    table = new_table(postgres, [("acme", 4)])
    p = profiles(postgres, table, refresh=10, max_stale=100, default_share=2, clock=clock)
    try:
        assert p.share("acme") == 4
        postgres.stop()
        clock.now += 10
        started = time.monotonic()
        assert p.share("acme") == 4, "the last good profiles were dropped within max_stale"
        assert time.monotonic() - started < 2
        assert (p.counters().failures, p.counters().using_defaults) == (1, False)
        clock.now += 5
        assert p.share("acme") == 4 and p.counters().failures == 1, "a failed load was retried before refresh"
        for _ in range(7):  # t = 20 .. 80 after the load
            clock.now += 10
            assert p.share("acme") == 4
        clock.now += 10  # 95 s after the last good load
        assert p.share("acme") == 4
        clock.now += 5  # 100 s: max_stale reached, between two loads
        assert p.share("acme") == 2 and p.share("beta") == 2
        assert (p.counters().failures, p.counters().using_defaults) == (9, True)
        for _ in range(5):
            clock.now += 10
            assert p.share("acme") == 2
        assert [level for level, _ in logs()] == ["WARNING", "WARNING"], logs()
        postgres.start()
        postgres.sql(f"UPDATE {table} SET bulk_share = 6")
        clock.now += 10
        assert p.share("acme") == 6
        c = p.counters()
        assert (c.loads, c.failures, c.using_defaults, c.age_s) == (2, 14, False, 0.0)
    finally:
        if not postgres.running():
            postgres.start()
        p.close()
    lines = logs()
    assert [level for level, _ in lines] == ["WARNING", "WARNING", "INFO"], lines
    assert "cannot be read (OperationalError: connection failed:" in lines[0][1]
    assert "keeping the ones loaded 10 s ago for up to 100 s after that load" in lines[0][1]
    assert "still cannot be read after 90 s: the last good ones are 100 s old (max_stale 100 s); every " \
           "workspace gets the default share 2" in lines[1][1]
    assert "read again after 150 s of failed loads: 1 workspaces" in lines[2][1]


@pytest.mark.parametrize("problem", ["no table", "no column", "no permission", "wrong password", "nobody listening"])
def test_a_first_load_that_fails_gives_the_defaults_at_once_logged_once(postgres, clock, logs, problem):
    table = new_table(postgres, [("acme", 4)])
    options = {}
    if problem == "no table":
        table = f"absent_{uuid.uuid4().hex[:8]}"
    elif problem == "no column":
        options["share_column"] = "share"
    elif problem == "no permission":
        postgres.sql(f"REVOKE SELECT ON {table} FROM svc")
    elif problem == "wrong password":
        options["dsn"] = postgres.dsn(password="Wr0ng-pass")
    else:
        options["dsn"] = f"postgresql://svc:{postgres.SVC_PASSWORD}@127.0.0.1:{free_port()}/postgres"
    with profiles(postgres, table, refresh=10, default_share=3, clock=clock, **options) as p:
        assert (p.share("acme"), p.share("beta")) == (3, 3)
        for _ in range(4):
            clock.now += 10
            assert p.share("acme") == 3
        c = p.counters()
        assert (c.loads, c.failures, c.using_defaults, c.age_s) == (0, 5, True, None)
    lines = logs()
    assert len(lines) == 1 and lines[0][0] == "WARNING", lines
    expected = {"no table": "UndefinedTable: relation \"%s\" does not exist" % table,
                "no column": "UndefinedColumn: column \"share\" does not exist",
                "no permission": "InsufficientPrivilege: permission denied for table " + table,
                "wrong password": "password authentication failed for user \"svc\"",
                "nobody listening": "Connection refused"}[problem]
    assert expected in lines[0][1] and "every workspace gets the default share 3 until they can be read" \
        in lines[0][1], lines[0][1]


def test_a_table_that_appears_later_is_read_at_the_next_refresh(postgres, clock, logs):
    table = f"later_{uuid.uuid4().hex[:8]}"
    with profiles(postgres, table, refresh=10, default_share=3, clock=clock) as p:
        assert p.share("acme") == 3
        new_table(postgres, [("acme", 4)], name=table)
        clock.now += 9
        assert p.share("acme") == 3
        clock.now += 1
        assert p.share("acme") == 4 and not p.counters().using_defaults
    assert [level for level, _ in logs()] == ["WARNING", "INFO"]


def test_the_session_is_read_only_and_bounded(postgres, clock, logs):
    probe = f"probe_{uuid.uuid4().hex[:8]}"
    postgres.sql(f"CREATE VIEW {probe} AS SELECT 'ro:' || current_setting('transaction_read_only') AS workspace_id, "
                 "1 AS bulk_share UNION ALL SELECT 'timeout:' || current_setting('statement_timeout'), 1 "
                 "UNION ALL SELECT 'app:' || current_setting('application_name'), 1")
    with profiles(postgres, probe, timeout=1.5, default_share=7, clock=clock) as p:
        assert (p.share("ro:on"), p.share("timeout:1500ms"), p.share("app:capacity_admission")) == (1, 1, 1)
        assert (p.share("ro:off"), p.counters().workspaces) == (7, 3)
    # A view that writes: svc may insert into the audit table, and does outside a read-only session.
    postgres.sql("CREATE TABLE IF NOT EXISTS audit (n int)")
    postgres.sql("GRANT INSERT ON audit TO svc")
    postgres.sql("CREATE OR REPLACE FUNCTION note() RETURNS int LANGUAGE plpgsql AS "
                 "$$ BEGIN INSERT INTO audit VALUES (1); RETURN 1; END $$")
    sneaky = f"sneaky_{uuid.uuid4().hex[:8]}"
    postgres.sql(f"CREATE VIEW {sneaky} AS SELECT 'acme'::text AS workspace_id, note() AS bulk_share")
    import psycopg

    before = postgres.sql("SELECT count(*) FROM audit")[0][0]
    with psycopg.connect(postgres.dsn()) as conn:  # the same role, an ordinary session: the write happens
        assert conn.execute(f"SELECT * FROM {sneaky}").fetchall() == [("acme", 1)]
    assert postgres.sql("SELECT count(*) FROM audit")[0][0] == before + 1
    with profiles(postgres, sneaky, default_share=7, clock=clock) as p:
        assert p.share("acme") == 7
    assert postgres.sql("SELECT count(*) FROM audit")[0][0] == before + 1
    assert "cannot execute INSERT in a read-only transaction" in logs()[-1][1]


def test_a_slow_query_is_cancelled_by_the_statement_timeout(postgres, clock, logs):
    table = new_table(postgres, [("acme", 4)])
    slow = f"slow_{uuid.uuid4().hex[:8]}"
    postgres.sql(f"CREATE VIEW {slow} AS SELECT workspace_id, bulk_share FROM {table}, pg_sleep(5)")
    with profiles(postgres, slow, timeout=1, default_share=3, clock=clock) as p:
        started = time.monotonic()
        assert p.share("acme") == 3
        assert 0.9 < time.monotonic() - started < 4
    assert "QueryCanceled: canceling statement due to statement timeout" in logs()[0][1]


def test_schema_qualified_and_mixed_case_names_are_quoted(postgres, clock):
    postgres.sql("CREATE SCHEMA IF NOT EXISTS tenants")
    postgres.sql("GRANT USAGE ON SCHEMA tenants TO svc")
    postgres.sql('CREATE TABLE tenants."Policies" ("Workspace" integer, "Share" bigint)')
    postgres.sql('INSERT INTO tenants."Policies" VALUES (42, 5)')
    # What the unquoted names would fold to: another table, another share.
    postgres.sql("CREATE TABLE tenants.policies (workspace integer, share bigint)")
    postgres.sql("INSERT INTO tenants.policies VALUES (42, 1)")
    postgres.sql("GRANT SELECT ON ALL TABLES IN SCHEMA tenants TO svc")
    with profiles(postgres, "tenants.Policies", workspace_column="Workspace", share_column="Share",
                  default_share=9, clock=clock) as p:
        assert (p.share("42"), p.share("43")) == (5, 9)


def test_concurrent_callers_share_one_load(postgres, clock):
    table = new_table(postgres, [("acme", 4)])
    slow = f"slowish_{uuid.uuid4().hex[:8]}"
    postgres.sql(f"CREATE VIEW {slow} AS SELECT workspace_id, bulk_share FROM {table}, pg_sleep(0.3)")
    answers, errors = [], []
    with profiles(postgres, slow, clock=clock) as p:
        barrier = threading.Barrier(16)

        def caller():
            try:
                barrier.wait()
                answers.extend(p.share("acme") for _ in range(10))
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=caller) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and answers == [4] * 160
        assert p.counters().loads == 1
    assert scans(postgres, table, 1) == 1


def test_a_closed_profiles_refuses_to_answer(postgres, clock):
    table = new_table(postgres, [("acme", 4)])
    p = profiles(postgres, table, clock=clock)
    assert p.share("acme") == 4
    p.close()
    with pytest.raises(RuntimeError, match="closed"):
        p.share("acme")
    with pytest.raises(TypeError, match="workspace"):
        profiles(postgres, table).share(42)  # type: ignore[arg-type]


def test_the_password_never_reaches_the_log(postgres, clock, logs):
    table = new_table(postgres, [("acme", 4)])
    dsns = [postgres.dsn(), postgres.dsn(password="Wr0ng-pass"),
            f"host=127.0.0.1 port={postgres.port} user=svc password={postgres.SVC_PASSWORD} dbname=postgres",
            f"host=127.0.0.1 port={free_port()} user=svc password='{postgres.SVC_PASSWORD}' dbname=postgres"]
    for dsn in dsns:
        for name in (table, "absent_table"):
            with profiles(postgres, name, dsn=dsn, clock=clock) as p:
                p.share("acme")
    p = profiles(postgres, table, refresh=10, max_stale=0, clock=clock)
    assert p.share("acme") == 4
    postgres.stop()
    try:
        clock.now += 10
        assert p.share("acme") == 1
    finally:
        postgres.start()
    clock.now += 10
    assert p.share("acme") == 4
    text = "\n".join(message for _, message in logs())
    assert len(logs()) == 9, logs()
    for secret in (postgres.SVC_PASSWORD, "Wr0ng-pass"):
        assert secret not in text
    assert "postgresql://svc:***@127.0.0.1" in text and "password=*** dbname=postgres" in text


def test_lines_go_to_the_given_logger(postgres, clock, logs):
    class Collect:
        def __init__(self):
            self.lines = []

        def info(self, message, *args):
            self.lines.append(("info", message % args))

        def warning(self, message, *args):
            self.lines.append(("warning", message % args))

        def error(self, message, *args):
            self.lines.append(("error", message % args))

    logger = Collect()
    table = f"absent_{uuid.uuid4().hex[:8]}"
    with profiles(postgres, table, refresh=10, logger=logger, clock=clock) as p:
        assert p.share("acme") == 1
        new_table(postgres, [("acme", 4)], name=table)
        clock.now += 10
        assert p.share("acme") == 4
    assert [level for level, _ in logger.lines] == ["warning", "info"] and logs() == []
    assert f'relation "{table}" does not exist' in logger.lines[0][1]
