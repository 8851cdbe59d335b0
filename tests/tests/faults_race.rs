//! Two and three sentinels racing on one store decide each minute exactly once: one
//! tick record per minute, sequences without gap or repeat, every process exits 0 (it decided,
//! or published the recorded decision again) or 3 (the lock was held and it did not wait), and
//! both channels hold the record of the newest minute. On PostgreSQL (advisory lock on a
//! dedicated connection) and on SQLite (file lock).
//!
//! `sentinel tick --at T` processes are started together for each of several minutes, with and
//! without `--wait` (on PostgreSQL the test holds the first one inside its commit until all
//! have reached the lock, so they do meet); `sentinel run --speed 600 --ticks N --wait 30s` processes are started
//! together, so their simulated clocks start at the same minute (the synthetic workload's
//! cycle start) and they contend for every minute.

use capacity_tests::faults::checks::{check_decisions_follow, check_document, check_sequences, native_policy};
use capacity_tests::faults::{Metrics, Proc, Sandbox};
use sentinel_core::instants::format_rfc3339;
use sentinel_core::ports::memory::TickRecord;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Generous: several debug-built processes compile the policy at once on a shared machine.
const PROCESS_LIMIT: Duration = Duration::from_secs(180);
/// What a tick that found its minute decided logs.
const REPUBLISHED: &str = "was already decided";

#[test]
fn racing_tick_processes_decide_each_minute_once_on_postgres() {
    racing_ticks(Sandbox::postgres("race_ticks", Metrics::Synthetic), true);
}

#[test]
fn racing_tick_processes_decide_each_minute_once_on_sqlite() {
    racing_ticks(Sandbox::sqlite(Metrics::Synthetic), false);
}

#[test]
fn two_and_three_racing_runs_decide_each_minute_once_on_postgres() {
    racing_runs(&Sandbox::postgres("race_runs_2", Metrics::Synthetic), 2);
    racing_runs(&Sandbox::postgres("race_runs_3", Metrics::Synthetic), 3);
}

#[test]
fn two_and_three_racing_runs_decide_each_minute_once_on_sqlite() {
    racing_runs(&Sandbox::sqlite(Metrics::Synthetic), 2);
    racing_runs(&Sandbox::sqlite(Metrics::Synthetic), 3);
}

