//! `GET /v1/timeline.svg?hours=24&zone=Europe/Berlin&width=1200`: the last hours as the A/B
//! report draws a trace (the same renderer, `sentinel_core::replay::svg`), fed from the store's tick
//! records: the state band, the readings against the active policy's CPU thresholds, pins
//! shaded, failed reads marked; with a version in shadow, its band from its log beside the
//! active's and where it would protect more or less; its times on the reader's wall clock,
//! drawn at the width shown.

use crate::api::ApiState;
use crate::api::auth::Caller;
use crate::api::problem::Problem;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use sentinel_core::policy::invariants::worst_latency_ratio;
use sentinel_core::ports::memory::TickRecord;
use sentinel_core::replay::svg::{Frame, Zone, timeline_svg};
use sentinel_core::replay::timeline::{Point, Timeline};
use serde::Deserialize;
use utoipa::IntoParams;
use vocabulary::Signal;

/// Hours drawn when the query gives no `hours`.
pub const DEFAULT_HOURS: u32 = 24;
/// The largest `hours` a query may ask for: a week.
pub const MAX_HOURS: u32 = 168;

/// The query of `GET /v1/timeline.svg`: the hours back, the time zone and the width.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TimelineQuery {
    /// How many hours back from now, 1 to 168 (default 24).
    #[param(minimum = 1, maximum = 168, default = 24)]
    pub hours: Option<u32>,
    /// The IANA time zone the times are written in (default UTC), as the browser names its
    /// own: `Intl.DateTimeFormat().resolvedOptions().timeZone`. A name this machine's time
    /// zone data lacks draws in UTC, said under the drawing.
    #[param(example = "Europe/Berlin")]
    pub zone: Option<String>,
    /// The drawing's width in pixels, 640 to 2400 (default 1400): the width it is shown at,
    /// so that its text is read at its size.
    #[param(minimum = 640, maximum = 2400, default = 1400)]
    pub width: Option<u32>,
}

/// The recent timeline as SVG.
///
/// The tick records of the last hours, drawn like the A/B report's timelines.
#[utoipa::path(
    get,
    path = "/v1/timeline.svg",
    tag = "console",
    operation_id = "getTimeline",
    security(("bearer" = [])),
    params(TimelineQuery),
    responses(
        (status = 200, description = "The timeline", content_type = "image/svg+xml", body = String),
        (status = 400, response = crate::api::problem::BadRequest),
        (status = 401, response = crate::api::problem::Unauthenticated),
        (status = 500, response = crate::api::problem::Internal),
        (status = 503, response = crate::api::problem::Unavailable),
    )
)]
pub async fn get_timeline(
    _caller: Caller,
    State(s): State<ApiState>,
    query: Result<Query<TimelineQuery>, QueryRejection>,
) -> Result<Response, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(format!("the query is malformed: {}", e.body_text())))?;
    let hours = q.hours.unwrap_or(DEFAULT_HOURS);
    if !(1..=MAX_HOURS).contains(&hours) {
        return Err(Problem::bad_request(format!("hours: must be between 1 and {MAX_HOURS}, got {hours}")));
    }
    let width = q.width.unwrap_or(Frame::REPORT_WIDTH);
    if !(Frame::MIN_WIDTH..=Frame::MAX_WIDTH).contains(&width) {
        return Err(Problem::bad_request(format!(
            "width: must be between {} and {} pixels, got {width}",
            Frame::MIN_WIDTH,
            Frame::MAX_WIDTH
        )));
    }
    let zone = match q.zone.as_deref() {
        None | Some("") => Zone::utc(),
        // A zone this machine lacks (older time zone data than the browser's) draws in UTC and says so.
        Some(name) => Zone::named_or_utc(name),
    };
    let now = (s.clock)();
    let since = now - i64::from(hours) * 3600;
    let (identity, thresholds) = s.active_policy()?;
    let (label, digest) = (format!("policy {}", identity.version), identity.digest);
    // A version in shadow is drawn beside the active one, from its own log.
    let shadow = s.policies.as_ref().and_then(|p| Some((p.state_dir.clone(), p.dir.clone(), p.shadow.clone()?)));
    let shadow_length = shadow.as_ref().map_or(0, |(dir, _, version)| {
        std::fs::metadata(sentinel_core::policy::lifecycle::shadow::log_path(dir, version)).map_or(0, |m| m.len())
    });
    // The same drawing until a tick is recorded, the minute turns or the policy changes.
    let newest = s.memory.recent_ticks(1).await?.first().map(|(sequence, _)| *sequence);
    let key = TimelineKey {
        newest,
        hours,
        minute: now.div_euclid(60),
        digest,
        zone: zone.name().to_owned(),
        width,
        shadow: shadow.as_ref().map(|(_, _, version)| (version.clone(), shadow_length)),
    };
    if let Some(svg) = s.timeline.get(&key) {
        return Ok(svg_response(svg));
    }
    // A tick a minute, and an hour more for ticks run by hand or by a second sentinel.
    let mut records = s.memory.recent_ticks((hours + 1) * 60).await?;
    records.retain(|(_, r)| r.at >= since);
    records.reverse();
    // The console's card says what the window is: no title of its own.
    let frame = Frame { title: None, width, zone, compared: "shadow" };
    let svg = tokio::task::spawn_blocking(move || {
        let timeline = Timeline { points: records.iter().map(|(_, r)| point(r)).collect() };
        match shadow.and_then(|(state_dir, dir, version)| shadow_timeline(&state_dir, &version, since, &records).map(|t| (t, dir, version)))
        {
            Some((shadowed, dir, version)) => {
                let labels = [label, format!("shadow {version}")];
                // Its boundaries as its manifest declares them; none declared: the active's alone.
                match sentinel_core::policy::lifecycle::manifest::find(&dir, &version).ok().and_then(|e| e.manifest.thresholds) {
                    Some(theirs) => timeline_svg(&frame, &labels, &[&timeline, &shadowed], &[&thresholds, &theirs]),
                    None => timeline_svg(&frame, &labels, &[&timeline, &shadowed], &[&thresholds]),
                }
            }
            None => timeline_svg(&frame, &[label], &[&timeline], &[&thresholds]),
        }
    })
    .await
    .map_err(|e| Problem::internal(format!("drawing the timeline failed: {e}")))?
    .map_err(Problem::internal)?;
    let svg = std::sync::Arc::new(svg);
    s.timeline.put(key, svg.clone());
    Ok(svg_response(svg))
}

