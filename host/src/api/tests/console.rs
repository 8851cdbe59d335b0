//! The console's routes: the page and its assets with their security headers, `/v1/session`,
//! `/v1/overview` and `/v1/timeline.svg` after real ticks, the cross-site guard, and refused
//! pin changes in the audit.

use super::state::{config, tick};
use super::*;

fn header<'a>(reply: &'a Reply, name: &str) -> &'a str {
    reply.headers.get(name).map(|v| v.to_str().unwrap()).unwrap_or_else(|| panic!("no {name} header: {:?}", reply.headers))
}

fn newest_audit(entries: &Value) -> &Value {
    &entries["entries"][0]
}

#[tokio::test]
async fn the_page_and_its_assets_need_no_token_and_carry_the_security_headers() {
    let h = Harness::new();
    let modules = crate::api::console::MODULES.map(|(file, _)| (format!("/console/{file}"), "text/javascript; charset=utf-8"));
    let pages =
        [("/", "text/html; charset=utf-8"), ("/console.js", "text/javascript; charset=utf-8"), ("/console.css", "text/css; charset=utf-8")];
    for (path, content_type) in pages.iter().map(|(p, c)| (p.to_string(), *c)).chain(modules) {
        let path = path.as_str();
        let reply = h.call(get(path, None)).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}");
        assert_eq!(reply.content_type(), content_type, "{path}");
        assert_eq!(header(&reply, "content-security-policy"), crate::api::guard::CONTENT_SECURITY_POLICY, "{path}");
        assert_eq!(header(&reply, "x-frame-options"), "DENY");
        assert_eq!(header(&reply, "referrer-policy"), "no-referrer");
        assert_eq!(header(&reply, "x-content-type-options"), "nosniff");
    }
    let csp = crate::api::guard::CONTENT_SECURITY_POLICY;
    for directive in ["default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "form-action 'none'"] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(!csp.contains("unsafe"), "{csp}");
    // The page keeps to that policy: no inline script or style, no handler attributes.
    let page = h.call(get("/", None)).await.text();
    assert!(page.contains("<script type=\"module\" src=\"/console.js\""), "{page}");
    assert_eq!(page.matches("<script").count(), page.matches("<script type=\"module\" src=").count(), "an inline script");
    // Every module a script imports is served, and nothing else is.
    let scripts = std::iter::once(("console.js", include_str!("../console/assets/console.js"))).chain(crate::api::console::MODULES);
    for (file, text) in scripts {
        for line in text.lines().filter(|l| l.starts_with("import ")) {
            let target = line.rsplit_once(" from '").map(|(_, t)| t.trim_end_matches("';")).unwrap_or_else(|| panic!("{file}: {line}"));
            let path = format!("/console/{}", target.trim_start_matches("/console/").trim_start_matches("./"));
            assert_eq!(h.call(get(&path, None)).await.status, StatusCode::OK, "{file} imports {target}");
        }
    }
    h.call(get("/console/missing.js", None)).await.problem(StatusCode::NOT_FOUND);
    for forbidden in ["<style", " style=", " onclick=", " onload=", " onsubmit=", "http://", "https://"] {
        assert!(!page.contains(forbidden), "the page has {forbidden:?}");
    }
    // API answers and problems carry them too, and are never cached.
    for reply in [h.call(get("/v1/pin", Some(VIEWER))).await, h.call(get("/v1/nothing", Some(VIEWER))).await] {
        assert_eq!(header(&reply, "x-frame-options"), "DENY");
        assert_eq!(header(&reply, "cache-control"), "no-store");
    }
}

