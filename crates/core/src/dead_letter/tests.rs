use super::*;
use vocabulary::Factors;

fn letter(minute: &str) -> DeadLetter {
    DeadLetter {
        id: 0,
        minute: minute.into(),
        failed_at: minute.into(),
        reason: FailureReason::Store,
        error: "the tick could not be stored".into(),
        decided: Some(DecidedBeforeFailure {
            state: ProtectionState::Critical,
            previous: ProtectionState::Constrained,
            cause: Cause::Escalate,
            factors: Factors { bulk: 0.0, heavy: 0.0, write: 1.0, read: 1.0 },
            explanation: "cpu 95".into(),
            policy: PolicyRef { name: "capacity-policy".into(), version: "1.0.0".into(), digest: "ab".into() },
        }),
        sequence: None,
        channels: Vec::new(),
    }
}

#[test]
fn failures_get_growing_ids_and_one_success_ends_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/dead-letter.jsonl");
    let letters = DeadLetters::open(path.clone());
    assert_eq!(letters.recover(1, "m0".into(), "w0".into()).unwrap(), Vec::<u64>::new(), "nothing to end, nothing written");
    assert!(!path.exists());
    assert_eq!(letters.record(letter("m1")).unwrap(), 1);
    assert_eq!(letters.record(letter("m2")).unwrap(), 2);
    assert_eq!(letters.recover(7, "m3".into(), "w3".into()).unwrap(), vec![1, 2]);
    assert_eq!(letters.record(letter("m4")).unwrap(), 3);
    let contents = read(&path).unwrap();
    let listed: Vec<(u64, Option<u64>)> = contents.failures().iter().map(|(l, r)| (l.id, r.map(|r| r.sequence))).collect();
    assert_eq!(listed, [(3, None), (2, Some(7)), (1, Some(7))], "newest first, each with the tick that ended it");
    assert_eq!(contents.open(), [3]);
    assert_eq!(contents.failures()[1].0.decided.as_ref().unwrap().state, ProtectionState::Critical, "the decision is kept");
}

#[test]
fn a_restarted_sentinel_continues_the_ids_and_ends_what_the_last_run_left_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dead-letter.jsonl");
    DeadLetters::open(path.clone()).record(letter("m1")).unwrap();
    let again = DeadLetters::open(path.clone());
    assert_eq!(again.record(letter("m2")).unwrap(), 2);
    assert_eq!(again.recover(3, "m3".into(), "w".into()).unwrap(), vec![1, 2]);
}

#[test]
fn a_torn_or_foreign_line_is_skipped_naming_it_and_the_rest_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dead-letter.jsonl");
    DeadLetters::open(path.clone()).record(letter("m1")).unwrap();
    let mut text = std::fs::read_to_string(&path).unwrap();
    // A crash mid-write: the line has no end.
    text.push_str("{\"kind\":\"failed\",\"id\":2,\"min");
    std::fs::write(&path, text).unwrap();
    let letters = DeadLetters::open(path.clone());
    assert_eq!(letters.record(letter("m3")).unwrap(), 2, "ids continue from the records that read");
    let contents = read(&path).unwrap();
    assert_eq!(contents.unreadable.len(), 1);
    assert_eq!(contents.unreadable[0].line, 2);
    assert_eq!(contents.failures().len(), 2, "the record after the torn line is on a line of its own");
}

#[test]
fn past_ten_mib_the_file_moves_aside_and_both_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dead-letter.jsonl");
    let letters = DeadLetters::open(path.clone());
    let mut big = letter("m");
    big.error = "x".repeat(1 << 20);
    for _ in 0..11 {
        letters.record(big.clone()).unwrap();
    }
    assert!(rotated(&path).is_file() && path.is_file());
    assert!(std::fs::metadata(&path).unwrap().len() < ROTATE_BYTES);
    let ids: Vec<u64> = read(&path).unwrap().failures().iter().map(|(l, _)| l.id).collect();
    assert_eq!(ids, (1..=11).rev().collect::<Vec<_>>());
}

#[test]
fn an_unwritable_file_is_an_error_naming_it_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    // A folder where the file should be.
    let path = dir.path().join("dead-letter.jsonl");
    std::fs::create_dir(&path).unwrap();
    let err = DeadLetters::open(path.clone()).record(letter("m1")).unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()) && err.contains("writable"), "{err}");
}

/// The second security review, finding 7: the file followed a link planted in a shared folder
/// and was created 0644.
#[test]
fn a_planted_link_is_never_written_through_and_a_new_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let path = dir.path().join("dead-letter.jsonl");
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    assert!(DeadLetters::open(path.clone()).record(letter("2026-01-01T00:00:00Z")).is_err(), "refused, not followed");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let fresh = dir.path().join("fresh/dead-letter.jsonl");
    DeadLetters::open(fresh.clone()).record(letter("2026-01-01T00:00:00Z")).unwrap();
    assert_eq!(std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o600);
}
