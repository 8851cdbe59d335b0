//! Every trace the repository holds, for tests that must hold on all of them: the scenario
//! traces, the real CloudWatch series and a generated fortnight with one API's latency learnt
//! hourly.

use crate::paths::{cloudwatch_dir, crate_dir, files_ending};
use crate::year;
use sentinel_core::trace::{ImportSignal, RepeatedTimestamps, Trace, import_csv, read_trace};

pub fn repository_traces() -> Vec<Trace> {
    let mut traces: Vec<Trace> = files_ending(&crate_dir().join("traces"), ".jsonl")
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".expected.jsonl"))
        .map(|p| read_trace(&p).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    for csv in files_ending(&cloudwatch_dir(), ".csv") {
        let file = std::fs::File::open(&csv).unwrap();
        let events = import_csv(&csv.display().to_string(), file, &ImportSignal::CpuPct, RepeatedTimestamps::Refuse)
            .unwrap_or_else(|e| panic!("{e}"));
        traces.push(Trace { name: csv.file_stem().unwrap().to_string_lossy().into_owned(), events });
    }
    traces.push(Trace { name: "generated fortnight".into(), events: year::synthetic(14 * 24 * 60, true) });
    assert!(traces.len() >= 18, "expected the repository's traces, found {}", traces.len());
    traces
}
