//! The one table: every figure of a `bench/run` as read back from criterion's estimates (the
//! median of each benchmark) and the benches' notes, each row a ratio of two measurements from
//! the same run, its target and whether it is met, and the load average while it ran.

use crate::results::{criterion_home, dir};
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;

/// Everything one run left behind.
#[derive(Debug)]
pub struct Run {
    criterion: std::path::PathBuf,
    notes: std::path::PathBuf,
}

/// One row: what, the measured figures, the ratio, the target, the verdict, the load.
struct Row {
    what: String,
    figures: String,
    ratio: String,
    target: &'static str,
    verdict: &'static str,
    load: String,
}

impl Run {
    pub fn open() -> Run {
        Run { criterion: criterion_home(), notes: dir() }
    }

    /// The median of `group/id`, in nanoseconds.
    fn median(&self, group: &str, id: &str) -> Option<f64> {
        let path = self.criterion.join(group).join(id).join("new/estimates.json");
        read(&path)?.pointer("/median/point_estimate")?.as_f64()
    }

    fn note(&self, bench: &str) -> Option<Value> {
        read(&self.notes.join(format!("{bench}.json")))
    }

    /// "2.1 -> 2.4": the 1-minute load average at the bench's start and end.
    fn load(&self, bench: &str) -> String {
        let note = self.note(bench);
        let at = |key: &str| note.as_ref().and_then(|n| n.pointer(&format!("/{key}/0"))?.as_f64());
        match (at("load_start"), at("load_end")) {
            (Some(a), Some(b)) => format!("{a:.1} -> {b:.1}"),
            _ => "-".into(),
        }
    }

    /// The table as Markdown; figures missing from the run are named as such.
    pub fn render(&self) -> String {
        let mut rows = Vec::new();
        self.decision(&mut rows);
        self.replay(&mut rows);
        self.swap(&mut rows);
        self.live(&mut rows);
        self.rss(&mut rows);
        self.tune(&mut rows);
        self.cross_validation(&mut rows);
        sizes(&mut rows);
        let mut out = String::from(
            "| measure | figures (same run, medians) | ratio | target | verdict | load 1 min (start -> end) |\n|---|---|---|---|---|---|\n",
        );
        for r in rows {
            let _ = writeln!(out, "| {} | {} | {} | {} | {} | {} |", r.what, r.figures, r.ratio, r.target, r.verdict, r.load);
        }
        out
    }

    fn decision(&self, rows: &mut Vec<Row>) {
        let m = |id| self.median("decision", id);
        let load = self.load("decision");
        let (Some(component), Some(native), Some(echo), Some(empty)) = (m("component"), m("native"), m("noop-echo"), m("noop-empty"))
        else {
            return rows.push(missing("decision (cargo bench --bench decision)"));
        };
        let figures =
            format!("component {} · native {} · no-op echo {} · no-op empty {}", time(component), time(native), time(echo), time(empty));
        let mut row = |what: &str, ratio: f64, limit: f64, target| {
            rows.push(Row {
                what: what.into(),
                figures: figures.clone(),
                ratio: x(ratio),
                target,
                verdict: verdict(ratio <= limit),
                load: load.clone(),
            })
        };
        row("decision: component / native", component / native, 25.0, "≤ 25x");
        row("decision: component / no-op echo (same types lifted and lowered)", component / echo, 3.0, "≤ 3x");
        row("decision: component / no-op empty call", component / empty, 3.0, "≤ 3x (argued in BENCHMARKS.md)");
        if let (Some(c), Some(n)) = (self.median("baselines", "component"), self.median("baselines", "native")) {
            rows.push(Row {
                what: "hourly baselines call (1440 samples): component / native".into(),
                figures: format!("component {} · native {}", time(c), time(n)),
                ratio: x(c / n),
                target: "-",
                verdict: "context",
                load,
            });
        }
    }