#[tokio::test]
async fn the_session_names_the_caller_and_its_role() {
    let h = Harness::new();
    assert_eq!(
        h.call(get("/v1/session", Some(STAFF))).await.ok_json(StatusCode::OK),
        serde_json::json!({"name": "alice", "role": "staff"})
    );
    assert_eq!(
        h.call(get("/v1/session", Some(VIEWER))).await.ok_json(StatusCode::OK),
        serde_json::json!({"name": "dash", "role": "viewer"})
    );
    h.call(get("/v1/session", None)).await.problem(StatusCode::UNAUTHORIZED);
    h.call(get("/v1/session", Some("not-a-token"))).await.problem(StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_overview_shows_the_last_decision_and_reading_against_the_policy() {
    let h = Harness::new();
    let thresholds = policy().lock().describe().unwrap().thresholds;
    let empty = h.call(get("/v1/overview", Some(VIEWER))).await.ok_json(StatusCode::OK);
    assert_eq!((&empty["state"], &empty["explanation"]), (&Value::Null, &Value::Null), "{empty}");
    assert_eq!(empty["now"], format_rfc3339(h.now()));
    assert_eq!(empty["policies"]["active"]["version"], "1.0.0");
    assert_eq!(
        empty["policies"]["versions"],
        serde_json::json!([{"version": "1.0.0", "active": true, "shadow": false, "health": "healthy"}])
    );

    let config = config(&h, &[72.5, 91.0]);
    tick(&config, t0()).await;
    tick(&config, t0() + 60).await;
    let o = h.call(get("/v1/overview", Some(VIEWER))).await.ok_json(StatusCode::OK);
    let state = h.call(get("/v1/state", Some(VIEWER))).await.ok_json(StatusCode::OK);
    assert_eq!(o["state"], state, "the same document as /v1/state");
    let records = sentinel_core::ports::memory::MemoryStore::recent_ticks(h.store.as_ref(), 1).await.unwrap();
    assert_eq!(o["explanation"], records[0].1.decision.explanation);
    assert!(!o["explanation"].as_str().unwrap().is_empty());
    assert_eq!(o["reading_failed"], Value::Null);
    let readings = o["readings"].as_array().unwrap();
    let signals: Vec<&str> = readings.iter().map(|r| r["signal"].as_str().unwrap()).collect();
    assert_eq!(signals, ["cpu_pct", "connections_pct", "latency_ratio"]);
    assert_eq!(readings[0]["value"], 91.0, "the newest reading");
    assert_eq!(
        (readings[0]["constrained"].as_f64(), readings[0]["critical"].as_f64()),
        (Some(thresholds.cpu_pct.constrained), Some(thresholds.cpu_pct.critical))
    );
    assert_eq!(readings[1]["value"], Value::Null, "the trace has no connections");
    assert_eq!(readings[2]["critical"].as_f64(), Some(thresholds.latency_ratio.critical));
}

#[tokio::test]
async fn the_timeline_draws_the_stored_ticks_of_the_last_hours() {
    let h = Harness::new();
    let config = config(&h, &[72.5, 91.0, 30.0]);
    for i in 0..3 {
        tick(&config, t0() + 60 * i).await;
    }
    h.now.store(t0() + 180, Ordering::SeqCst);
    let reply = h.call(get("/v1/timeline.svg", Some(VIEWER))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.content_type(), "image/svg+xml");
    let svg = reply.text();
    let head = &svg[..svg.len().min(600)];
    assert!(
        svg.starts_with("<svg width=\"1400\"") && svg.contains("2026-10-20 14:00 to 2026-10-20 14:02, times in UTC, 3 ticks"),
        "{head}"
    );
    // No report title: the card says what the window is.
    assert!(!svg.contains("trace ") && !svg.contains("whole"), "{head}");
    // In the reader's zone, at the width it is shown.
    let local = h.call(get("/v1/timeline.svg?zone=America/New_York&width=900", Some(VIEWER))).await.text();
    let head = &local[..local.len().min(600)];
    assert!(local.starts_with("<svg width=\"900\""), "{head}");
    assert!(local.contains("2026-10-20 10:00 to 2026-10-20 10:02, times in America/New_York (EDT, UTC-04:00), 3 ticks"), "{head}");
    // A zone this machine lacks draws in UTC and says so (a 400 would leave the reader without a timeline).
    let unknown = h.call(get("/v1/timeline.svg?zone=Mars/Olympus", Some(VIEWER))).await;
    assert_eq!(unknown.status, StatusCode::OK);
    assert!(
        unknown.text().contains("times in UTC (the time zone &quot;Mars/Olympus&quot; is not known here), 3 ticks"),
        "{}",
        unknown.text()
    );
    for bad in ["width=639", "width=2401", "width=x"] {
        let problem = h.call(get(&format!("/v1/timeline.svg?{bad}"), Some(VIEWER))).await.problem(StatusCode::BAD_REQUEST);
        let detail = problem["detail"].as_str().unwrap_or_default().to_owned();
        assert!(detail.contains(bad.split('=').next().unwrap_or_default()), "{bad}: {detail}");
    }
    // A day later those ticks are outside the window.
    h.now.store(t0() + 25 * 3600, Ordering::SeqCst);
    let later = h.call(get("/v1/timeline.svg?hours=24", Some(VIEWER))).await.text();
    assert!(later.contains("no ticks"), "{later}");
    assert!(h.call(get("/v1/timeline.svg?hours=26", Some(VIEWER))).await.text().contains("3 ticks"));
    for bad in ["0", "169", "-1", "x"] {
        h.call(get(&format!("/v1/timeline.svg?hours={bad}"), Some(VIEWER))).await.problem(StatusCode::BAD_REQUEST);
    }
    h.call(get("/v1/timeline.svg", None)).await.problem(StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_cross_site_pin_change_is_refused_and_changes_nothing() {
    let h = Harness::new();
    let body = h.pin_body("emergency", "forged", 600);
    let put = |extra: &[(&str, &str)]| {
        let mut b = request(Method::PUT, "/v1/pin", Some(STAFF))
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::HOST, "sentinel.example:8080");
        for (k, v) in extra {
            b = b.header(*k, *v);
        }
        b.body(Body::from(body.clone())).unwrap()
    };
    for extra in [[("origin", "https://evil.example")], [("origin", "null")], [("sec-fetch-site", "cross-site")]] {
        let p = h.call(put(&extra)).await.problem(StatusCode::FORBIDDEN);
        assert_eq!(p["type"], "urn:capacity-sentinel:problem:cross-site", "{p}");
        assert_eq!(h.stored_pin().await, None, "{extra:?}");
    }
    let delete = request(Method::DELETE, "/v1/pin", Some(STAFF)).header("origin", "https://evil.example").body(Body::empty()).unwrap();
    h.call(delete).await.problem(StatusCode::FORBIDDEN);
    let audit = h.call(get("/v1/pin/audit", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(audit["entries"], serde_json::json!([]), "nothing reached the pin service");
    // The console's own requests pass.
    let same = [("origin", "http://sentinel.example:8080"), ("sec-fetch-site", "same-origin")];
    let p = h.call(put(&same)).await.problem(StatusCode::FORBIDDEN);
    assert!(p["detail"].as_str().unwrap().contains("x-sentinel-console"), "a browser change without the console's header: {p}");
    h.call(put(&[same[0], same[1], ("x-sentinel-console", "1")])).await.ok_json(StatusCode::OK);
}

#[tokio::test]
async fn every_refused_attempt_by_a_known_caller_is_audited_and_an_unknown_one_is_not() {
    let h = Harness::new();
    h.call(put_json("/v1/pin", Some(VIEWER), &h.pin_body("normal", "viewer tries", 60))).await.problem(StatusCode::FORBIDDEN);
    let audit = h.call(get("/v1/pin/audit", Some(STAFF))).await.ok_json(StatusCode::OK);
    let r = newest_audit(&audit);
    assert_eq!((r["action"].as_str(), r["actor"].as_str()), (Some("refused"), Some("dash")), "{r}");
    assert!(r["refusal"].as_str().unwrap().starts_with("set a pin: this token may not do this"), "{r}");
    assert!(r["refusal"].as_str().unwrap().ends_with("(403)"), "{r}");

    h.call(delete("/v1/pin", Some(VIEWER))).await.problem(StatusCode::FORBIDDEN);
    let audit = h.call(get("/v1/pin/audit", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert!(newest_audit(&audit)["refusal"].as_str().unwrap().starts_with("clear the pin:"), "{audit}");

    h.call(put_json("/v1/pin", Some(STAFF), "{\"state\": 3}")).await.problem(StatusCode::BAD_REQUEST);
    let audit = h.call(get("/v1/pin/audit", Some(STAFF))).await.ok_json(StatusCode::OK);
    let r = newest_audit(&audit);
    assert_eq!((r["actor"].as_str(), r["refusal"].as_str().map(|t| t.ends_with("(400)"))), (Some("alice"), Some(true)), "{r}");
    assert_eq!(audit["entries"].as_array().unwrap().len(), 3);

    // No verified caller, nothing to attribute: counted and logged, never written.
    h.call(put_json("/v1/pin", None, &h.pin_body("normal", "anonymous", 60))).await.problem(StatusCode::UNAUTHORIZED);
    h.call(put_json("/v1/pin", Some("forged"), &h.pin_body("normal", "anonymous", 60))).await.problem(StatusCode::UNAUTHORIZED);
    let audit = h.call(get("/v1/pin/audit", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(audit["entries"].as_array().unwrap().len(), 3);
    assert_eq!(h.stored_pin().await, None);

    // A state that would forge a line is kept escaped and bounded in the refusal.
    let long = format!("bogus\n{}", "y".repeat(2000));
    h.call(put_json("/v1/pin", Some(STAFF), &h.pin_body(&long, "r", 60))).await.problem(StatusCode::UNPROCESSABLE_ENTITY);
    let audit = h.call(get("/v1/pin/audit", Some(STAFF))).await.ok_json(StatusCode::OK);
    let refusal = newest_audit(&audit)["refusal"].as_str().unwrap().to_string();
    assert!(!refusal.contains('\n') && refusal.chars().count() <= sentinel_core::ports::pins::REFUSAL_MAX_CHARS, "{refusal}");
    assert!(refusal.starts_with("set a pin to bogus\\n") && refusal.ends_with('…'), "{refusal}");
}

#[tokio::test]
async fn one_caller_hammering_the_api_gets_ten_audited_refusals_a_minute_and_the_rest_counted() {
    let h = Harness::new();
    let attempt = || h.call(put_json("/v1/pin", Some(VIEWER), &h.pin_body("normal", "loop", 60)));
    for _ in 0..crate::api::refusals::PER_MINUTE + 5 {
        attempt().await.problem(StatusCode::FORBIDDEN);
    }
    let audit = h.call(get("/v1/pin/audit?limit=100", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(audit["entries"].as_array().unwrap().len(), crate::api::refusals::PER_MINUTE as usize);
    let metrics = h.call(get("/metrics", None)).await.text();
    assert!(metrics.contains("sentinel_api_refusals_unaudited_total 5"), "{metrics}");
    // Staff's own refusal is still written, and a minute later the viewer's is again.
    h.call(put_json("/v1/pin", Some(STAFF), &h.pin_body("normal", "far", 30 * 3600))).await.problem(StatusCode::UNPROCESSABLE_ENTITY);
    h.now.fetch_add(60, Ordering::SeqCst);
    attempt().await.problem(StatusCode::FORBIDDEN);
    let audit = h.call(get("/v1/pin/audit?limit=100", Some(STAFF))).await.ok_json(StatusCode::OK);
    let actors: Vec<&str> = audit["entries"].as_array().unwrap().iter().take(2).map(|e| e["actor"].as_str().unwrap()).collect();
    assert_eq!(actors, ["dash", "alice"]);
}

#[tokio::test]
async fn without_a_shadow_version_the_scorecard_says_none_and_needs_a_token() {
    let h = Harness::new();
    h.call(get("/v1/policies/shadow/scorecard", None)).await.problem(StatusCode::UNAUTHORIZED);
    assert_eq!(
        h.call(get("/v1/policies/shadow/scorecard", Some(VIEWER))).await.ok_json(StatusCode::OK),
        serde_json::json!({"status": "none", "shadow_version": null, "computed_at": null, "refreshing": false, "card": null, "problem": null})
    );
}
