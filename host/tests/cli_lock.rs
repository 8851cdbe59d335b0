//! One sentinel decides at a time: while another holder has the exclusive lock on
//! `<db>.lock`, `sentinel tick` (and `sentinel run`) exit 3 with a clear message and publish
//! nothing; with `--wait` a tick takes the lock once it is released.

use crate::support;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};
use support::{Metrics, Sandbox, cpu, eventually, rfc, t};

/// Takes the sentinel's leadership lock the way another sentinel would, noting our pid.
fn hold_lock(db: &Path) -> File {
    let mut name = db.as_os_str().to_owned();
    name.push(".lock");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(name).unwrap();
    file.lock().unwrap();
    file.set_len(0).unwrap();
    writeln!(file, "{}", std::process::id()).unwrap();
    file
}

/// The published files' bytes and the number of tick records.
fn published(sb: &Sandbox) -> (Vec<u8>, Vec<u8>, usize) {
    (std::fs::read(&sb.cache).unwrap(), std::fs::read(&sb.parameter).unwrap(), sb.ticks().len())
}

fn trace() -> Metrics {
    Metrics::Trace((0..4).map(|m| cpu(t(m), 40.0)).collect())
}

#[test]
fn a_second_instance_exits_3_and_never_publishes() {
    let sb = Sandbox::new(trace());
    sb.tick_ok(t(0));
    let before = published(&sb);
    assert_eq!(before.2, 1);

    let lock = hold_lock(&sb.db);
    let ran = sb.sentinel(&["tick", "--at", &rfc(t(1))]).expect_code(3);
    assert!(ran.stderr.contains("another sentinel holds the lock"), "{}", ran.stderr);
    assert!(ran.stderr.contains("sentinel.db.lock"), "names the lock file: {}", ran.stderr);
    assert!(ran.stderr.contains(&format!("held by process {}", std::process::id())), "names the holder: {}", ran.stderr);
    assert_eq!(published(&sb), before, "nothing decided, stored or published");

    // The loop refuses the same way, before its first tick.
    let ran = sb.sentinel(&["run", "--speed", "3000", "--ticks", "2"]).expect_code(3);
    assert!(ran.stderr.contains("another sentinel holds the lock"), "{}", ran.stderr);
    assert_eq!(published(&sb), before);

    // Waiting is bounded: still held after the wait is the same refusal.
    let started = Instant::now();
    let ran = sb.sentinel(&["tick", "--at", &rfc(t(1)), "--wait", "300ms"]).expect_code(3);
    assert!(started.elapsed() >= Duration::from_millis(300), "it waited");
    assert!(ran.stderr.contains("still held by another sentinel"), "{}", ran.stderr);
    assert_eq!(published(&sb), before);

    drop(lock);
    sb.tick_ok(t(1));
    assert_eq!(sb.cache_doc()["sequence"], 2, "the next free tick continues the sequence");
}

#[test]
fn with_wait_a_tick_takes_the_lock_once_released() {
    let sb = Sandbox::new(trace());
    let lock = hold_lock(&sb.db);
    let mut child = sb.spawn(&["tick", "--at", &rfc(t(2)), "--wait", "2s"], "waiting");
    // The process opens the store just before it asks for the lock: from then on it waits.
    assert!(eventually(Duration::from_secs(10), || sb.db.exists()), "the tick never opened its store");
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.child.try_wait().unwrap().is_none(), "still waiting while held: {}", child.stderr());
    assert!(sb.document(&sb.cache).is_none(), "nothing published while the lock is held");
    let released = Instant::now();
    drop(lock);
    let status = child.wait_for_exit(Duration::from_secs(10)).expect("the waiting tick finishes");
    assert!(status.success(), "{status:?}\n{}", child.stderr());
    assert!(released.elapsed() < Duration::from_secs(2), "took the lock soon after its release");
    let doc = sb.cache_doc();
    assert_eq!(doc["sequence"], 1);
    assert_eq!(doc["decided_at"], rfc(t(2)).as_str());
    assert_eq!(sb.parameter_doc(), doc);
}

#[test]
fn a_wait_longer_than_the_tick_deadline_is_a_wait_not_a_failed_tick() {
    // The deadline bounds the tick's own work; waiting for the lock comes before it.
    let sb = Sandbox::new(trace());
    sb.edit_config(|text| {
        text.replace("tick_deadline = \"20s\"", "tick_deadline = \"1s\"")
            .replace("path = \"trace.jsonl\"\n", "path = \"trace.jsonl\"\ntimeout = \"500ms\"\n")
            .replace("timeout = \"5s\"", "timeout = \"500ms\"")
    });
    let lock = hold_lock(&sb.db);
    let started = Instant::now();
    let ran = sb.sentinel(&["tick", "--at", &rfc(t(0)), "--wait", "1500ms"]).expect_code(3);
    assert!(started.elapsed() >= Duration::from_millis(1500), "waited the whole --wait: {:?}", started.elapsed());
    assert!(ran.stderr.contains("still held by another sentinel"), "{}", ran.stderr);
    assert!(!ran.stderr.contains("deadline"), "{}", ran.stderr);
    assert!(sb.document(&sb.cache).is_none());
    drop(lock);
    sb.tick_ok(t(0));
    assert_eq!(sb.cache_doc()["sequence"], 1);
}