fn svg_response(svg: std::sync::Arc<String>) -> Response {
    ([(header::CONTENT_TYPE, "image/svg+xml"), (header::CACHE_CONTROL, "no-store")], svg.as_str().to_owned()).into_response()
}

/// What a drawing depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TimelineKey {
    newest: Option<u64>,
    hours: u32,
    minute: i64,
    digest: String,
    zone: String,
    width: u32,
    /// The version in shadow and the length of its log.
    shadow: Option<(String, u64)>,
}

/// The shadow's states since `since`, from its log in `state_dir`, each with the pin of the
/// active tick of its minute (both decided on the same input); none when it has no log line in
/// the window. Its readings are the active's: only its band is drawn, and before its first line
/// none.
fn shadow_timeline(state_dir: &std::path::Path, version: &str, since: i64, records: &[(u64, TickRecord)]) -> Option<Timeline> {
    let lines = match sentinel_core::policy::lifecycle::shadow::lines(state_dir, version) {
        Ok(lines) => lines,
        Err(e) => {
            tracing::warn!("the console's timeline draws no band for shadow {version}: {e}");
            return None;
        }
    };
    let pins: std::collections::HashMap<i64, Option<u8>> = records.iter().map(|(_, r)| (r.at, point(r).pin)).collect();
    let mut points: Vec<Point> = lines
        .iter()
        .filter_map(|l| {
            let at = sentinel_core::instants::parse_rfc3339(&l.at).ok().filter(|at| *at >= since)?;
            let state = vocabulary::ProtectionState::parse(&l.shadow_state)?.rank();
            Some(Point {
                at,
                state,
                level: None,
                pin: pins.get(&at).copied().flatten(),
                throttles: vocabulary::ThrottleIntent::None,
                damping_held: false,
                cpu_pct: f32::NAN,
                connections_pct: f32::NAN,
                latency_ratio: f32::NAN,
            })
        })
        .collect();
    points.sort_by_key(|p| p.at);
    points.dedup_by_key(|p| p.at);
    (!points.is_empty()).then_some(Timeline { points })
}

/// The last drawing, shared by every tab that refreshes the console.
#[derive(Debug)]
pub struct TimelineCache {
    last: sentinel_core::sync::Lock<Option<(TimelineKey, std::sync::Arc<String>)>>,
}

impl Default for TimelineCache {
    fn default() -> TimelineCache {
        TimelineCache { last: sentinel_core::sync::Lock::new("timeline drawing", None) }
    }
}

impl TimelineCache {
    fn get(&self, key: &TimelineKey) -> Option<std::sync::Arc<String>> {
        let last = self.last.lock();
        last.as_ref().filter(|(k, _)| k == key).map(|(_, svg)| svg.clone())
    }

    fn put(&self, key: TimelineKey, svg: std::sync::Arc<String>) {
        *self.last.lock() = Some((key, svg));
    }
}

/// One stored tick as the timeline draws it.
fn point(r: &TickRecord) -> Point {
    let reading = match &r.signal {
        Signal::Reading(reading) => Some(reading),
        Signal::Failed(_) => None,
    };
    let value = |v: Option<f64>| v.filter(|v| v.is_finite()).map_or(f32::NAN, |v| v as f32);
    Point {
        at: r.at,
        state: r.decision.state.rank(),
        level: r.decision.level.map(|l| l.rank()),
        pin: r.pin.as_ref().filter(|p| p.expires_at > r.at).map(|p| p.state.rank()),
        throttles: r.decision.throttles,
        damping_held: r.decision.damping_hold.is_some(),
        cpu_pct: value(reading.and_then(|r| r.cpu_pct)),
        connections_pct: value(reading.and_then(|r| r.connections_pct)),
        latency_ratio: value(reading.and_then(worst_latency_ratio)),
    }
}
