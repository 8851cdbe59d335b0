//! `GET /v1/pin/audit`: newest first, paged by id, each entry with the pin before and after.

use super::*;

async fn three_changes(h: &Harness) -> (Value, Value, Value) {
    let set = h.set_pin("emergency", "incident 4411", 3600).await.ok_json(StatusCode::OK);
    h.now.fetch_add(60, Ordering::SeqCst);
    let replace = h.set_pin("critical", "easing", 1800).await.ok_json(StatusCode::OK);
    h.now.fetch_add(60, Ordering::SeqCst);
    let clear = h.call(delete("/v1/pin", Some(STAFF))).await.ok_json(StatusCode::OK);
    (set, replace, clear)
}

#[tokio::test]
async fn the_trail_is_newest_first_with_before_and_after() {
    let h = Harness::new();
    let empty = h.call(get("/v1/pin/audit", Some(VIEWER))).await.ok_json(StatusCode::OK);
    assert_eq!(empty, serde_json::json!({ "entries": [], "next_before": null }));

    let (set, replace, clear) = three_changes(&h).await;
    let page = h.call(get("/v1/pin/audit", Some(VIEWER))).await.ok_json(StatusCode::OK);
    assert_eq!(page["entries"], serde_json::json!([clear, replace, set]), "the records as the changes returned them");
    assert_eq!(page["next_before"], Value::Null);
    let e = page["entries"].as_array().unwrap();
    assert_eq!(e.iter().map(|e| e["action"].as_str().unwrap()).collect::<Vec<_>>(), ["clear", "replace", "set"]);
    assert_eq!(e[2]["before"], Value::Null);
    assert_eq!(e[1]["before"], e[2]["after"]);
    assert_eq!(e[0]["before"], e[1]["after"]);
    assert_eq!(e[0]["after"], Value::Null);
    assert!(e.iter().all(|e| e["actor"] == "alice"));
}

#[tokio::test]
async fn pages_go_by_next_before() {
    let h = Harness::new();
    let (set, replace, clear) = three_changes(&h).await;
    let first = h.call(get("/v1/pin/audit?limit=2", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(first["entries"], serde_json::json!([clear, replace]));
    assert_eq!(first["next_before"], replace["id"]);
    let next = format!("/v1/pin/audit?limit=2&before={}", first["next_before"]);
    let second = h.call(get(&next, Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(second["entries"], serde_json::json!([set]));
    assert_eq!(second["next_before"], Value::Null, "the last page");
    // A page that exactly ends the trail says so too.
    let exact = h.call(get("/v1/pin/audit?limit=3", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(exact["next_before"], Value::Null);
    let past_the_start = h.call(get("/v1/pin/audit?before=1", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(past_the_start["entries"], serde_json::json!([]));
    // Unknown parameters are ignored.
    h.call(get("/v1/pin/audit?limit=1&colour=blue", Some(STAFF))).await.ok_json(StatusCode::OK);
}

#[tokio::test]
async fn a_bad_query_is_400_naming_the_parameter() {
    let h = Harness::new();
    let cases = [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=-1", "limit"),
        ("limit=ten", "limit"),
        ("limit=", "limit"),
        ("limit=1&limit=2", "limit"),
        ("before=0", "before"),
        ("before=-5", "before"),
        ("before=9223372036854775808", "before"),
        ("before=x", "before"),
    ];
    for (query, parameter) in cases {
        let reply = h.call(get(&format!("/v1/pin/audit?{query}"), Some(STAFF))).await;
        let p = reply.problem(StatusCode::BAD_REQUEST);
        assert!(p["detail"].as_str().unwrap().contains(parameter), "{query}: {p}");
    }
    h.call(get("/v1/pin/audit?limit=500&before=9223372036854775807", Some(STAFF))).await.ok_json(StatusCode::OK);
}
