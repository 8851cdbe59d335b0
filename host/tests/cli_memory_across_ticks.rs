//! Memory survives separate `sentinel tick` processes: the streak of constrained readings is
//! counted across processes through the SQLite memory row, so the third consecutive
//! constrained minute escalates, and the published `sequence` grows by one per process.

use crate::support;

use support::{Metrics, Sandbox, cpu, rfc, t};

#[test]
fn three_constrained_minutes_escalate_across_separate_tick_processes() {
    // One normal minute, then constrained ones (cpu >= 70 %, below 85 %).
    let sb = Sandbox::new(Metrics::Trace(vec![cpu(t(0), 40.0), cpu(t(1), 75.0), cpu(t(2), 76.0), cpu(t(3), 77.0), cpu(t(4), 78.0)]));
    let expected = [
        (0, "normal", "fresh"),
        (1, "normal", "hold"),
        (2, "normal", "hold"),
        // The third consecutive constrained minute: the streak was carried by the store.
        (3, "constrained", "escalate"),
        (4, "constrained", "hold"),
    ];
    for (n, (minute, state, cause)) in expected.into_iter().enumerate() {
        let ran = sb.tick_ok(t(minute));
        let doc = sb.cache_doc();
        let at = rfc(t(minute));
        assert_eq!(doc["state"], state, "tick at {at}: {doc}\n{}", ran.stderr);
        assert_eq!(doc["cause"], cause, "tick at {at}: {doc}");
        assert_eq!(doc["sequence"], n as u64 + 1, "one more per tick process: {doc}");
        assert_eq!(doc["decided_at"], at.as_str());
        assert_eq!(doc["pinned"], false);
        assert_eq!(doc["policy"]["version"], "1.0.0");
        assert_eq!(sb.parameter_doc(), doc, "both channels publish the same document");
        // Logs go to stderr, one line explaining the tick; file channels print nothing.
        assert!(ran.stdout.is_empty(), "{}", ran.stdout);
        assert!(ran.stderr.contains(&format!("cause=\"{cause}\"")), "{}", ran.stderr);
    }
    let constrained = serde_json::json!({ "bulk": 0.5, "heavy": 0.5, "write": 1.0, "read": 1.0 });
    assert_eq!(sb.cache_doc()["factors"], constrained);

    // The tick records agree: one per process, the escalation naming its three readings.
    let ticks = sb.ticks();
    assert_eq!(ticks.iter().map(|(s, _)| *s).collect::<Vec<_>>(), vec![1, 2, 3, 4, 5]);
    let escalation = &ticks[3].1["decision"];
    assert_eq!(escalation["cause"], "escalate");
    assert_eq!(escalation["previous"], "normal");
    let supporting: Vec<i64> = escalation["supporting"].as_array().unwrap().iter().map(|e| e["at"].as_i64().unwrap()).collect();
    assert_eq!(supporting, vec![t(1), t(2), t(3)]);
}

#[test]
fn a_missed_minute_between_processes_breaks_the_streak() {
    let sb = Sandbox::new(Metrics::Trace(vec![cpu(t(0), 75.0), cpu(t(1), 75.0), cpu(t(3), 75.0), cpu(t(4), 75.0)]));
    // 00, 01, then nothing at 02: the gap of 120 s since the newest entry clears `recent`.
    for (minute, cause) in [(0, "fresh"), (1, "hold"), (3, "hold"), (4, "hold")] {
        sb.tick_ok(t(minute));
        let doc = sb.cache_doc();
        assert_eq!(doc["state"], "normal", "no three consecutive minutes yet at {}: {doc}", rfc(t(minute)));
        assert_eq!(doc["cause"], cause, "{doc}");
    }
    assert_eq!(sb.cache_doc()["sequence"], 4);
    let memory: String = sb.db().query_row("SELECT memory FROM memory WHERE id = 1", [], |r| r.get(0)).unwrap();
    let memory: serde_json::Value = serde_json::from_str(&memory).unwrap();
    let recent: Vec<i64> = memory["recent"].as_array().unwrap().iter().map(|e| e["at"].as_i64().unwrap()).collect();
    assert_eq!(recent, vec![t(3), t(4)], "the streak restarted after the gap");
}
