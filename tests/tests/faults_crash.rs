//! The sentinel killed with SIGKILL at random points of its tick, again and again on one store
//! (SQLite, then PostgreSQL): afterwards the memory is never corrupt, the pin
//! audit chain has no gap, no channel's published `sequence` ever goes backwards (nor above the
//! store's newest), and the next tick decides correctly.
//!
//! Each iteration may first set a pin with `sentinel pin set` (and sometimes SIGKILL that
//! process at a random moment too), then starts `sentinel run --speed 100000` (a simulated
//! minute every 0.6 ms, so the process is nearly always inside a tick) and SIGKILLs it at a
//! random moment: mostly after its first tick was logged, sometimes during startup. Its
//! readings are the synthetic workload's, written as a trace that starts at the minute after
//! the newest decided one, so every run decides new minutes from its first tick (on the
//! synthetic source itself a restarted run starts again at the cycle start and would only
//! publish already-decided minutes again). The simulated clock runs ahead of the wall clock, so
//! the run's ticks soon pass a pin's expiry (two wall-clock minutes) and remove the pin with an
//! expiry audit in their commit. After each kill the store and both channels are checked;
//! after the last one a `sentinel tick --at T` must decide what the native policy decides on
//! the memory it found, and every recorded decision must follow from the one before.
//!
//! Runs: `SENTINEL_CRASH_RUNS` kills per store (default 30, so CI stays short on a shared
//! 2-core machine; the full count, 100 kills, is
//! `SENTINEL_CRASH_RUNS=100 cargo test -p capacity-tests --test integration faults_crash:: -- --nocapture`).
//! The kill moments come from a seeded generator: the seed is printed, and
//! `SENTINEL_CRASH_SEED=<seed>` repeats a failing sequence of kills.

use capacity_tests::faults::checks::{
    check_audit_chain, check_decisions_follow, check_document, check_memory, check_sequences, native_policy, redecide,
};
use capacity_tests::faults::{Metrics, Rng, Sandbox, TICK_LOGGED, env_count, spread};
use sentinel_core::instants::format_rfc3339;
use sentinel_core::ports::pins::AuditAction;
use sentinel_core::ports::publisher::StateDocument;
use std::time::{Duration, Instant};

/// Kills per store unless `SENTINEL_CRASH_RUNS` says otherwise.
const DEFAULT_RUNS: usize = 30;
/// How long after its first logged tick a run may live before the kill.
const KILL_WITHIN: Duration = Duration::from_millis(60);
/// Generous: the machine is shared and a debug build compiles the policy at startup.
const STARTUP_LIMIT: Duration = Duration::from_secs(90);
/// Minutes of readings each run gets: far more than it lives.
const TRACE_MINUTES: i64 = 500;

#[test]
fn sigkill_at_random_points_never_corrupts_memory_or_the_audit_chain_on_sqlite() {
    crash_again_and_again(Sandbox::sqlite(Metrics::Trace));
}

#[test]
fn sigkill_at_random_points_never_corrupts_memory_or_the_audit_chain_on_postgres() {
    crash_again_and_again(Sandbox::postgres("faults_crash", Metrics::Trace));
}

