//! A minute is decided once: a second tick for a minute already recorded publishes the
//! recorded document again (same sequence, same content) and stores no second decision. That
//! heals a tick killed or failed between its commit and its publication, and keeps racing
//! sentinels to one decision per minute.

use crate::support;

use support::{Metrics, Sandbox, cpu, t};

fn sandbox() -> Sandbox {
    Sandbox::new(Metrics::Trace((0..4).map(|m| cpu(t(m), if m == 0 { 40.0 } else { 90.0 })).collect()))
}

#[test]
fn a_repeated_minute_republishes_its_document_and_decides_nothing_new() {
    let sb = sandbox();
    sb.tick_ok(t(0));
    sb.tick_ok(t(1));
    let first = sb.cache_doc();
    assert_eq!(first["sequence"], 2);
    std::fs::remove_file(&sb.cache).unwrap();
    std::fs::remove_file(&sb.parameter).unwrap();

    let ran = sb.tick_ok(t(1));
    assert!(ran.stderr.contains("already decided (sequence 2, for 2026-10-20T14:01:00Z)"), "{}", ran.stderr);
    assert_eq!(sb.cache_doc(), first, "the same document, sequence included");
    assert_eq!(sb.parameter_doc(), first);
    assert_eq!(sb.ticks().len(), 2, "no second record for the minute");

    // The next minute continues the sequence from the one decision of minute 1.
    sb.tick_ok(t(2));
    assert_eq!(sb.cache_doc()["sequence"], 3);
    assert_eq!(sb.ticks().len(), 3);
}

#[test]
fn a_minute_whose_publication_failed_is_healed_by_a_rerun() {
    let sb = Sandbox::with_channels(Metrics::Trace(vec![cpu(t(0), 40.0)]), "blocker/cache.json", "blocker/parameter.json");
    std::fs::write(sb.path("blocker"), "a file where the channels' folder should be").unwrap();
    sb.sentinel(&["tick", "--at", &support::rfc(t(0))]).expect_code(1);
    assert_eq!(sb.ticks().len(), 1, "decided and stored, not published");

    std::fs::remove_file(sb.path("blocker")).unwrap();
    let ran = sb.tick_ok(t(0));
    assert!(ran.stderr.contains("published again"), "{}", ran.stderr);
    let doc = sb.cache_doc();
    assert_eq!(doc["sequence"], 1, "the stored decision, not a new one");
    assert_eq!(doc["decided_at"], support::rfc(t(0)));
    assert_eq!(sb.parameter_doc(), doc);
    assert_eq!(sb.ticks().len(), 1);
}
