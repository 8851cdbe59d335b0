//! Prometheus's HTTP API as the end-to-end tests read it: instant queries and the alerts the
//! rules evaluate (`/api/v1/query`, `/api/v1/alerts`), through reqwest.

use serde_json::Value;
use std::time::{Duration, Instant};

pub struct PrometheusApi {
    base: String,
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

impl PrometheusApi {
    pub fn new(base: &str) -> PrometheusApi {
        let client =
            sentinel_adapters::tls::http_client().expect("an HTTP client").timeout(Duration::from_secs(10)).build().expect("client");
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        PrometheusApi { base: base.trim_end_matches('/').to_string(), client, runtime }
    }

    fn get(&self, path: &str, query: &[(&str, &str)]) -> Value {
        self.runtime.block_on(async {
            let response = self.client.get(format!("{}{path}", self.base)).query(query).send().await.expect("prometheus answers");
            let status = response.status();
            let body: Value = response.json().await.expect("prometheus answers JSON");
            assert!(status.is_success() && body["status"] == "success", "{path} {query:?}: HTTP {status}: {body}");
            body["data"].clone()
        })
    }

    /// The series an instant query returns now.
    pub fn query(&self, expr: &str) -> Vec<Value> {
        let data = self.get("/api/v1/query", &[("query", expr)]);
        match data["resultType"].as_str() {
            Some("scalar") | Some("string") => vec![data["result"].clone()],
            _ => data["result"].as_array().cloned().unwrap_or_default(),
        }
    }

    /// Every alert pending or firing now.
    pub fn alerts(&self) -> Vec<Value> {
        self.get("/api/v1/alerts", &[])["alerts"].as_array().cloned().unwrap_or_default()
    }

    /// The firing alerts named `name`.
    pub fn firing(&self, name: &str) -> Vec<Value> {
        self.alerts().into_iter().filter(|a| a["labels"]["alertname"] == name && a["state"] == "firing").collect()
    }

    /// Waits until `name` fires (with labels containing `labels`), returning it.
    pub fn await_firing(&self, name: &str, labels: &[(&str, &str)], limit: Duration) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let found = self.firing(name).into_iter().find(|a| labels.iter().all(|(k, v)| a["labels"][*k] == *v));
            if let Some(alert) = found {
                return alert;
            }
            assert!(Instant::now() < deadline, "{name} {labels:?} did not fire within {limit:?}; alerts now: {:#?}", self.alerts());
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}