    fn replay(&self, rows: &mut Vec<Row>) {
        let load = self.load("replay");
        let ticks = self.note("replay").and_then(|n| n["ticks"].as_f64());
        let m = |id| self.median("replay", id);
        let (Some(ticks), Some(cli), Some(cli_native)) = (ticks, m("cli-component"), m("cli-native")) else {
            return rows.push(missing("replay (cargo bench --bench replay)"));
        };
        let rate = |ns: f64| ticks / (ns * 1e-9);
        rows.push(Row {
            what: format!("replay end to end, one core ({:.0} ticks, `sentinel replay --jobs 1`)", ticks),
            figures: format!("component {} ({}) · native {} ({})", per_s(rate(cli)), time(cli), per_s(rate(cli_native)), time(cli_native)),
            ratio: format!("{} of target · component/native {}", x(rate(cli) / 1e6), x(cli / cli_native)),
            target: "> 1 M ticks/s",
            verdict: verdict(rate(cli) > 1e6),
            load: load.clone(),
        });
        if let (Some(ab), Some(ab_native)) = (m("ab-cli-components"), m("ab-cli-native")) {
            let cores = self.note("replay").and_then(|n| n["cores"].as_f64()).unwrap_or(0.0);
            rows.push(Row {
                what: format!("A/B of the year, two components (1.0.0 vs 1.1.0), end to end, {cores:.0} cores (`sentinel replay --baseline --candidate`)"),
                figures: format!("components {} · native modules {}", time(ab), time(ab_native)),
                ratio: format!("{} of 0.5 s · components/native {}", x(ab / 5e8), x(ab / ab_native)),
                target: "< 0.5 s, ≤ 1.3x native",
                verdict: verdict(ab < 5e8 && ab / ab_native <= 1.3),
                load: load.clone(),
            });
        }
        if let Some(peak) = self.note("replay").and_then(|n| n["ab_peak_rss_kib"].as_f64()) {
            rows.push(Row {
                what: "peak resident memory of that A/B (VmHWM)".into(),
                figures: format!("{:.1} MB", peak / 1024.0),
                ratio: format!("{} of 100 MB", x(peak / 1024.0 / 100.0)),
                target: "< 100 MB",
                verdict: verdict(peak / 1024.0 < 100.0),
                load: load.clone(),
            });
        }
        if let (Some(sc), Some(sn), Some(pt)) = (m("session-component"), m("session-native"), m("per-tick-component")) {
            rows.push(Row {
                what: "replay in process, batch session, one core (events already parsed)".into(),
                figures: format!("component {} · native {} · component tick by tick {}", per_s(rate(sc)), per_s(rate(sn)), per_s(rate(pt))),
                ratio: format!(
                    "{} of 3 M/s · component/native {} · batch speed-up over tick by tick {}",
                    x(rate(sc) / 3e6),
                    x(sc / sn),
                    x(pt / sc)
                ),
                target: "≥ 3 M ticks/s per core",
                verdict: verdict(rate(sc) >= 3e6),
                load: load.clone(),
            });
        }
        if let (Some(parse), Some(rc), Some(rn)) = (m("parse"), m("replay-component"), m("replay-native")) {
            rows.push(Row {
                what: "replay phases, in-process, one core".into(),
                figures: format!("parse {} · replay component {} · replay native {}", per_s(rate(parse)), per_s(rate(rc)), per_s(rate(rn))),
                ratio: format!("parse+replay / CLI {} · replay component/native {}", x((parse + rc) / cli), x(rc / rn)),
                target: "-",
                verdict: "context",
                load,
            });
        }
    }

