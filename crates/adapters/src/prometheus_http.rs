//! Prometheus's HTTP API as both Prometheus adapters use it: instant queries for the live
//! reading (`GET /api/v1/query`) and range queries for history (`GET /api/v1/query_range`),
//! through one HTTP client with a connect and a total timeout. A failure names the signal and
//! the query, never the password, and says whether asking again may help (a timeout, a refused
//! connection, a 5xx) or not (a query Prometheus refuses, a body that is not Prometheus's).

use super::prometheus_answer::{Answer, TOO_LARGE};
pub use crate::settings::prometheus::PrometheusSource;
use sentinel_core::error_chain::chain;
use sentinel_core::ports::metrics::MetricsError;
use sentinel_core::redact::redact;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;
use vocabulary::Instant;

/// A response larger than this is refused: an instant query for a few signals is a few KiB, a
/// day of one series at one point a minute about 40 KiB.
const MAX_BODY: usize = 32 << 20;

/// A signal the configuration has a query for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Sig {
    Cpu,
    Connections,
    Scaling,
    Latency,
}

impl Sig {
    pub(crate) const ALL: [Sig; 4] = [Sig::Cpu, Sig::Connections, Sig::Scaling, Sig::Latency];

    /// The name in errors: the reading's (and the configuration's) field name.
    pub(crate) fn field(self) -> &'static str {
        match self {
            Sig::Cpu => "cpu_pct",
            Sig::Connections => "connections_pct",
            Sig::Scaling => "scaling",
            Sig::Latency => "latency_p95_ms",
        }
    }

    /// The configured query of this signal, `None` when unset.
    pub(crate) fn query(self, source: &PrometheusSource) -> Option<&str> {
        let q = source.queries();
        match self {
            Sig::Cpu => &q.cpu_pct,
            Sig::Connections => &q.connections_pct,
            Sig::Scaling => &q.scaling,
            Sig::Latency => &q.latency_p95_ms,
        }
        .as_deref()
    }
}

/// One series of an instant vector: its labels and its value as Prometheus wrote it.
pub(crate) struct Sample {
    pub labels: BTreeMap<String, String>,
    pub value: String,
}

/// One series of a range query's matrix: its labels and its points (unix seconds, value).
pub(crate) struct RangeSeries {
    pub labels: BTreeMap<String, String>,
    pub points: Vec<(Instant, String)>,
}

/// A failed query: what failed, and whether asking again may succeed.
#[derive(Debug)]
pub(crate) struct QueryFailure {
    pub error: MetricsError,
    pub again: Again,
}

/// Whether a failed query may succeed when asked again, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Again {
    /// Later, as it is: a timeout, a refused connection, a server error, too many requests.
    Later,
    /// Over fewer steps: the server refuses this many samples at once.
    Smaller,
    /// Never: the server refuses the query, or its answer is not one.
    Never,
}

#[derive(Deserialize)]
struct Envelope {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default, rename = "errorType")]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "resultType")]
    result_type: String,
    /// Read within bounds, series counted as they are parsed ([`super::prometheus_answer`]).
    result: Answer,
}

/// The HTTP client and the source it asks.
pub(crate) struct PrometheusHttp {
    pub source: PrometheusSource,
    pub timeout: Duration,
    client: reqwest::Client,
}

impl PrometheusHttp {
    /// A client asking `source`, each request bounded by `timeout` (connecting included).
    pub fn new(source: PrometheusSource, timeout: Duration) -> Result<PrometheusHttp, MetricsError> {
        let setup = |why: String| MetricsError::Unavailable(format!("cannot set up the HTTP client for Prometheus: {why}"));
        let client = super::tls::http_client()
            .map_err(setup)?
            .connect_timeout(timeout)
            .timeout(timeout)
            .no_proxy()
            // Only the configured server is asked: a redirect elsewhere is an error that names it.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| setup(redact(&chain(&e))))?;
        Ok(PrometheusHttp { source, timeout, client })
    }

    /// What to check when the answer is not Prometheus's.
    fn not_prometheus(&self) -> String {
        format!("is {} a Prometheus server? check [metrics] url", self.source.shown())
    }

    /// Evaluates `query` at `now`: an instant vector (a scalar is one unlabelled sample).
    pub async fn instant(&self, sig: Sig, query: &str, now: Instant) -> Result<Vec<Sample>, QueryFailure> {
        let params = [("query", query.to_string()), ("time", now.to_string()), ("timeout", self.server_timeout())];
        let (result_type, result) = self.get(self.source.endpoint(), sig, query, &params).await?;
        let malformed = |why: String| self.malformed(sig, query, why);
        match (result_type.as_str(), result) {
            ("vector", Answer::Series(series)) => series
                .into_iter()
                .map(|s| match s.value {
                    Some((_, value)) => Ok(Sample { labels: s.metric, value }),
                    None => Err(malformed("an instant vector that does not parse: a sample without its value".into())),
                })
                .collect(),
            ("scalar", Answer::Scalar(value)) => Ok(vec![Sample { labels: BTreeMap::new(), value }]),
            ("vector", _) => Err(malformed("an instant vector that does not parse: not a list of samples".into())),
            ("scalar", _) => Err(malformed("a scalar that does not parse: not [time, \"value\"]".into())),
            ("matrix", _) => {
                Err(malformed("expected an instant vector, got a matrix (a range selector needs a function such as rate())".into()))
            }
            (other, _) => Err(malformed(format!("expected an instant vector or a scalar, got a {other}"))),
        }
    }

