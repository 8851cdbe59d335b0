//! SIGTERM (and SIGINT) stop `sentinel run` promptly and cleanly: exit 0 within a couple of
//! seconds, even in the middle of a long pause between simulated minutes, with the last tick
//! complete (its document published and parseable, its sequence the newest tick record).

use crate::support;

use std::time::{Duration, Instant};
use support::{Metrics, Sandbox, eventually};

fn stops_on(signal: &str) {
    let sb = Sandbox::new(Metrics::Synthetic);
    // --speed 2: a simulated minute every 30 s, so the signal lands in the pause.
    let mut run = sb.spawn(&["run", "--speed", "2"], "run");
    let published = eventually(Duration::from_secs(20), || sb.document(&sb.parameter).is_some() && sb.document(&sb.cache).is_some());
    assert!(published, "the first tick never published:\n{}", run.stderr());
    std::thread::sleep(Duration::from_millis(200));
    assert!(run.child.try_wait().unwrap().is_none(), "still running: {}", run.stderr());

    let sent = Instant::now();
    run.signal(signal);
    let status = run.wait_for_exit(Duration::from_secs(3)).unwrap_or_else(|| panic!("no exit 3 s after SIG{signal}:\n{}", run.stderr()));
    assert!(sent.elapsed() < Duration::from_secs(2), "took {:?}", sent.elapsed());
    assert_eq!(status.code(), Some(0), "{status:?}\n{}", run.stderr());
    let stderr = run.stderr();
    assert!(stderr.contains("shutdown requested"), "{stderr}");
    assert!(stderr.contains("sentinel stopped ticks=1"), "{stderr}");

    let doc = sb.cache_doc();
    let newest = sb.ticks().last().map(|(s, _)| *s).unwrap();
    assert_eq!(doc["sequence"], newest, "the last tick was complete: {doc}");
    assert_eq!(sb.parameter_doc(), doc);
    let publication: String =
        sb.db().query_row("SELECT publication FROM ticks WHERE sequence = ?1", [newest as i64], |r| r.get(0)).unwrap();
    assert!(publication.contains("\"ok\":true"), "its publication was recorded: {publication}");
}

#[test]
fn sigterm_stops_a_slow_run_within_two_seconds() {
    stops_on("TERM");
}

#[test]
fn sigint_stops_a_slow_run_too() {
    stops_on("INT");
}
