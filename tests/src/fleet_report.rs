//! The fleet load test's report (tests/tests/fleet_readers.rs): the figures an operator asks of a
//! Redis outage under a fleet of readers, as a markdown table, and a figure of the parameter's
//! calls and the readers' sources second by second (SVG, plotters).

use crate::servers::throttling::Second;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// How many readers' latest reading came from each source, in one unix second (all reader
/// processes summed).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Sources {
    /// From the cache, the parameter, the remembered document; none (full capacity); none yet.
    pub cache: u32,
    pub parameter: u32,
    pub remembered: u32,
    pub full: u32,
    pub none: u32,
}

/// Which count of [`Sources`] a line of the figure draws.
type Pick = fn(&Sources) -> u32;

/// One run of the load test: its shape, and what was measured.
pub struct Run {
    pub readers: usize,
    pub processes: usize,
    pub limit: usize,
    /// Unix seconds: the readers started, Redis went down, Redis came back, every reader was
    /// back on the cache (None: not within the wait), the run ended.
    pub started: u64,
    pub down: u64,
    pub up: u64,
    pub back: Option<u64>,
    pub ended: u64,
    pub sources: BTreeMap<u64, Sources>,
    pub calls: BTreeMap<u64, Second>,
    /// Per reader: resident memory added by the readers (bytes), CPU time (seconds) over the run.
    pub memory_per_reader: f64,
    pub cpu_per_reader: f64,
}

impl Run {
    /// Readings at full capacity while Redis was down (reader-seconds).
    pub fn full_during_outage(&self) -> u32 {
        self.sources.range(self.down..self.up).map(|(_, s)| s.full).sum()
    }

    /// Served and throttled `GetParameter` calls per second while Redis was down: mean served,
    /// most served in one second, throttled in all.
    pub fn outage_calls(&self) -> (f64, u32, u32) {
        let seconds = (self.up - self.down).max(1);
        let served: u32 = self.calls.range(self.down..self.up).map(|(_, c)| c.served).sum();
        let most = self.calls.range(self.down..self.up).map(|(_, c)| c.served).max().unwrap_or(0);
        let throttled = self.calls.range(self.down..self.up).map(|(_, c)| c.throttled).sum();
        (f64::from(served) / seconds as f64, most, throttled)
    }

    /// The report in markdown, naming the figure beside it.
    pub fn markdown(&self, figure: &str) -> String {
        let (mean, most, throttled) = self.outage_calls();
        let remembered: u32 = self.sources.range(self.down..self.up).map(|(_, s)| s.remembered).sum();
        let on_parameter: u32 = self.sources.range(self.down..self.up).map(|(_, s)| s.parameter).sum();
        let back = self.back.map_or_else(|| "not within the wait".to_string(), |b| format!("{} s", b - self.up));
        let mut out = String::new();
        let _ = writeln!(out, "# Fleet load test: {} readers through a {} s Redis outage\n", self.readers, self.up - self.down);
        let _ = writeln!(
            out,
            "{} `BulkFactorReader`s (Node, async, {} processes), each read once a second with the package's \
             defaults; a real Redis, killed and started again; moto's SSM behind a proxy that throttles above {} \
             `GetParameter` calls a second with SSM's `ThrottlingException` (SSM's 40 a second, scaled to the fleet: \
             40 per 1,000 readers); a real sentinel pinned critical, publishing every minute.\n",
            self.readers, self.processes, self.limit
        );
        let _ = writeln!(out, "| figure | value |\n|---|---|");
        let rows = [
            ("parameter calls served, mean a second during the outage", format!("{mean:.1}")),
            ("parameter calls served, most in one second", most.to_string()),
            ("parameter calls throttled during the outage", throttled.to_string()),
            ("reader-seconds on the parameter's document during the outage", on_parameter.to_string()),
            ("reader-seconds on the remembered document during the outage", remembered.to_string()),
            ("reader-seconds at full capacity during the outage", self.full_during_outage().to_string()),
            ("every reader back on the cache after Redis returned", back),
            ("resident memory per reader", format!("{:.0} KiB", self.memory_per_reader / 1024.0)),
            ("CPU per reader over the run", format!("{:.3} % of a core", 100.0 * self.cpu_per_reader / (self.ended - self.started) as f64)),
        ];
        for (name, value) in rows {
            let _ = writeln!(out, "| {name} | {value} |");
        }
        let _ = writeln!(out, "\n![calls and sources]({figure})");
        out
    }

    /// Second by second: seconds since the readers started, `GetParameter` calls served and
    /// throttled, readers by source (the figure's data).
    pub fn csv(&self) -> String {
        let mut out = String::from("second,served,throttled,cache,parameter,remembered,full,none\n");
        for (t, s) in &self.sources {
            let c = self.calls.get(t).copied().unwrap_or_default();
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{}",
                t - self.started,
                c.served,
                c.throttled,
                s.cache,
                s.parameter,
                s.remembered,
                s.full,
                s.none
            );
        }
        out
    }

    /// The figure: above, `GetParameter` calls served and throttled each second; below, readers
    /// by source. Seconds from the readers' start; Redis down between the two marks.
    pub fn plot(&self, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, (960, 640)).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, bottom) = root.split_vertically(300);
        let span = (self.ended - self.started) as i64;
        let at = |t: u64| t as i64 - self.started as i64;
        let most = self.calls.values().map(|c| c.served.max(c.throttled)).max().unwrap_or(1).max(self.limit as u32) + 2;
        let mut calls = ChartBuilder::on(&top)
            .caption("SSM GetParameter calls a second (Redis down between the grey lines)", ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0..span, 0..most as i64)?;
        calls.configure_mesh().x_desc("seconds since the readers started").y_desc("calls / s").draw()?;
        // Every second, a second without calls at zero.
        let series =
            |pick: fn(&Second) -> u32| (self.started..=self.ended).map(move |t| (at(t), i64::from(self.calls.get(&t).map_or(0, pick))));
        calls
            .draw_series(LineSeries::new(series(|c| c.served), &BLUE))?
            .label("served")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], BLUE));
        calls
            .draw_series(LineSeries::new(series(|c| c.throttled), &RED))?
            .label("throttled")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], RED));
        calls
            .draw_series(LineSeries::new([(0, self.limit as i64), (span, self.limit as i64)], BLACK.mix(0.4)))?
            .label("limit")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], BLACK.mix(0.4)));
        for mark in [self.down, self.up] {
            calls.draw_series(LineSeries::new([(at(mark), 0), (at(mark), most as i64)], BLACK.mix(0.25)))?;
        }
        calls.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
        let mut readers = ChartBuilder::on(&bottom)
            .caption("readers by the source of their latest reading", ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(0..span, 0..self.readers as i64 + 1)?;
        readers.configure_mesh().x_desc("seconds since the readers started").y_desc("readers").draw()?;
        let sources: [(&str, Pick, RGBColor); 4] = [
            ("cache", |s| s.cache, BLUE),
            ("parameter", |s| s.parameter, GREEN),
            ("remembered", |s| s.remembered, MAGENTA),
            ("full capacity", |s| s.full, RED),
        ];
        for (name, pick, colour) in sources {
            let points = self.sources.iter().map(move |(t, s)| (at(*t), i64::from(pick(s))));
            readers
                .draw_series(LineSeries::new(points, colour))?
                .label(name)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 15, y)], colour));
        }
        for mark in [self.down, self.up] {
            readers.draw_series(LineSeries::new([(at(mark), 0), (at(mark), self.readers as i64)], BLACK.mix(0.25)))?;
        }
        readers.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
        root.present()?;
        Ok(())
    }
}