    fn tune(&self, rows: &mut Vec<Row>) {
        let note = self.note("tune");
        let field = |key: &str| note.as_ref().and_then(|n| n[key].as_f64());
        let (Some(all), Some(one), Some(work), Some(candidates), Some(evidence), Some(cores)) = (
            self.median("tune", "sweep-all-cores"),
            self.median("tune", "sweep-one-core"),
            field("candidate_ticks"),
            field("candidates"),
            field("evidence_ticks"),
            field("cores"),
        ) else {
            return rows.push(missing("tuning sweep (cargo bench --bench tune)"));
        };
        let rate = work / (all * 1e-9);
        let thousand = 1001.0 * evidence / rate;
        rows.push(Row {
            what: format!(
                "tuning sweep: {candidates:.0} candidates over the real series ({:.0} days), `sentinel::tune::tune`",
                evidence / 1440.0
            ),
            figures: format!("{cores:.0} cores {} ({}) · one core {}", per_s(rate), time(all), per_s(work / (one * 1e-9))),
            ratio: format!("cores/one {} · 1,000 candidates in {thousand:.0} s", x(one / all)),
            target: "1,000 candidates in minutes",
            verdict: verdict(thousand < 600.0),
            load: self.load("tune"),
        });
    }

    fn cross_validation(&self, rows: &mut Vec<Row>) {
        let note = self.note("cross_validation");
        let field = |key: &str| note.as_ref().and_then(|n| n[key].as_f64());
        let (Some(regrouped), Some(refolding), Some(candidates), Some(series)) = (
            self.median("cross-validation", "regrouped"),
            self.median("cross-validation", "refolding"),
            field("candidates"),
            field("series"),
        ) else {
            return rows.push(missing("cross-validation (cargo bench --bench cross_validation)"));
        };
        rows.push(Row {
            what: format!(
                "cross-validation by series: the robust choice and {series:.0} folds over {candidates:.0} candidates' scores (1.2.0's space and evidence)"
            ),
            figures: format!("per-series totals summed once {} · every series re-summed per fold {}", time(regrouped), time(refolding)),
            ratio: format!("{} faster", x(refolding / regrouped)),
            target: "at least 5x faster than re-summing (issue 53)",
            verdict: verdict(refolding / regrouped >= 5.0),
            load: self.load("cross_validation"),
        });
    }

    fn swap(&self, rows: &mut Vec<Row>) {
        let m = |id| self.median("swap", id);
        let (Some(compile), Some(load_artifact), Some(instantiate), Some(activate), Some(swap)) =
            (m("compile"), m("precompiled-load"), m("instantiate"), m("activate-cached"), m("swap"))
        else {
            return rows.push(missing("hot swap (cargo bench --bench swap)"));
        };
        rows.push(Row {
            what: "hot swap: compile vs precompiled-artifact load vs swap itself".into(),
            figures: format!(
                "compile {} · artifact load {} · instantiate {} · whole activation from cache {} · swap {}",
                time(compile),
                time(load_artifact),
                time(instantiate),
                time(activate),
                time(swap)
            ),
            ratio: format!("compile/load {} · load/swap {}", x(compile / load_artifact), x(load_artifact / swap)),
            target: "-",
            verdict: "context",
            load: self.load("swap"),
        });
    }

    fn live(&self, rows: &mut Vec<Row>) {
        // Single round trips; the lock is not one (a new connection each tick), shown apart.
        let hops = ["pg-read-memory", "pg-commit", "pg-record-publication", "prometheus-query", "redis-set", "ssm-put"];
        let measured: Vec<(&str, f64)> = hops.iter().filter_map(|h| Some((*h, self.median("live-tick", h)?))).collect();
        let lock = self
            .median("live-tick", "pg-lock")
            .map_or_else(String::new, |ns| format!(" · pg-lock (lock and unlock on the kept connection) {}", time(ns)));
        let (Some(tick), Some(&(slowest, worst))) = (self.median("live-tick", "tick"), measured.iter().max_by(|a, b| a.1.total_cmp(&b.1)))
        else {
            return rows.push(missing("live tick (cargo bench --bench live_tick)"));
        };
        let each: Vec<String> = measured.iter().map(|(h, ns)| format!("{h} {}", time(*ns))).collect();
        rows.push(Row {
            what: "live tick on loopback / its slowest round trip".into(),
            figures: format!("tick {} · {}{lock}", time(tick), each.join(" · ")),
            ratio: format!("{} (slowest: {slowest})", x(tick / worst)),
            target: "≤ 1.5x",
            verdict: verdict(tick / worst <= 1.5),
            load: self.load("live_tick"),
        });
    }

