//! Tests of the Prometheus adapter (`prometheus_metrics.rs`).

use super::*;

fn queries() -> PrometheusQueries {
    PrometheusQueries { cpu_pct: Some("cpu".into()), ..PrometheusQueries::default() }
}

#[test]
fn a_url_error_never_shows_the_password() {
    let refused = [
        ("ftp://u:hunter2@prometheus:9090", "expected http(s)://host:port"),
        ("http://u:hunter2@prometheus:9090/?x=1", "a base URL has no query or fragment"),
        ("http://prometheus:9090/?password=hunter2", "a base URL has no query or fragment"),
        ("http://u:hunter2@prometheus:99999", "invalid port number"),
        ("http://u:hunter2@", "empty host"),
        ("http://u:hunt er2@prometheus:9090/?q", "a base URL has no query or fragment"),
    ];
    for (url, says) in refused {
        let e = PrometheusMetrics::new(url, queries(), Duration::from_secs(1)).unwrap_err().to_string();
        assert!(e.contains(says), "{url}: {e}");
        assert!(!e.contains("hunter2") && !e.contains("hunt") && !e.contains("er2"), "{url}: the password is shown: {e}");
    }
    let ok = PrometheusMetrics::new("http://u:hunter2@prometheus:9090/prefix/", queries(), Duration::from_secs(1)).unwrap();
    assert_eq!(ok.shown, "http://u:***@prometheus:9090/prefix");
    assert!(ok.describe().starts_with("prometheus http://u:***@prometheus:9090/prefix ("), "{}", ok.describe());
    assert!(!format!("{ok:?}").contains("hunter2"));
}