/// A kill at one exact point: the tick's transaction has removed the expired pin and appended
/// its expiry audit record, then waits (the test holds the tick counter's row) and is killed.
/// PostgreSQL rolls the transaction back; the audit ids must still run on without a gap (a
/// `bigserial` would have spent the rolled-back record's id for good).
#[test]
fn sigkill_between_the_expiry_audit_and_the_commit_leaves_no_gap_in_the_audit_ids_on_postgres() {
    let sb = Sandbox::postgres("crash_audit_gap", Metrics::Trace);
    let label = "postgres, killed after its expiry audit";
    set_pin(&sb, "before the kill");
    // One session holds the counter; another watches (activity is a snapshot per transaction).
    let (admin, observer) = (sb.sql(), sb.sql());
    sb.block_on(admin.batch_execute("BEGIN; SELECT last FROM tick_counter WHERE id = 1 FOR UPDATE")).unwrap();
    let at = sentinel_core::clock::current_minute() + 600; // the pin (2 minutes) has expired by then
    sb.write_trace(at, 1);
    let mut tick = sb.spawn(&["tick", "--at", &format_rfc3339(at)], "tick-killed");
    let waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
                   AND query LIKE '%tick_counter%' AND pid <> pg_backend_pid()";
    let deadline = Instant::now() + STARTUP_LIMIT;
    while sb.block_on(observer.query_one(waiting, &[])).unwrap().get::<_, i64>(0) == 0 {
        assert!(tick.child.try_wait().unwrap().is_none(), "{label}: the tick ended before its commit blocked:\n{}", tick.stderr());
        assert!(Instant::now() < deadline, "{label}: the tick's commit never reached the tick counter");
        std::thread::sleep(Duration::from_millis(10));
    }
    tick.sigkill();
    sb.block_on(admin.batch_execute("ROLLBACK")).unwrap();

    assert!(sb.ticks().is_empty(), "{label}: the killed tick committed");
    assert_eq!(sb.audit().len(), 1, "{label}: the killed tick's expiry audit was committed");
    set_pin(&sb, "after the kill");
    let out = sb.command(&["tick", "--at", &format_rfc3339(at)]).output().unwrap();
    assert!(out.status.success(), "{label}: the next tick failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let audit = sb.audit();
    let actions: Vec<_> = audit.iter().map(|r| (r.id, r.action)).collect();
    assert_eq!(
        actions,
        [(1, AuditAction::Set), (2, AuditAction::Replace), (3, AuditAction::Expire)],
        "{label}: set, replace (after the kill), expire, with ids 1, 2, 3"
    );
    check_audit_chain(label, &audit);
}

fn set_pin(sb: &Sandbox, reason: &str) {
    let args = ["pin", "set", "--state", "critical", "--reason", reason, "--expires-in", "2m", "--actor", "crash-test"];
    let out = sb.command(&args).output().unwrap();
    assert!(out.status.success(), "{}: `pin set` failed:\n{}", sb.label, String::from_utf8_lossy(&out.stderr));
}

/// What the kills did, for the report line.
#[derive(Default)]
struct Tally {
    kills: usize,
    /// Kills before the run's first tick was logged (startup, store open, first tick).
    early: usize,
    /// Kills that left a committed tick unpublished on some channel.
    between_commit_and_publication: usize,
    pins_set: usize,
    pin_kills: usize,
    /// From a run's kill to the first tick logged by the next run.
    recovery: Vec<Duration>,
}

fn crash_again_and_again(sb: Sandbox) {
    let sb = &sb;
    let label = sb.label;
    let runs = env_count("SENTINEL_CRASH_RUNS", DEFAULT_RUNS);
    let mut rng = Rng::from_env("SENTINEL_CRASH_SEED");
    let started = Instant::now();
    let mut tally = Tally::default();
    let mut watch = Watch { label, shown: [0; 2], looks: 0 };
    let mut killed_at: Option<Instant> = None;
    // How long an unkilled `pin set` takes, to kill one at a random moment of its life.
    let mut pin_life = Duration::from_millis(500);

    for i in 0..runs {
        if i % 3 == 0 || rng.chance(1, 4) {
            let mut pin = sb.spawn(
                &["pin", "set", "--state", "critical", "--reason", &format!("crash {i}"), "--expires-in", "2m", "--actor", "crash-test"],
                &format!("pin-{i}"),
            );
            if rng.chance(1, 2) {
                std::thread::sleep(rng.delay(pin_life));
                pin.sigkill();
                tally.pin_kills += 1;
            } else {
                let status = pin.wait(STARTUP_LIMIT).unwrap_or_else(|| panic!("{label}: `{}` hung", pin.what));
                assert!(status.success(), "{label}: `{}` failed: {status}\n{}", pin.what, pin.stderr());
                pin_life = pin.started.elapsed();
                tally.pins_set += 1;
            }
        }

        // The run's simulated clock starts at the trace's first minute: the one after the
        // newest decided minute (the synthetic workload would start again at its cycle start,
        // minutes the store has already decided).
        let first = sb.newest().map_or_else(sentinel_core::clock::current_minute, |(_, r)| r.at + 60);
        sb.write_trace(first, TRACE_MINUTES);
        let mut run = sb.spawn(&["run", "--speed", "100000"], &format!("run-{i}"));
        // The channels are watched all along (not only after the kill): a sequence that went
        // backwards even for a moment fails.
        let kill_at = if rng.chance(1, 8) {
            // Somewhere in startup: opening the store, its migrations, the first tick.
            tally.early += 1;
            Instant::now() + rng.delay(Duration::from_millis(400))
        } else {
            let deadline = Instant::now() + STARTUP_LIMIT;
            while !run.stderr().contains(TICK_LOGGED) {
                watch.look(sb);
                let alive = run.child.try_wait().unwrap().is_none();
                assert!(alive && Instant::now() < deadline, "{label}: kill {i}: the run never completed a tick:\n{}", tail(&run.stderr()));
                std::thread::sleep(Duration::from_millis(1));
            }
            if let Some(at) = killed_at {
                tally.recovery.push(at.elapsed());
            }
            Instant::now() + rng.delay(KILL_WITHIN)
        };
        while Instant::now() < kill_at {
            watch.look(sb);
            std::thread::sleep(Duration::from_micros(300));
        }
        assert!(run.child.try_wait().unwrap().is_none(), "{label}: kill {i}: the run exited by itself:\n{}", tail(&run.stderr()));
        run.sigkill();
        killed_at = Some(Instant::now());
        tally.kills += 1;

        let unpublished = check_after_kill(sb, i, &mut watch);
        tally.between_commit_and_publication += usize::from(unpublished);
    }

    let before = sb.ticks();
    check_decisions_follow(label, &mut native_policy(), &before);
    next_tick_is_correct(sb, &before);

    let audit = sb.audit();
    let expiries = audit.iter().filter(|r| r.action == AuditAction::Expire).count();
    assert!(tally.pins_set == 0 || expiries > 0, "{label}: no tick ever expired a pin: {audit:?}");
    let leftovers = std::fs::read_dir(sb.dir.path().join("out")).map_or(0, |d| d.count().saturating_sub(2));
    eprintln!(
        "{label}: {} kills in {:.1?} ({} early, {} between a commit and its publication), 0 corrupt; \
         {} ticks recorded, {} audit records ({} pins set, {} pin processes killed, {} expiries); \
         kill to next tick logged: {}; channels read {} times; {} temp files left in out/ by killed publications",
        tally.kills,
        started.elapsed(),
        tally.early,
        tally.between_commit_and_publication,
        before.len() + 1,
        audit.len(),
        tally.pins_set,
        tally.pin_kills,
        expiries,
        spread(tally.recovery),
        watch.looks,
        leftovers,
    );
}

/// The highest sequence each channel (cache, parameter) has shown so far.
struct Watch {
    label: &'static str,
    shown: [u64; 2],
    looks: usize,
}

const CHANNELS: [&str; 2] = ["cache", "parameter"];

impl Watch {
    /// Reads both channels: a document must parse, and its sequence must not be below any
    /// the channel showed before.
    fn look(&mut self, sb: &Sandbox) -> [Option<StateDocument>; 2] {
        self.looks += 1;
        let docs = sb.published();
        for ((channel, doc), seen) in CHANNELS.into_iter().zip(&docs).zip(self.shown.iter_mut()) {
            match doc {
                None => assert_eq!(*seen, 0, "{}: the {channel} document disappeared", self.label),
                Some(doc) => {
                    let label = self.label;
                    assert!(doc.sequence >= *seen, "{label}: the {channel} sequence went backwards from {seen} to {}", doc.sequence);
                    *seen = doc.sequence;
                }
            }
        }
        docs
    }
}

/// The store and the channels right after kill `i`. Returns whether the newest committed tick
/// is not yet on both channels (the kill fell between a commit and its publication).
fn check_after_kill(sb: &Sandbox, i: usize, watch: &mut Watch) -> bool {
    let label = format!("{} after kill {i}", sb.label);
    let memory = sb.memory();
    let ticks = sb.ticks();
    check_sequences(&label, &ticks);
    check_memory(&label, memory, ticks.last());
    check_audit_chain(&label, &sb.audit());
    let newest = ticks.last().map_or(0, |(s, _)| *s);
    let mut unpublished = false;
    for (channel, doc) in CHANNELS.into_iter().zip(watch.look(sb)) {
        let Some(doc) = doc else {
            unpublished |= newest > 0;
            continue;
        };
        assert!(doc.sequence <= newest, "{label}: the {channel} sequence {} is above the store's newest {newest}", doc.sequence);
        check_document(&label, channel, &doc, &ticks);
        unpublished |= doc.sequence < newest;
    }
    unpublished
}

/// One `sentinel tick --at T` for the minute after the newest record: exit 0, the next
/// sequence, published as recorded, and the native policy's decision on the memory it found.
fn next_tick_is_correct(sb: &Sandbox, before: &[(u64, sentinel_core::ports::memory::TickRecord)]) {
    let label = format!("{}: the tick after the kills", sb.label);
    let (newest, last) = before.last().map(|(s, r)| (*s, r.at)).expect("the runs recorded ticks");
    let memory = sb.memory().unwrap_or_else(|e| panic!("{label}: memory unreadable before it: {e}"));
    let at = last + 60;
    sb.write_trace(at, 1);
    let started = Instant::now();
    let out = sb.command(&["tick", "--at", &format_rfc3339(at)]).output().expect("sentinel tick runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{label} failed:\n{stderr}");
    eprintln!("{label} took {:.2?}", started.elapsed());

    let after = sb.ticks();
    check_sequences(&label, &after);
    let (sequence, record) = after.last().expect("the tick was recorded");
    assert_eq!((*sequence, record.at), (newest + 1, at), "{label}: not the next sequence at its minute");
    for (channel, doc) in CHANNELS.into_iter().zip(sb.published()) {
        let doc = doc.unwrap_or_else(|| panic!("{label}: nothing on the {channel} channel"));
        assert_eq!(doc.sequence, *sequence, "{label}: the {channel} channel does not hold the new tick");
        check_document(&label, channel, &doc, &after);
    }
    let expected = redecide(&mut native_policy(), record, memory.clone());
    assert_eq!(record.decision, expected, "{label}: the decision differs from the native policy's on the memory it found");
    check_memory(&label, sb.memory(), after.last());
}

/// The end of a log, for failure messages.
fn tail(text: &str) -> &str {
    let start = text.len().saturating_sub(3000);
    let start = (start..text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
    &text[start..]
}
