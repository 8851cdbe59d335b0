//! Versioned schema migrations. `schema_migrations` holds one row per applied version; step
//! `i` (from 0) brings the database from version `i` to `i + 1`. Every connect runs
//! [`migrate`] in one transaction under a transaction-scoped advisory lock, so replicas that
//! start together apply each step once, and a crash leaves the database at a whole version.
//! Append new steps; never edit a released one.

use super::Fail;
use tokio_postgres::Client;

/// The ordered migration steps.
const MIGRATIONS: &[&str] = &[
    // 1: the initial schema, equivalent to the SQLite store's.
    r#"
    -- The sentinel's memory after the last tick: one row, the WIT `memory` record as JSON.
    CREATE TABLE memory (
        id         smallint PRIMARY KEY CHECK (id = 1),
        memory     json     NOT NULL,
        updated_at bigint   NOT NULL              -- the tick's `now`, unix seconds
    );

    -- The staff pin: one row, always there (it is what pin changes lock), `pin` NULL when
    -- there is none, else the WIT `pin` record as JSON.
    CREATE TABLE pin (
        id     smallint PRIMARY KEY CHECK (id = 1),
        pin    json,
        set_at bigint
    );
    INSERT INTO pin (id) VALUES (1);

    -- Every change of the pin (INV-05). `before` and `after` are pin JSON or NULL. Records are
    -- appended while the pin row is locked, so ids follow the order of the changes.
    CREATE TABLE pin_audit (
        id      bigserial   PRIMARY KEY,
        at      bigint      NOT NULL,
        actor   text        NOT NULL,
        action  text        NOT NULL CHECK (action IN ('set', 'replace', 'clear', 'expire')),
        before  json,
        after   json,
        created timestamptz NOT NULL DEFAULT now()
    );

    -- p95 latency per API per minute, for baselines. A repeated tick replaces its minute.
    CREATE TABLE latency_samples (
        api    text             NOT NULL,
        at     bigint           NOT NULL,
        p95_ms double precision NOT NULL,
        PRIMARY KEY (api, at)
    );
    CREATE INDEX latency_samples_at ON latency_samples (at);

    -- The baselines computed for each clock hour.
    CREATE TABLE baselines (
        hour        bigint           NOT NULL,
        api         text             NOT NULL,
        baseline_ms double precision,
        samples     bigint           NOT NULL CHECK (samples >= 0),
        PRIMARY KEY (hour, api)
    );
    -- The hours whose baselines were saved, so that an hour with no API at all still counts.
    CREATE TABLE baseline_hours (
        hour     bigint      PRIMARY KEY,
        saved_at timestamptz NOT NULL DEFAULT now()
    );

    -- The last tick sequence handed out: one row, bumped in each tick's transaction. Unlike a
    -- PostgreSQL sequence it never skips (a rolled-back tick or a server crash would make a
    -- sequence jump), and it is never reused, even when tick rows are deleted.
    CREATE TABLE tick_counter (
        id   smallint PRIMARY KEY CHECK (id = 1),
        last bigint   NOT NULL CHECK (last >= 0)
    );
    INSERT INTO tick_counter (id, last) VALUES (1, 0);

    -- One row per committed tick.
    CREATE TABLE ticks (
        sequence    bigint      PRIMARY KEY,
        at          bigint      NOT NULL,
        record      json        NOT NULL,         -- TickRecord JSON
        publication json,                         -- [ChannelOutcome] JSON, once published
        created     timestamptz NOT NULL DEFAULT now()
    );

    -- Whether each declared stage target has its emergency throttle applied.
    CREATE TABLE stage_status (
        target     text    PRIMARY KEY,
        engaged    boolean NOT NULL,
        original   json,                          -- the stage's settings before engaging
        updated_at bigint  NOT NULL
    );
    "#,
    // 2: write-ahead records of the stage throttles (the original is written once, before the
    // first change) and the audit of every stage change, as the SQLite store's step 2.
    r#"
    CREATE TABLE stage_throttles (
        target      text   PRIMARY KEY,            -- rest_api_id/stage
        rest_api_id text   NOT NULL,
        stage       text   NOT NULL,
        phase       text   NOT NULL CHECK (phase IN ('engaging', 'engaged', 'restoring')),
        original    json   NOT NULL,               -- StageLimits: what the restore puts back
        since       bigint NOT NULL,               -- the tick that wrote the first engage
        updated_at  bigint NOT NULL
    );
    INSERT INTO stage_throttles (target, rest_api_id, stage, phase, original, since, updated_at)
        SELECT target, split_part(target, '/', 1), substr(target, strpos(target, '/') + 1), 'engaged',
               COALESCE(original, '{"existed":true,"rate_limit":null,"burst_limit":null}'::json), updated_at, updated_at
        FROM stage_status WHERE engaged AND strpos(target, '/') > 0;
    DROP TABLE stage_status;

    CREATE TABLE stage_changes (
        id          bigserial   PRIMARY KEY,
        at          bigint      NOT NULL,         -- the tick's `now`
        rest_api_id text        NOT NULL,
        stage       text        NOT NULL,
        kind        text        NOT NULL CHECK (kind IN ('engage', 'restore')),
        before      json        NOT NULL,         -- StageLimits, read just before the change
        after       json        NOT NULL,         -- StageLimits, what the change sets
        outcome     text        NOT NULL CHECK (outcome IN ('pending', 'applied', 'failed', 'interrupted')),
        detail      text,
        created     timestamptz NOT NULL DEFAULT now()
    );
    "#,
    // 3: refused attempts to change the pin (through the API) are audited too, with why.
    r#"
    ALTER TABLE pin_audit DROP CONSTRAINT pin_audit_action_check;
    ALTER TABLE pin_audit ADD CONSTRAINT pin_audit_action_check
        CHECK (action IN ('set', 'replace', 'clear', 'expire', 'refused'));
    ALTER TABLE pin_audit ADD COLUMN refusal text;  -- what was asked and why it was refused
    "#,
];

/// The schema version this sentinel writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The advisory lock migrations take, in the two-key space (which never overlaps the one-key
/// space of leadership locks): "SENT", 1.
const MIGRATION_LOCK: (i32, i32) = (0x5345_4e54, 1);

/// Applies every pending migration, or refuses a database that is newer than this sentinel.
pub(super) async fn migrate(client: &mut Client) -> Result<(), Fail> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1, $2)", &[&MIGRATION_LOCK.0, &MIGRATION_LOCK.1]).await?;
    let exists: bool = tx.query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[]).await?.try_get(0)?;
    if !exists {
        tx.batch_execute(
            "CREATE TABLE schema_migrations (
                 version    bigint      PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now(),
                 applied_by text        NOT NULL
             )",
        )
        .await?;
    }
    let found: i64 = tx.query_one("SELECT COALESCE(MAX(version), 0)::bigint FROM schema_migrations", &[]).await?.try_get(0)?;
    if found > SCHEMA_VERSION {
        return Err(Fail::NewerSchema { found, known: SCHEMA_VERSION }); // rolled back: left alone
    }
    if found < 0 {
        return Err(Fail::corrupt(
            "the schema version",
            format!("schema_migrations says version {found}; this is not a sentinel store, point the sentinel at another database"),
        ));
    }
    let by = format!("capacity-sentinel {}", env!("CARGO_PKG_VERSION"));
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = index as i64 + 1;
        tx.batch_execute(sql).await?;
        tx.execute("INSERT INTO schema_migrations (version, applied_by) VALUES ($1, $2)", &[&version, &by]).await?;
        tracing::debug!(version, "applied store schema migration");
    }
    tx.commit().await?;
    Ok(())
}
