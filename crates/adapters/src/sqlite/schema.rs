//! Versioned schema migrations. The version is `PRAGMA user_version`; migration `i` (from 0)
//! brings the file from version `i` to `i + 1`, each in its own transaction together with the
//! version bump, so a crash leaves the file at a whole version. Append new steps; never edit
//! a released one.

use super::Fail;
use rusqlite::{Connection, TransactionBehavior};

/// The ordered migration steps.
const MIGRATIONS: &[&str] = &[
    // 1: the initial schema.
    r#"
    -- The sentinel's memory after the last tick: one row, the WIT `memory` record as JSON.
    CREATE TABLE memory (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        memory     TEXT    NOT NULL,
        updated_at INTEGER NOT NULL          -- the tick's `now`, unix seconds
    );

    -- The staff pin, if any: one row, the WIT `pin` record as JSON.
    CREATE TABLE pin (
        id     INTEGER PRIMARY KEY CHECK (id = 1),
        pin    TEXT    NOT NULL,
        set_at INTEGER NOT NULL
    );

    -- Every change of the pin (INV-05). `before` and `after` are pin JSON or NULL.
    CREATE TABLE pin_audit (
        id     INTEGER PRIMARY KEY AUTOINCREMENT,
        at     INTEGER NOT NULL,
        actor  TEXT    NOT NULL,
        action TEXT    NOT NULL CHECK (action IN ('set', 'replace', 'clear', 'expire')),
        before TEXT,
        after  TEXT
    );

    -- p95 latency per API per minute, for baselines. A repeated tick replaces its minute.
    CREATE TABLE latency_samples (
        api    TEXT    NOT NULL,
        at     INTEGER NOT NULL,
        p95_ms REAL    NOT NULL,
        PRIMARY KEY (api, at)
    ) WITHOUT ROWID;
    CREATE INDEX latency_samples_at ON latency_samples (at);

    -- The baselines computed for each clock hour.
    CREATE TABLE baselines (
        hour        INTEGER NOT NULL,
        api         TEXT    NOT NULL,
        baseline_ms REAL,
        samples     INTEGER NOT NULL CHECK (samples >= 0),
        PRIMARY KEY (hour, api)
    );
    -- The hours whose baselines were saved, so that an hour with no API at all still counts.
    CREATE TABLE baseline_hours (
        hour     INTEGER PRIMARY KEY,
        saved_at INTEGER NOT NULL
    );

    -- One row per committed tick. AUTOINCREMENT: a sequence is never handed out twice.
    CREATE TABLE ticks (
        sequence    INTEGER PRIMARY KEY AUTOINCREMENT,
        at          INTEGER NOT NULL,
        record      TEXT    NOT NULL,        -- TickRecord JSON
        publication TEXT,                    -- [ChannelOutcome] JSON, once published
        created     INTEGER NOT NULL         -- wall clock when written
    );

    -- Whether each declared stage target has its emergency throttle applied.
    CREATE TABLE stage_status (
        target     TEXT    PRIMARY KEY,
        engaged    INTEGER NOT NULL CHECK (engaged IN (0, 1)),
        original   TEXT,                     -- the stage's settings before engaging, JSON
        updated_at INTEGER NOT NULL
    );
    "#,
    // 2: write-ahead records of the stage throttles (the original is written once, before the
    // first change) and the audit of every stage change. Engaged targets carry over; one kept
    // without an original is restored to "no stage-level limit", as before.
    r#"
    CREATE TABLE stage_throttles (
        target      TEXT    PRIMARY KEY,      -- rest_api_id/stage
        rest_api_id TEXT    NOT NULL,
        stage       TEXT    NOT NULL,
        phase       TEXT    NOT NULL CHECK (phase IN ('engaging', 'engaged', 'restoring')),
        original    TEXT    NOT NULL,         -- StageLimits JSON: what the restore puts back
        since       INTEGER NOT NULL,         -- the tick that wrote the first engage
        updated_at  INTEGER NOT NULL
    );
    INSERT INTO stage_throttles (target, rest_api_id, stage, phase, original, since, updated_at)
        SELECT target, substr(target, 1, instr(target, '/') - 1), substr(target, instr(target, '/') + 1), 'engaged',
               COALESCE(original, '{"existed":true,"rate_limit":null,"burst_limit":null}'), updated_at, updated_at
        FROM stage_status WHERE engaged = 1 AND instr(target, '/') > 0;
    DROP TABLE stage_status;

    CREATE TABLE stage_changes (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        at          INTEGER NOT NULL,         -- the tick's `now`
        rest_api_id TEXT    NOT NULL,
        stage       TEXT    NOT NULL,
        kind        TEXT    NOT NULL CHECK (kind IN ('engage', 'restore')),
        before      TEXT    NOT NULL,         -- StageLimits JSON, read just before the change
        after       TEXT    NOT NULL,         -- StageLimits JSON, what the change sets
        outcome     TEXT    NOT NULL CHECK (outcome IN ('pending', 'applied', 'failed', 'interrupted')),
        detail      TEXT,
        created     INTEGER NOT NULL          -- wall clock when written
    );
    "#,
    // 3: refused attempts to change the pin (through the API) are audited too, with why.
    // SQLite cannot change a CHECK constraint in place: the table is rebuilt, ids kept.
    r#"
    CREATE TABLE pin_audit_next (
        id      INTEGER PRIMARY KEY AUTOINCREMENT,
        at      INTEGER NOT NULL,
        actor   TEXT    NOT NULL,
        action  TEXT    NOT NULL CHECK (action IN ('set', 'replace', 'clear', 'expire', 'refused')),
        before  TEXT,
        after   TEXT,
        refusal TEXT              -- what was asked and why it was refused; `refused` only
    );
    INSERT INTO pin_audit_next (id, at, actor, action, before, after)
        SELECT id, at, actor, action, before, after FROM pin_audit ORDER BY id;
    DROP TABLE pin_audit;
    ALTER TABLE pin_audit_next RENAME TO pin_audit;
    "#,
];

/// The first schema, as released (tests build older stores with it).
pub const FIRST_SCHEMA: &str = MIGRATIONS[0];

/// The schema version this sentinel writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Applies every pending migration. Safe to run concurrently from several processes: each
/// step rereads the version inside its write transaction.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), Fail> {
    let found = check_not_newer(conn)?;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let from = index as i64;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current = user_version(&tx)?;
        if current > SCHEMA_VERSION {
            return Err(Fail::NewerSchema { found: current, known: SCHEMA_VERSION });
        }
        if current != from {
            continue; // applied already, by an earlier open or another process
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", from + 1)?;
        tx.commit()?;
        tracing::debug!(version = from + 1, "applied store schema migration");
    }
    Ok(())
}

/// The file's version, refused when it is newer than this sentinel's.
fn check_not_newer(conn: &Connection) -> Result<i64, Fail> {
    let found = user_version(conn)?;
    if found > SCHEMA_VERSION {
        return Err(Fail::NewerSchema { found, known: SCHEMA_VERSION });
    }
    if found < 0 {
        return Err(Fail::corrupt(
            "the schema version",
            format!("user_version is {found}; this is not a sentinel store, point the sentinel at another file"),
        ));
    }
    Ok(found)
}

pub(super) fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}
