//! Tests of a Prometheus source's checks (`prometheus.rs`).

use super::*;

fn queries() -> PrometheusQueries {
    PrometheusQueries { cpu_pct: Some("cpu".into()), ..PrometheusQueries::default() }
}

#[test]
fn a_url_error_names_the_key_and_never_shows_the_password() {
    let refused = [
        ("ftp://u:hunter2@prometheus:9090", "expected http(s)://host:port"),
        ("http://u:hunter2@prometheus:9090/?x=1", "a base URL has no query or fragment"),
        ("http://prometheus:9090/?password=hunter2", "a base URL has no query or fragment"),
        ("http://u:hunter2@prometheus:99999", "invalid port number"),
        ("http://u:hunter2@", "empty host"),
        ("http://u:hunt er2@prometheus:9090/?q", "a base URL has no query or fragment"),
        ("", "relative URL without a base"),
        ("prom:9090", "expected http(s)://host:port"),
        ("http://", "empty host"),
    ];
    for (url, says) in refused {
        let e = PrometheusSource::new(url, queries()).unwrap_err();
        assert_eq!(e.key, "metrics.url", "{url}: {e}");
        assert!(e.message.contains(says), "{url}: {e}");
        let e = e.to_string();
        assert!(!e.contains("hunter2") && !e.contains("hunt") && !e.contains("er2"), "{url}: the password is shown: {e}");
    }
    let ok = PrometheusSource::new("http://u:hunter2@prometheus:9090/prefix/", queries()).unwrap();
    assert_eq!(ok.shown(), "http://u:***@prometheus:9090/prefix");
    assert_eq!(ok.endpoint().as_str(), "http://u:hunter2@prometheus:9090/prefix/api/v1/query");
    assert!(!format!("{ok:?}").contains("hunter2"));
}

#[test]
fn queries_are_checked_naming_the_key() {
    let url = "http://prom:9090";
    let e = PrometheusSource::new(url, PrometheusQueries::default()).unwrap_err();
    assert_eq!(e.key, "metrics.queries");
    assert!(e.message.contains("no query configured"), "{e}");
    let blank = PrometheusQueries { latency_p95_ms: Some("  ".into()), ..queries() };
    let e = PrometheusSource::new(url, blank).unwrap_err();
    assert_eq!((e.key.as_str(), e.message.contains("is empty")), ("metrics.queries.latency_p95_ms", true), "{e}");
    let unlabelled = PrometheusQueries { latency_label: " ".into(), ..queries() };
    assert_eq!(PrometheusSource::new(url, unlabelled).unwrap_err().key, "metrics.queries.latency_label");
}