    fn rss(&self, rows: &mut Vec<Row>) {
        let Some(note) = self.note("rss") else { return rows.push(missing("resident memory (cargo bench --bench rss)")) };
        let steady = |key: &str| -> Option<(f64, f64, f64)> {
            let samples = note[key].as_array()?;
            let kib = |i: usize, f: &str| samples.get(i)?[f].as_f64();
            Some((kib(1, "rss_kib")?, kib(samples.len() - 1, "rss_kib")?, kib(samples.len() - 1, "hwm_kib")?))
        };
        let load = self.load("rss");
        let mb = |kib: f64| kib * 1024.0 / 1e6;
        if let Some((half, end, hwm)) = steady("embedded") {
            rows.push(Row {
                what: "`sentinel run` resident memory, embedded default".into(),
                figures: format!("VmRSS {:.1} MB at half the ticks, {:.1} MB at the end · VmHWM {:.1} MB", mb(half), mb(end), mb(hwm)),
                ratio: format!("{} of target · end/half {}", x(mb(end) / 40.0), x(end / half)),
                target: "< 40 MB (steady VmRSS)",
                verdict: verdict(mb(end) < 40.0),
                load: load.clone(),
            });
            if let Some((b_half, b_end, b_hwm)) = steady("backends") {
                rows.push(Row {
                    what: "`sentinel run` resident memory, all real backends".into(),
                    figures: format!(
                        "VmRSS {:.1} MB at half the ticks, {:.1} MB at the end · VmHWM {:.1} MB",
                        mb(b_half),
                        mb(b_end),
                        mb(b_hwm)
                    ),
                    ratio: format!("backends/embedded {} · end/half {}", x(b_hwm / hwm), x(b_end / b_half)),
                    target: "-",
                    verdict: "context",
                    load,
                });
            }
        }
    }
}

/// The built components' sizes.
fn sizes(rows: &mut Vec<Row>) {
    let dir = capacity_tests::paths::policies_dir();
    let size = |f: &str| std::fs::metadata(dir.join(f)).ok().map(|m| m.len() as f64);
    let files = ["capacity-policy-1.0.0.wasm", "capacity-policy-2.0.0.wasm", "capacity-admission-3.2.0.wasm"];
    let found: Vec<(&str, f64)> = files.iter().filter_map(|f| Some((*f, size(f)?))).collect();
    if found.len() != files.len() {
        return rows.push(missing("component sizes (cargo policies)"));
    }
    let each: Vec<String> = found.iter().map(|(f, b)| format!("{f} {:.0} B", b)).collect();
    rows.push(Row {
        what: "component sizes".into(),
        figures: each.join(" · "),
        ratio: format!("policy/admission {}", x(found[0].1 / found[2].1)),
        target: "-",
        verdict: "context",
        load: "-".into(),
    });
}

fn read(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn missing(what: &str) -> Row {
    Row {
        what: what.into(),
        figures: "not measured in this run".into(),
        ratio: "-".into(),
        target: "-",
        verdict: "MISSING",
        load: "-".into(),
    }
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

fn x(ratio: f64) -> String {
    if ratio >= 100.0 {
        format!("{ratio:.0}x")
    } else if ratio >= 10.0 {
        format!("{ratio:.1}x")
    } else {
        format!("{ratio:.2}x")
    }
}

fn per_s(rate: f64) -> String {
    if rate >= 1e6 { format!("{:.2} M ticks/s", rate / 1e6) } else { format!("{:.0} k ticks/s", rate / 1e3) }
}

/// A duration in nanoseconds, in the unit that suits it.
fn time(ns: f64) -> String {
    match ns {
        n if n < 1e3 => format!("{n:.0} ns"),
        n if n < 1e6 => format!("{:.2} µs", n / 1e3),
        n if n < 1e9 => format!("{:.2} ms", n / 1e6),
        n => format!("{:.2} s", n / 1e9),
    }
}