    /// Evaluates `query` at every `step` seconds from `start` to `end` (both included), as
    /// many instant queries would: a matrix (a scalar expression gives one unlabelled series).
    pub async fn range(&self, sig: Sig, query: &str, start: Instant, end: Instant, step: u32) -> Result<Vec<RangeSeries>, QueryFailure> {
        let params = [
            ("query", query.to_string()),
            ("start", start.to_string()),
            ("end", end.to_string()),
            ("step", step.to_string()),
            ("timeout", self.server_timeout()),
        ];
        let (result_type, result) = self.get(self.source.range_endpoint(), sig, query, &params).await?;
        let malformed = |why: String| self.malformed(sig, query, why);
        if result_type != "matrix" {
            return Err(malformed(format!("a range query gave a {result_type}, not a matrix")));
        }
        let Answer::Series(series) = result else { return Err(malformed("a matrix that does not parse: not a list of series".into())) };
        series
            .into_iter()
            .map(|s| {
                let values = s.values.ok_or_else(|| malformed("a matrix that does not parse: a series without its values".into()))?;
                let points = values
                    .into_iter()
                    .map(|(at, v)| {
                        // Prometheus writes a step's time as seconds with a fraction; steps here
                        // are whole seconds, so anything else is not an answer to this query.
                        if at.fract() != 0.0 || !at.is_finite() {
                            return Err(malformed(format!("a point at {at}, not at a whole second")));
                        }
                        Ok((at as Instant, v))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(RangeSeries { labels: s.metric, points })
            })
            .collect()
    }

    /// The timeout Prometheus itself applies to the evaluation: the client's.
    fn server_timeout(&self) -> String {
        format!("{}ms", self.timeout.as_millis().max(1))
    }

    fn malformed(&self, sig: Sig, query: &str, why: String) -> QueryFailure {
        QueryFailure {
            error: MetricsError::Malformed { field: sig.field().into(), message: format!("query `{query}`: {why}") },
            again: Again::Never,
        }
    }

    /// Sends one GET and reads Prometheus's envelope: the result's type and the result.
    async fn get(&self, url: &reqwest::Url, sig: Sig, query: &str, params: &[(&str, String)]) -> Result<(String, Answer), QueryFailure> {
        let unavailable = |why: String, again: Again| QueryFailure {
            error: MetricsError::Unavailable(format!("prometheus {} query `{query}`: {why}", sig.field())),
            again,
        };
        let failed = |e: reqwest::Error| {
            // The URL repeats the query, URL-encoded: the message names it once, as written.
            // The URL may carry the password too: it is never shown but as `shown`.
            let e = e.without_url();
            if e.is_timeout() {
                QueryFailure { error: MetricsError::Timeout(self.timeout), again: Again::Later }
            } else if e.is_connect() {
                unavailable(format!("cannot connect to {}: {}", self.source.shown(), redact(&chain(&e))), Again::Later)
            } else {
                unavailable(format!("{} ({})", redact(&chain(&e)), self.not_prometheus()), Again::Later)
            }
        };
        let mut response = self.client.get(url.clone()).query(params).send().await.map_err(failed)?;
        let status = response.status();
        if status.is_redirection() {
            let to =
                response.headers().get(reqwest::header::LOCATION).and_then(|l| l.to_str().ok()).map_or_else(|| "nowhere".into(), redact);
            return Err(unavailable(
                format!(
                    "HTTP {status}: a redirect to {to}; the sentinel asks only the configured server: set [metrics] url to where Prometheus answers"
                ),
                Again::Never,
            ));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(self.malformed(sig, query, format!("the response is larger than {} MiB", MAX_BODY >> 20)));
            }
            body.extend_from_slice(&chunk);
        }
        let envelope = serde_json::from_slice::<Envelope>(&body);
        if !status.is_success() {
            let why = match &envelope {
                Ok(Envelope { error: Some(error), error_type, .. }) => {
                    format!("{}: {error}", error_type.as_deref().unwrap_or("error"))
                }
                // Not Prometheus's own error: perhaps not Prometheus at all.
                _ => format!("{} ({})", excerpt(&body), self.not_prometheus()),
            };
            // A server error or too many requests may pass; a refused query will not, but for
            // Prometheus's "query processing would load too many samples into memory" (422,
            // `--query.max-samples`), which a request over fewer steps passes.
            let again = if status.is_server_error() || status.as_u16() == 429 {
                Again::Later
            } else if status.as_u16() == 422 && why.contains("too many samples") {
                Again::Smaller
            } else {
                Again::Never
            };
            return Err(unavailable(format!("HTTP {status}: {why}"), again));
        }
        let envelope = envelope.map_err(|e| {
            let said = e.to_string();
            if said.contains(TOO_LARGE) {
                // Refused while it was read: say why, not where in the body.
                let why = said.split(" at line ").next().unwrap_or(&said).to_string();
                return self.malformed(sig, query, why);
            }
            self.malformed(sig, query, format!("the response is not Prometheus JSON ({e}): {} ({})", excerpt(&body), self.not_prometheus()))
        })?;
        if envelope.status != "success" {
            let error_type = envelope.error_type.as_deref().unwrap_or("error");
            let error = envelope.error.as_deref().unwrap_or("no reason given");
            return Err(unavailable(format!("status {:?}: {error_type}: {error}", envelope.status), Again::Never));
        }
        let data = envelope.data.ok_or_else(|| self.malformed(sig, query, "a success without data".into()))?;
        Ok((data.result_type, data.result))
    }
}

/// The start of a body, for an error message.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body).split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return "an empty body".into();
    }
    let cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() { format!("{cut}...") } else { cut }
}
