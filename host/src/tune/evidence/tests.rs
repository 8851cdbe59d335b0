use super::*;
use std::io::Write as _;

/// A CSV of `days` days at one sample every 5 minutes from 2014-05-14.
fn csv(dir: &Path, name: &str, days: u32, value: impl Fn(u32) -> f64) -> PathBuf {
    let path = dir.join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, "timestamp,value").unwrap();
    let start = time::macros::datetime!(2014-05-14 00:00:00 UTC);
    for i in 0..days * 288 {
        let at = start + time::Duration::minutes(5 * i64::from(i));
        let stamp = format!("{:04}-{:02}-{:02} {:02}:{:02}:00", at.year(), at.month() as u8, at.day(), at.hour(), at.minute());
        writeln!(f, "{stamp},{}", value(i)).unwrap();
    }
    path
}

fn spec(path: &Path) -> TraceSpec {
    path.display().to_string().parse().unwrap()
}

#[test]
fn a_long_series_is_cut_into_days_and_the_hold_out_spread_over_the_segments() {
    let dir = tempfile::tempdir().unwrap();
    let long = csv(dir.path(), "hot.csv", 20, |i| f64::from(i % 100));
    let traces = load(EvidenceSpec { traces: vec![spec(&long)], holdout_fraction: 0.25, segment_days: 2, ..Default::default() }).unwrap();
    let names: Vec<(&str, Set)> = traces.iter().map(|t| (t.trace.name.as_str(), t.set)).collect();
    assert_eq!(names.len(), 10);
    assert_eq!(names[0], ("hot#1", Set::Train));
    let held: Vec<&str> = names.iter().filter(|(_, s)| *s == Set::Holdout).map(|(n, _)| *n).collect();
    assert_eq!(held, vec!["hot#4", "hot#8"], "every fourth position");
    let ticks: Vec<u64> = traces.iter().map(|t| t.ticks).collect();
    assert!(ticks[..9].iter().all(|&n| n == 2 * 1440) && ticks[9] > 2 * 1440 - 10, "{ticks:?}");
    assert_eq!(traces[0].source_sha256, hex::encode(Sha256::digest(std::fs::read(&long).unwrap())));
    let again = load(EvidenceSpec { traces: vec![spec(&long)], holdout_fraction: 0.25, segment_days: 2, ..Default::default() }).unwrap();
    assert!(traces.iter().zip(&again).all(|(a, b)| a.set == b.set && a.trace.events == b.trace.events), "the same split every time");
}

#[test]
fn a_short_tail_joins_the_segment_before_it() {
    let dir = tempfile::tempdir().unwrap();
    // 7 days and 2 hours: one segment of 7 days would leave a 2-hour sliver.
    let path = csv(dir.path(), "tail.csv", 7, |_| 10.0);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("2014-05-21 00:00:00,10\n2014-05-21 02:00:00,10\n");
    std::fs::write(&path, text).unwrap();
    let other = csv(dir.path(), "other.csv", 1, |_| 10.0);
    let traces =
        load(EvidenceSpec { traces: vec![spec(&path)], holdout: vec![spec(&other)], segment_days: 7, ..Default::default() }).unwrap();
    let names: Vec<&str> = traces.iter().map(|t| t.trace.name.as_str()).collect();
    assert_eq!(names, vec!["tail", "other"], "the 2-hour tail is not a segment of its own");
    assert_eq!(traces[0].ticks, 7 * 1440 + 121);
}

#[test]
fn named_hold_out_traces_are_validated_on_only() {
    let dir = tempfile::tempdir().unwrap();
    let a = csv(dir.path(), "a.csv", 1, |_| 50.0);
    let b = csv(dir.path(), "b.csv", 1, |_| 50.0);
    let traces = load(EvidenceSpec { traces: vec![spec(&a)], holdout: vec![spec(&b)], ..Default::default() }).unwrap();
    assert_eq!(traces.iter().map(|t| (t.trace.name.as_str(), t.set)).collect::<Vec<_>>(), vec![("a", Set::Train), ("b", Set::Holdout)]);
}

#[test]
fn folders_give_their_traces_and_series_in_name_order_and_signals_apply_to_csv_only() {
    let dir = tempfile::tempdir().unwrap();
    csv(dir.path(), "b.csv", 1, |_| 50.0);
    csv(dir.path(), "a.csv", 1, |_| 50.0);
    std::fs::write(dir.path().join("c.jsonl"), "{\"at\":\"2026-10-20T14:00:00Z\",\"reading\":{\"cpu_pct\":10}}\n").unwrap();
    std::fs::write(dir.path().join("c.expected.jsonl"), "not a trace").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
    let traces = load_whole(&[spec(dir.path())], RepeatedTimestamps::Refuse).unwrap();
    assert_eq!(traces.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), vec!["a", "b", "c"]);
    let latency: TraceSpec = format!("latency:crm={}", dir.path().join("a.csv").display()).parse().unwrap();
    let read = load_whole(&[latency], RepeatedTimestamps::Refuse).unwrap();
    let TraceEvent::Tick { signal: vocabulary::Signal::Reading(r), .. } = &read[0].events[0] else { panic!("a reading") };
    assert_eq!((r.cpu_pct, r.latency[0].api.as_str(), r.latency[0].p95_ms), (None, "crm", Some(50.0)));
    let wrong: TraceSpec = format!("cpu_pct={}", dir.path().join("c.jsonl").display()).parse().unwrap();
    assert!(load_whole(&[wrong], RepeatedTimestamps::Refuse).unwrap_err().to_string().contains("a signal applies to CSV series only"));
    assert!("memory=x.csv".parse::<TraceSpec>().unwrap_err().contains("unknown signal"));
}

