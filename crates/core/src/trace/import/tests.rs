use super::*;
use crate::trace::{parse_trace, write_event};

const T0: Instant = 1_392_388_200; // 2014-02-14T14:30:00Z

fn import(text: &str, signal: &ImportSignal) -> Result<Vec<TraceEvent>, ImportError> {
    import_csv("cpu.csv", text.as_bytes(), signal, RepeatedTimestamps::Refuse)
}

fn cpu(text: &str) -> Result<Vec<TraceEvent>, ImportError> {
    import(text, &ImportSignal::CpuPct)
}

/// The (minute, cpu_pct) of each imported tick.
fn cpu_minutes(events: &[TraceEvent]) -> Vec<(Instant, f64)> {
    events
        .iter()
        .map(|e| match e {
            TraceEvent::Tick { at, signal: Signal::Reading(r) } => (*at, r.cpu_pct.unwrap()),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn parses_signal_names() {
    assert_eq!("cpu_pct".parse(), Ok(ImportSignal::CpuPct));
    assert_eq!("connections_pct".parse(), Ok(ImportSignal::ConnectionsPct));
    assert_eq!("latency:crm".parse(), Ok(ImportSignal::Latency { api: "crm".into() }));
    assert_eq!("latency:a:b".parse(), Ok(ImportSignal::Latency { api: "a:b".into() }));
    for bad in ["", "cpu", "CPU_PCT", "latency", "latency:", "latency: ", "p95_ms"] {
        let err = bad.parse::<ImportSignal>().unwrap_err();
        assert_eq!(err, ParseImportSignalError(bad.into()));
        assert!(err.to_string().contains("expected cpu_pct, connections_pct or latency:<api>"));
    }
    for name in ["cpu_pct", "connections_pct", "latency:crm"] {
        assert_eq!(name.parse::<ImportSignal>().unwrap().to_string(), name);
    }
}

#[test]
fn holds_each_value_until_the_next_sample() {
    let events = cpu("timestamp,value\n2014-02-14 14:30:00,1.5\n2014-02-14 14:35:00,2.5\n2014-02-14 14:40:00,3.5\n").unwrap();
    let expected: Vec<(Instant, f64)> = (0..11).map(|i| (T0 + 60 * i, [1.5, 2.5, 3.5][(i / 5) as usize])).collect();
    assert_eq!(cpu_minutes(&events), expected);
}

#[test]
fn irregular_samples_and_seconds() {
    // Seconds are dropped; the gap of 3 minutes holds 7.0 for three readings.
    let events = cpu("timestamp,value\n2014-02-14 14:30:59,7\n2014-02-14 14:33:01,8\n").unwrap();
    assert_eq!(cpu_minutes(&events), vec![(T0, 7.0), (T0 + 60, 7.0), (T0 + 120, 7.0), (T0 + 180, 8.0)]);
}

#[test]
fn last_sample_in_a_minute_wins() {
    let events = cpu("timestamp,value\n2014-02-14 14:30:00,1\n2014-02-14 14:30:20,2\n2014-02-14 14:30:40.5,3\n2014-02-14 14:31:10,4\n2014-02-14 14:31:50,5\n").unwrap();
    assert_eq!(cpu_minutes(&events), vec![(T0, 3.0), (T0 + 60, 5.0)]);
}

#[test]
fn one_sample_is_one_reading() {
    assert_eq!(cpu_minutes(&cpu("timestamp,value\n2014-02-14 14:30:00,0\n").unwrap()), vec![(T0, 0.0)]);
}

#[test]
fn accepts_rfc3339_and_spacing() {
    let text = "timestamp,value\r\n2014-02-14T14:30:00Z, 100 \r\n\r\n 2014-02-14T15:31:30+01:00 ,50.25\r\n";
    assert_eq!(cpu_minutes(&cpu(text).unwrap()), vec![(T0, 100.0), (T0 + 60, 50.25)]);
}

#[test]
fn connections_and_latency_fill_their_field() {
    let text = "timestamp,value\n2014-02-14 14:30:00,42\n";
    let reading = |signal: &ImportSignal| match import(text, signal).unwrap().remove(0) {
        TraceEvent::Tick { signal: Signal::Reading(r), .. } => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        reading(&ImportSignal::ConnectionsPct),
        Reading { cpu_pct: None, connections_pct: Some(42.0), scaling: None, latency: vec![] }
    );
    assert_eq!(
        reading(&ImportSignal::Latency { api: "crm".into() }),
        Reading {
            cpu_pct: None,
            connections_pct: None,
            scaling: None,
            latency: vec![ApiLatency { api: "crm".into(), p95_ms: Some(42.0), baseline_ms: None }],
        }
    );
    // Latency is not a percentage.
    let big = import("timestamp,value\n2014-02-14 14:30:00,1250.5\n", &ImportSignal::Latency { api: "crm".into() });
    assert_eq!(big.unwrap().len(), 1);
}

#[test]
fn bad_timestamp() {
    let err = cpu("timestamp,value\n2014-02-14 14:30:00,1\n14/02/2014 14:35,2\n").unwrap_err();
    assert!(matches!(&err, ImportError::BadTimestamp { line: 3, value, .. } if value == "14/02/2014 14:35"), "{err:?}");
    assert_eq!(err.to_string(), r#"cpu.csv:3: bad timestamp "14/02/2014 14:35": expected YYYY-MM-DD HH:MM:SS (UTC) or RFC 3339"#);
    for bad in ["", "2014-02-14", "2014-02-30 10:00:00", "2014-02-14 14:30", "1392388200"] {
        let err = cpu(&format!("timestamp,value\n{bad},1\n")).unwrap_err();
        assert!(matches!(err, ImportError::BadTimestamp { line: 2, .. }), "{bad:?}: {err:?}");
    }
}

#[test]
fn value_not_a_finite_number() {
    for bad in ["high", "", "NaN", "inf", "-inf", "1,5"] {
        let text = format!("timestamp,value\n2014-02-14 14:30:00,{bad}\n");
        let err = cpu(&text).unwrap_err();
        if bad == "1,5" {
            assert!(matches!(err, ImportError::FieldCount { line: 2, count: 3, .. }), "{err:?}");
        } else {
            assert!(matches!(&err, ImportError::NotANumber { line: 2, value, .. } if value == bad), "{bad:?}: {err:?}");
        }
    }
    let err = cpu("timestamp,value\n2014-02-14 14:30:00,high\n").unwrap_err();
    assert_eq!(err.to_string(), r#"cpu.csv:2: value "high" is not a finite number"#);
}

#[test]
fn percentage_out_of_range() {
    let err = cpu("timestamp,value\n2014-02-14 14:30:00,100\n2014-02-14 14:31:00,100.01\n").unwrap_err();
    assert!(matches!(err, ImportError::OutOfRange { line: 3, .. }), "{err:?}");
    assert_eq!(err.to_string(), "cpu.csv:3: value 100.01 is outside 0..=100 for cpu_pct");
    let err = import("timestamp,value\n2014-02-14 14:30:00,-0.5\n", &ImportSignal::ConnectionsPct).unwrap_err();
    assert_eq!(err.to_string(), "cpu.csv:2: value -0.5 is outside 0..=100 for connections_pct");
    let err = import("timestamp,value\n2014-02-14 14:30:00,-1\n", &ImportSignal::Latency { api: "crm".into() }).unwrap_err();
    assert_eq!(err.to_string(), "cpu.csv:2: value -1 is outside 0.. (a non-negative latency) for latency:crm");
}

#[test]
fn timestamps_must_ascend() {
    let err = cpu("timestamp,value\n2014-02-14 14:30:00,1\n2014-02-14 14:35:00,2\n2014-02-14 14:34:00,3\n").unwrap_err();
    assert!(matches!(err, ImportError::NotAscending { line: 4, .. }), "{err:?}");
    assert_eq!(err.to_string(), "cpu.csv:4: timestamp 2014-02-14T14:34:00Z is not after the previous sample's 2014-02-14T14:35:00Z");
    // A repeated timestamp is ambiguous, so it is refused too, saying how to accept it.
    let err = cpu("timestamp,value\n2014-02-14 14:30:00,1\n2014-02-14T14:30:00Z,2\n").unwrap_err();
    assert!(matches!(err, ImportError::Repeated { line: 3, .. }), "{err:?}");
    assert!(err.to_string().contains("pass --repeated-timestamps last"), "{err}");
}

#[test]
fn repeated_timestamps_keep_the_last_sample_when_asked() {
    // A clock change written in local time: an hour missing, then its samples all stamped with
    // the hour after. The last sample of the repeated timestamp wins; the gap holds the value
    // before it, as any gap does; an earlier timestamp is still refused.
    let text = "timestamp,value\n2014-02-14 14:30:00,1\n2014-02-14 14:33:00,2\n2014-02-14 14:33:00,3\n2014-02-14 14:33:00,4\n2014-02-14 14:34:00,5\n";
    let events = import_csv("cpu.csv", text.as_bytes(), &ImportSignal::CpuPct, RepeatedTimestamps::Last).unwrap();
    let minute = |m: i64| T0 + 60 * m;
    assert_eq!(cpu_minutes(&events), vec![(minute(0), 1.0), (minute(1), 1.0), (minute(2), 1.0), (minute(3), 4.0), (minute(4), 5.0)]);
    let backwards = "timestamp,value\n2014-02-14 14:33:00,1\n2014-02-14 14:33:00,2\n2014-02-14 14:32:00,3\n";
    let err = import_csv("cpu.csv", backwards.as_bytes(), &ImportSignal::CpuPct, RepeatedTimestamps::Last).unwrap_err();
    assert!(matches!(err, ImportError::NotAscending { line: 4, .. }), "{err:?}");
}

#[test]
fn no_samples() {
    for text in ["", "timestamp,value\n", "timestamp,value\n\n\n"] {
        let err = cpu(text).unwrap_err();
        assert!(matches!(err, ImportError::NoSamples { .. }), "{text:?}: {err:?}");
        assert_eq!(err.to_string(), "cpu.csv: no samples");
    }
}

#[test]
fn header_and_shape() {
    let err = cpu("2014-02-14 14:30:00,1\n2014-02-14 14:35:00,2\n").unwrap_err();
    assert!(matches!(err, ImportError::MissingHeader { .. }), "{err:?}");
    assert_eq!(err.to_string(), "cpu.csv:1: expected a header row like timestamp,value, got a sample");
    let err = cpu("timestamp,value\n2014-02-14 14:30:00\n").unwrap_err();
    assert_eq!(err.to_string(), "cpu.csv:2: expected 2 fields (timestamp,value), got 1");
    // Other header names are fine (Prometheus exports name their columns differently).
    assert_eq!(cpu("time,cpu\n2014-02-14 14:30:00,1\n").unwrap().len(), 1);
}

#[test]
fn malformed_csv() {
    let err = import_csv("cpu.csv", &b"timestamp,value\n2014-02-14 14:30:00,\xff\n"[..], &ImportSignal::CpuPct, RepeatedTimestamps::Refuse)
        .unwrap_err();
    assert!(matches!(err, ImportError::Csv { line: Some(2), .. }), "{err:?}");
    assert!(err.to_string().starts_with("cpu.csv:2: "), "{err}");
}

#[test]
fn imported_events_round_trip_through_the_trace_format() {
    let events = cpu("timestamp,value\n2014-02-14 14:30:00,51.846000000000004\n2014-02-14 14:32:00,41.361999999999995\n").unwrap();
    let text: Vec<String> = events.iter().map(write_event).collect();
    assert_eq!(parse_trace("t", &text.join("\n")).unwrap().events, events);
}

#[test]
fn imports_the_cloudwatch_rds_series() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/cloudwatch/rds_cpu_utilization_cc0c53.csv");
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let events = import_csv(path, file, &ImportSignal::CpuPct, RepeatedTimestamps::Refuse).unwrap();
    let (first, last) = (events[0].at(), events[events.len() - 1].at());
    assert_eq!(first, T0); // 2014-02-14 14:30:00
    assert_eq!(format_rfc3339(last), "2014-02-28T14:30:00Z");
    assert_eq!(events.len() as i64, (last - first) / 60 + 1);
    assert!(events.windows(2).all(|w| w[1].at() == w[0].at() + 60));
    // 4032 samples, 5 minutes apart but one 10-minute gap: 14 days of minutes plus the last.
    assert_eq!(events.len(), 14 * 1440 + 1);
    let cpu: Vec<f64> = cpu_minutes(&events).into_iter().map(|(_, v)| v).collect();
    assert_eq!(&cpu[..6], &[6.456, 6.456, 6.456, 6.456, 6.456, 5.816]);
    // Every imported line survives the trace format unchanged.
    let text: Vec<String> = events.iter().map(write_event).collect();
    assert_eq!(parse_trace("rds", &text.join("\n")).unwrap().events, events);
}

#[test]
fn imports_every_cloudwatch_series() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/cloudwatch");
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{dir}: {e}")) {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "csv") {
            let source = path.display().to_string();
            let file = std::fs::File::open(&path).unwrap();
            let events = import_csv(&source, file, &ImportSignal::CpuPct, RepeatedTimestamps::Refuse).unwrap_or_else(|e| panic!("{e}"));
            let (first, last) = (events[0].at(), events[events.len() - 1].at());
            assert_eq!(events.len() as i64, (last - first) / 60 + 1, "{source}");
            files += 1;
        }
    }
    assert_eq!(files, 6);
}

#[test]
fn too_long_a_span() {
    let err = cpu("timestamp,value\n2014-02-14 14:30:00,1\n2015-02-15 14:30:00,2\n").unwrap_err();
    assert!(matches!(err, ImportError::TooLong { minutes: 527_041, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "cpu.csv: the samples span 527041 minutes (2014-02-14T14:30:00Z to 2015-02-15T14:30:00Z), \
         more than the 527040 (366 days) an import may hold"
    );
    // Exactly 366 days of minutes is fine.
    let ok = cpu("timestamp,value\n2014-02-14 14:30:00,1\n2015-02-15 14:29:00,2\n").unwrap();
    assert_eq!(ok.len() as i64, MAX_MINUTES);
}