/// The racer that fell behind, deterministically: a tick for a minute older than the newest
/// decided one (it waited for the lock while another decided the next minute, or its clock is
/// late) decides nothing and publishes the newest record again.
#[test]
fn a_tick_behind_the_newest_decided_minute_republishes_the_newest_and_decides_nothing() {
    let sb = Sandbox::sqlite(Metrics::Synthetic);
    let base = sentinel_core::clock::current_minute();
    for at in [base, base + 60] {
        let out = sb.command(&["tick", "--at", &format_rfc3339(at)]).output().unwrap();
        assert!(out.status.success(), "tick at {at}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = sb.command(&["tick", "--at", &format_rfc3339(base)]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.contains(REPUBLISHED), "the late tick:\n{stderr}");
    let ticks = check_one_decision_per_minute(&sb, "sqlite: a late tick");
    assert_eq!(ticks.len(), 2, "the late tick recorded a decision");
}

/// How the processes of one race ended.
#[derive(Debug, Default)]
struct Outcome {
    decided: usize,
    republished: usize,
    lock_held: usize,
}

/// Waits for each process; every exit must be 0 or 3 (3 only when `may_be_refused`).
fn finish(label: &str, procs: &mut [Proc], may_be_refused: bool) -> Outcome {
    let mut outcome = Outcome::default();
    for p in procs.iter_mut() {
        let status = p.wait(PROCESS_LIMIT).unwrap_or_else(|| panic!("{label}: `{}` did not finish:\n{}", p.what, p.stderr()));
        let stderr = p.stderr();
        assert!(!stderr.contains("panicked"), "{label}: `{}` panicked:\n{stderr}", p.what);
        match status.code() {
            // A decided tick logs its decision (`changed=`); a republished one says so.
            Some(0) if stderr.contains("changed=") => outcome.decided += 1,
            Some(0) if stderr.contains(REPUBLISHED) => outcome.republished += 1,
            Some(3) if may_be_refused => {
                assert!(stderr.contains("another sentinel holds the lock"), "{label}: exit 3 without saying why:\n{stderr}");
                outcome.lock_held += 1;
            }
            _ => panic!("{label}: `{}` exited {status} (0, or 3 without --wait, expected):\n{stderr}", p.what),
        }
    }
    outcome
}

/// The store holds exactly one record per minute, contiguous sequences, decisions that follow
/// from each other, and both channels hold the record of the newest minute.
fn check_one_decision_per_minute(sb: &Sandbox, label: &str) -> Vec<(u64, TickRecord)> {
    let ticks = sb.ticks();
    check_sequences(label, &ticks);
    let mut per_minute: BTreeMap<i64, Vec<u64>> = BTreeMap::new();
    for (sequence, record) in &ticks {
        per_minute.entry(record.at).or_default().push(*sequence);
    }
    let doubles: Vec<_> = per_minute.iter().filter(|(_, s)| s.len() > 1).collect();
    assert!(doubles.is_empty(), "{label}: minutes decided more than once (minute: sequences): {doubles:?}");
    let ats: Vec<i64> = ticks.iter().map(|(_, r)| r.at).collect();
    assert!(ats.windows(2).all(|w| w[0] < w[1]), "{label}: a minute was decided after a later one: {ats:?}");
    check_decisions_follow(label, &mut native_policy(), &ticks);
    let (newest, _) = ticks.last().expect("something was decided");
    for (channel, doc) in ["cache", "parameter"].into_iter().zip(sb.published()) {
        let doc = doc.unwrap_or_else(|| panic!("{label}: nothing was published on the {channel} channel"));
        assert_eq!(doc.sequence, *newest, "{label}: the {channel} channel does not hold the newest minute's record");
        check_document(label, channel, &doc, &ticks);
    }
    ticks
}

/// Sessions of the sandbox's database waiting for a row lock: ticks inside their commit, held.
const COMMITTING: &str = "SELECT count(*) FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()";

/// On PostgreSQL the racers are made to meet: the test holds the tick counter's row, so the
/// first tick to take the lock stops inside its commit; once every other racer has started up
/// and reached the lock, exactly one tick may be inside a commit. Then the row is released.
fn hold_the_leader_until_all_arrive(sb: &Sandbox, label: &str, procs: &mut [Proc], holder: tokio_postgres::Client) {
    let observer = sb.sql();
    let committing = || sb.block_on(observer.query_one(COMMITTING, &[])).unwrap().get::<_, i64>(0);
    let deadline = Instant::now() + PROCESS_LIMIT;
    while committing() == 0 {
        let alive = procs.iter_mut().any(|p| p.child.try_wait().unwrap().is_none());
        assert!(alive && Instant::now() < deadline, "{label}: no tick reached its commit");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Each racer logs its policy's activation just before it asks for the lock.
    while !procs.iter_mut().all(|p| p.child.try_wait().unwrap().is_some() || p.stderr().contains("activated")) {
        assert!(Instant::now() < deadline, "{label}: the racers did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_secs(1));
    let inside = committing();
    sb.block_on(holder.batch_execute("ROLLBACK")).unwrap();
    assert_eq!(inside, 1, "{label}: {inside} ticks were inside a commit at once (one holds the lock)");
}

/// For each of six minutes, 2 then 3 `sentinel tick --at T` at once: without --wait, all with
/// --wait, then mixed. `hold`: make them meet at the lock (PostgreSQL).
fn racing_ticks(sb: Sandbox, hold: bool) {
    let base = sentinel_core::clock::current_minute();
    let mut totals = Outcome::default();
    let started = Instant::now();
    for m in 0..6i64 {
        let at = format_rfc3339(base + m * 60);
        let count = if m < 3 { 2 } else { 3 };
        let label = format!("{}: {count} ticks racing for {at}", sb.label);
        let holder = hold.then(|| {
            let holder = sb.sql();
            sb.block_on(holder.batch_execute("BEGIN; SELECT last FROM tick_counter WHERE id = 1 FOR UPDATE")).unwrap();
            holder
        });
        let mut procs: Vec<Proc> = (0..count)
            .map(|k| {
                let wait = match m % 3 {
                    0 => false,
                    1 => true,
                    _ => k % 2 == 0,
                };
                let mut args = vec!["tick", "--at", &at];
                if wait {
                    args.extend(["--wait", "30s"]);
                }
                sb.spawn(&args, &format!("tick-{m}-{k}"))
            })
            .collect();
        if let Some(holder) = holder {
            hold_the_leader_until_all_arrive(&sb, &label, &mut procs, holder);
        }
        let outcome = finish(&label, &mut procs, m % 3 != 1);
        assert_eq!(outcome.decided, 1, "{label}: the minute was decided {} times ({outcome:?})", outcome.decided);
        let ticks = check_one_decision_per_minute(&sb, &label);
        assert_eq!(ticks.len(), m as usize + 1, "{label}: one record per minute so far");
        assert_eq!(ticks.last().unwrap().1.at, base + m * 60, "{label}: the newest record is not this minute's");
        totals.decided += outcome.decided;
        totals.republished += outcome.republished;
        totals.lock_held += outcome.lock_held;
    }
    eprintln!(
        "{}: 6 minutes, 15 racing ticks in {:.1?}: {} decided, {} published the decision again, {} refused (lock held)",
        sb.label,
        started.elapsed(),
        totals.decided,
        totals.republished,
        totals.lock_held
    );
}

/// `count` runs of 20 simulated minutes started together.
fn racing_runs(sb: &Sandbox, count: usize) {
    const MINUTES: usize = 20;
    avoid_a_cycle_boundary();
    let label = format!("{}: {count} racing runs", sb.label);
    let started = Instant::now();
    let mut procs: Vec<Proc> = (0..count)
        .map(|k| sb.spawn(&["run", "--speed", "600", "--ticks", &MINUTES.to_string(), "--wait", "30s"], &format!("run-{count}-{k}")))
        .collect();
    let outcome = finish(&label, &mut procs, false);
    let ticks = check_one_decision_per_minute(sb, &label);
    assert_eq!(ticks.len(), MINUTES, "{label}: {MINUTES} minutes, each decided once");
    let republished: usize = procs.iter().map(|p| p.stderr().matches(REPUBLISHED).count()).sum();
    eprintln!(
        "{label}: {MINUTES} minutes in {:.1?}, {} records, {republished} ticks published a recorded minute again ({outcome:?})",
        started.elapsed(),
        ticks.len()
    );
}

/// Runs started together must share the synthetic cycle they start in: not within 20 s of its
/// end (a cycle is 80 minutes).
fn avoid_a_cycle_boundary() {
    let cycle = sentinel_adapters::synthetic::CYCLE_MINUTES as u64 * 60;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let left = cycle - now % cycle;
    if left < 20 {
        std::thread::sleep(Duration::from_secs(left + 1));
    }
}