#[test]
fn no_trace_to_choose_or_to_validate_on_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let one = csv(dir.path(), "one.csv", 1, |_| 50.0);
    let err = load(EvidenceSpec { traces: vec![spec(&one)], holdout_fraction: 0.3, ..Default::default() }).unwrap_err().to_string();
    assert!(err.contains("no trace with ticks to validate on"), "{err}");
    let err = load(EvidenceSpec { traces: vec![spec(&one)], holdout_fraction: 1.0, ..Default::default() }).unwrap_err().to_string();
    assert!(err.contains("--holdout-fraction must be above 0 and below 1"), "{err}");
    let missing = load(EvidenceSpec { traces: vec![spec(&dir.path().join("gone.csv"))], holdout_fraction: 0.5, ..Default::default() });
    assert!(missing.unwrap_err().to_string().contains("gone.csv"));
    let twice = load(EvidenceSpec { traces: vec![spec(&one), spec(&one)], holdout_fraction: 0.5, ..Default::default() });
    assert!(twice.unwrap_err().to_string().contains("two traces are named \"one\""));
}

#[test]
fn by_series_every_trace_is_chosen_on_and_segments_keep_their_series() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (csv(dir.path(), "a.csv", 14, |_| 10.0), csv(dir.path(), "b.csv", 3, |_| 10.0));
    let by_series = |traces: Vec<TraceSpec>| load(EvidenceSpec { traces, segment_days: 7, split: Split::Series, ..Default::default() });
    let traces = by_series(vec![spec(&a), spec(&b)]).unwrap();
    let seen: Vec<(&str, Set, usize, &str)> =
        traces.iter().map(|t| (t.trace.name.as_str(), t.set, t.series, t.series_name.as_str())).collect();
    assert_eq!(seen, vec![("a#1", Set::Train, 0, "a"), ("a#2", Set::Train, 0, "a"), ("b", Set::Train, 1, "b")]);
    // One series cannot be held out against anything.
    let err = by_series(vec![spec(&a)]).unwrap_err().to_string();
    assert!(err.contains("at least two series"), "{err}");
}

#[test]
fn a_forward_split_chooses_on_each_series_earlier_part_and_holds_out_its_later_part() {
    let dir = tempfile::tempdir().unwrap();
    let one = csv(dir.path(), "db.csv", 14, |i| f64::from(i % 100));
    let traces =
        load(EvidenceSpec { traces: vec![spec(&one)], holdout_fraction: 0.5, split: Split::Forward, ..Default::default() }).unwrap();
    let names: Vec<(&str, Set, bool)> = traces.iter().map(|t| (t.trace.name.as_str(), t.set, t.forward)).collect();
    assert_eq!(names, vec![("db#earlier", Set::Train, true), ("db#later", Set::Holdout, true)]);
    let last_earlier = traces[0].trace.events.last().unwrap().at();
    let first_later = traces[1].trace.events.first().unwrap().at();
    assert!(last_earlier < first_later, "everything chosen on lies before everything held out");
    let (a, b) = (traces[0].ticks as i64, traces[1].ticks as i64);
    assert!((a - b).abs() <= 5, "a half each: {a} and {b}");
    // Two series: each cut on its own, each on both sides.
    let two = csv(dir.path(), "other.csv", 4, |_| 50.0);
    let traces = load(EvidenceSpec {
        traces: vec![spec(&one), spec(&two)],
        holdout_fraction: 0.25,
        split: Split::Forward,
        segment_days: 7,
        ..Default::default()
    })
    .unwrap();
    let names: Vec<(&str, Set)> = traces.iter().map(|t| (t.trace.name.as_str(), t.set)).collect();
    assert_eq!(
        names,
        vec![
            ("db#earlier#1", Set::Train),
            ("db#earlier#2", Set::Train),
            ("db#later", Set::Holdout),
            ("other#earlier", Set::Train),
            ("other#later", Set::Holdout)
        ],
        "each part cut into segments on its own (10.5 days: 7 and 3.5; a piece shorter than a segment stays whole)"
    );
    assert_eq!((traces[2].series, traces[3].series), (0, 1));
}

#[test]
fn one_series_held_out_by_series_or_by_a_fraction_that_holds_out_nothing_names_what_would_work() {
    let dir = tempfile::tempdir().unwrap();
    // Four days cut into days: three segments (the fourth day, five minutes short of a day,
    // joins the third).
    let one = csv(dir.path(), "db.csv", 4, |i| f64::from(i % 100));
    let err = load(EvidenceSpec { traces: vec![spec(&one)], split: Split::Series, ..Default::default() }).unwrap_err().to_string();
    assert!(err.contains("needs at least two series with ticks: for one server's own history use --split forward"), "{err}");
    let err = load(EvidenceSpec { traces: vec![spec(&one)], holdout_fraction: 0.3, segment_days: 1, ..Default::default() })
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--holdout-fraction 0.3 holds out none of the 3 traces (or segments); --holdout-fraction 0.34 would hold out one"),
        "{err}"
    );
    let err = load(EvidenceSpec { traces: vec![spec(&one)], holdout_fraction: 0.3, ..Default::default() }).unwrap_err().to_string();
    assert!(err.contains("one trace cannot be split by fraction: cut it with --segment-days N, or use --split forward"), "{err}");
    // The fraction it names does hold one out.
    let ok = load(EvidenceSpec { traces: vec![spec(&one)], holdout_fraction: 0.34, segment_days: 1, ..Default::default() }).unwrap();
    assert_eq!(ok.iter().filter(|t| t.set == Set::Holdout).count(), 1);
}
