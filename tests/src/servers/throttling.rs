//! An HTTP proxy in front of moto's SSM that throttles as SSM does: above `limit`
//! `GetParameter` calls in any one second it answers SSM's own error (HTTP 400,
//! `ThrottlingException`, "Rate exceeded") without passing the call on; everything else reaches
//! moto untouched. It counts, per second, the calls it passed on and the calls it throttled (the
//! fleet load test's figures).

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What happened to `GetParameter` calls in one second (unix seconds).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Second {
    /// Passed on to moto and answered.
    pub served: u32,
    /// Answered `ThrottlingException`.
    pub throttled: u32,
}

struct Shared {
    upstream: String,
    limit: usize,
    client: reqwest::Client,
    /// When each of the calls served within the last second was let through.
    window: Mutex<VecDeque<Instant>>,
    seconds: Mutex<BTreeMap<u64, Second>>,
}

pub struct ThrottlingSsm {
    pub port: u16,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

const GET_PARAMETER: &str = "AmazonSSM.GetParameter";

impl ThrottlingSsm {
    /// A proxy on a free 127.0.0.1 port to `upstream` (moto's endpoint, `http://127.0.0.1:N`),
    /// serving at most `limit` `GetParameter` calls in any one second.
    pub fn start(upstream: &str, limit: usize) -> ThrottlingSsm {
        let client =
            sentinel_adapters::tls::http_client().expect("an HTTP client").timeout(Duration::from_secs(10)).build().expect("client");
        let shared = Arc::new(Shared {
            upstream: upstream.trim_end_matches('/').to_string(),
            limit,
            client,
            window: Mutex::new(VecDeque::new()),
            seconds: Mutex::new(BTreeMap::new()),
        });
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binding the proxy");
        let port = listener.local_addr().expect("local addr").port();
        listener.set_nonblocking(true).expect("nonblocking listener");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = shared.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                let app = axum::Router::new().fallback(forward).with_state(state);
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await
                    .expect("the throttling proxy serves");
            });
        });
        ThrottlingSsm { port, shared, stop: Some(stop), thread: Some(thread) }
    }

    /// The endpoint SSM clients are pointed at.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `GetParameter` calls served and throttled, per unix second, so far.
    pub fn seconds(&self) -> BTreeMap<u64, Second> {
        self.shared.seconds.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl Drop for ThrottlingSsm {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn unix_second() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_secs()
}

impl Shared {
    /// Whether a `GetParameter` call may pass now (and, if so, it is counted in the window).
    fn admit(&self) -> bool {
        let now = Instant::now();
        let mut window = self.window.lock().unwrap_or_else(PoisonError::into_inner);
        while window.front().is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(1)) {
            window.pop_front();
        }
        let admitted = window.len() < self.limit;
        if admitted {
            window.push_back(now);
        }
        admitted
    }

    fn count(&self, served: bool) {
        let mut seconds = self.seconds.lock().unwrap_or_else(PoisonError::into_inner);
        let second = seconds.entry(unix_second()).or_default();
        if served {
            second.served += 1;
        } else {
            second.throttled += 1;
        }
    }
}

/// SSM's answer to a call above its rate (the JSON 1.1 protocol's error form).
fn throttled() -> Response {
    let mut response = Response::new(Body::from(r#"{"__type":"ThrottlingException","message":"Rate exceeded"}"#));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    let headers = response.headers_mut();
    headers.insert("content-type", HeaderValue::from_static("application/x-amz-json-1.1"));
    headers.insert("x-amzn-errortype", HeaderValue::from_static("ThrottlingException"));
    response
}

async fn forward(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let get_parameter = parts.headers.get("x-amz-target").is_some_and(|t| t.as_bytes() == GET_PARAMETER.as_bytes());
    if get_parameter && !shared.admit() {
        shared.count(false);
        return throttled();
    }
    let Ok(body) = to_bytes(body, 1 << 20).await else {
        return status(StatusCode::PAYLOAD_TOO_LARGE);
    };
    let mut headers = HeaderMap::new();
    for (name, value) in &parts.headers {
        if name != "host" && name != "content-length" {
            headers.append(name.clone(), value.clone());
        }
    }
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let sent = shared.client.request(parts.method, format!("{}{path}", shared.upstream)).headers(headers).body(body).send().await;
    let Ok(answer) = sent else {
        return status(StatusCode::BAD_GATEWAY);
    };
    let code = answer.status();
    let answer_headers = answer.headers().clone();
    let Ok(bytes) = answer.bytes().await else {
        return status(StatusCode::BAD_GATEWAY);
    };
    if get_parameter {
        shared.count(true);
    }
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = code;
    for (name, value) in &answer_headers {
        if name != "content-length" && name != "transfer-encoding" && name != "connection" {
            response.headers_mut().append(name.clone(), value.clone());
        }
    }
    response
}

fn status(code: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = code;
    response
}
