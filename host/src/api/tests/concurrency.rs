//! 200 parallel sets and clears on one router and store: one pin or none at the end, and an
//! audit trail whose before/after values chain without a gap.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn parallel_sets_and_clears_leave_one_pin_and_a_gapless_trail() {
    let h = Harness::new();
    let router = h.router();
    let states = ["normal", "constrained", "critical", "emergency"];
    let mut tasks = Vec::new();
    for i in 0..200usize {
        let request = if i % 3 == 2 {
            delete("/v1/pin", Some(STAFF))
        } else {
            put_json("/v1/pin", Some(STAFF), &h.pin_body(states[i % 4], &format!("request {i}"), 600 + i as i64))
        };
        let router = router.clone();
        tasks.push(tokio::spawn(async move { (i, call(router, request).await) }));
    }
    let (mut sets, mut clears, mut nothing_to_clear) = (0, 0, 0);
    for task in tasks {
        let (i, reply) = task.await.unwrap();
        match (i % 3 == 2, reply.status) {
            (false, StatusCode::OK) => sets += 1,
            (true, StatusCode::OK) => clears += 1,
            (true, StatusCode::NO_CONTENT) => nothing_to_clear += 1,
            (_, status) => panic!("request {i}: {status} {}", reply.text()),
        }
    }
    assert_eq!(sets + clears + nothing_to_clear, 200);
    assert_eq!(sets, 134);

    // The whole trail, oldest first, read through the API page by page.
    let mut trail: Vec<Value> = Vec::new();
    let mut before: Option<i64> = None;
    loop {
        let path = match before {
            Some(b) => format!("/v1/pin/audit?limit=50&before={b}"),
            None => "/v1/pin/audit?limit=50".to_string(),
        };
        let page = h.call(get(&path, Some(VIEWER))).await.ok_json(StatusCode::OK);
        trail.extend(page["entries"].as_array().unwrap().iter().cloned());
        match page["next_before"].as_i64() {
            Some(b) => before = Some(b),
            None => break,
        }
    }
    trail.reverse();
    assert_eq!(trail.len(), sets + clears, "one record per change, none for a clear of nothing");
    assert_eq!(trail[0]["before"], Value::Null, "the first change found no pin");
    for pair in trail.windows(2) {
        assert!(pair[0]["id"].as_i64() < pair[1]["id"].as_i64());
        assert_eq!(pair[1]["before"], pair[0]["after"], "a gap between record {} and {}", pair[0]["id"], pair[1]["id"]);
        let expected = match (&pair[1]["before"], &pair[1]["after"]) {
            (Value::Null, Value::Object(_)) => "set",
            (Value::Object(_), Value::Object(_)) => "replace",
            (Value::Object(_), Value::Null) => "clear",
            other => panic!("a record with neither before nor after: {other:?}"),
        };
        assert_eq!(pair[1]["action"], expected);
    }

    // Exactly the pin the last record left, or none.
    let shown = h.call(get("/v1/pin", Some(STAFF))).await.ok_json(StatusCode::OK);
    let last_after = &trail.last().unwrap()["after"];
    match &shown["pin"] {
        Value::Null => assert_eq!(last_after, &Value::Null),
        pin => {
            let mut pin = pin.clone();
            pin.as_object_mut().unwrap().remove("active");
            assert_eq!(&pin, last_after);
        }
    }
}
