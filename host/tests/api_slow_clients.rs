//! `sentinel serve` against real slow clients on raw TCP (slowloris): a client trickling its
//! header, one stalling or trickling its body, an idle kept-alive connection, and a flood of
//! half-sent requests past both `api.max_connections` and the process's open-file limit. Each
//! is closed by the `[api]` limit meant for it, and the probes get through. Timeouts are short
//! here (1 s); every test fails if the connection outlives its limit by `MARGIN`.

use crate::support;

use sha2::{Digest, Sha256};
use std::fs::File;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{Background, Metrics, Sandbox, eventually};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;

/// How long past its limit a connection may take to close (a loaded 2-core machine).
const MARGIN: Duration = Duration::from_millis(1_500);

/// How long a test waits for a close that should have come: past it, the limit is missing.
const GIVE_UP: Duration = Duration::from_secs(8);

const STAFF: &str = "staff-token-slow-clients";

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// Starts `sentinel serve` with `api_table` under `[api]`, its open files limited to `nofile`
/// when given (`ulimit -n`, then exec), and returns it with its address.
fn serve(api_table: &str, nofile: Option<u32>, name: &str) -> (Sandbox, Background, SocketAddr) {
    let sb = Sandbox::new(Metrics::Synthetic);
    let hash = hex::encode(Sha256::digest(STAFF.as_bytes()));
    sb.edit_config(|text| format!("{text}[api]\ntokens = [{{ name = \"alice\", role = \"staff\", sha256 = \"{hash}\" }}]\n{api_table}"));
    let log = sb.path(&format!("{name}.stderr"));
    let limit = nofile.map(|n| format!("ulimit -n {n} && ")).unwrap_or_default();
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!("{limit}exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_sentinel"))
        .args(["serve", "--addr", "127.0.0.1:0", "--config"])
        .arg(&sb.config)
        .current_dir(sb.dir.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(File::create(&log).unwrap()))
        .spawn()
        .unwrap();
    let server = Background { child, log };
    let mut addr = None;
    let started = eventually(Duration::from_secs(20), || {
        addr = server.stderr().split_whitespace().find_map(|w| w.strip_prefix("http://")?.parse().ok());
        addr.is_some()
    });
    assert!(started, "sentinel serve did not start:\n{}", server.stderr());
    (sb, server, addr.unwrap())
}

/// Reads until the server closes the connection (end of stream or reset), feeding `trickle`
/// to it one byte every `every` meanwhile. What it received and how long after `since` it
/// was closed; `Err` when still open after `GIVE_UP`.
async fn until_closed(stream: TcpStream, since: Instant, trickle: &[u8], every: Duration) -> Result<(Duration, String), String> {
    let (mut reader, mut writer) = stream.into_split();
    let reading = async move {
        let (mut received, mut chunk) = (Vec::new(), [0u8; 4096]);
        while let Ok(n @ 1..) = reader.read(&mut chunk).await {
            received.extend_from_slice(&chunk[..n]);
        }
        String::from_utf8_lossy(&received).into_owned()
    };
    let trickling = async move {
        for byte in trickle {
            tokio::time::sleep(every).await;
            if writer.write_all(std::slice::from_ref(byte)).await.is_err() {
                break;
            }
        }
        // Keep the write half open: dropping it would send a FIN.
        std::future::pending::<OwnedWriteHalf>().await
    };
    tokio::select! {
        received = reading => Ok((since.elapsed(), received)),
        _ = trickling => unreachable!(),
        () = tokio::time::sleep(GIVE_UP) => Err(format!("still open after {}", secs(since.elapsed()))),
    }
}

/// Asserts `elapsed` is `limit` give or take: not before it (less 100 ms of clock slack),
/// not `MARGIN` after it.
fn assert_closed_at(what: &str, elapsed: Duration, limit: Duration) {
    assert!(
        elapsed + Duration::from_millis(100) >= limit && elapsed <= limit + MARGIN,
        "{what}: closed after {}, expected {} (+ at most {})",
        secs(elapsed),
        secs(limit),
        secs(MARGIN)
    );
}

#[tokio::test]
async fn a_client_trickling_its_header_is_closed_after_the_header_read_timeout() {
    let (_sb, _server, addr) = serve("header_read_timeout = \"1s\"\n", None, "trickle");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let since = Instant::now();
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: sentinel\r\nX-Slow: ").await.unwrap();
    // One byte a second: each well within any gap timeout, the header never complete.
    let result = until_closed(stream, since, &[b'a'; 30], Duration::from_secs(1)).await;
    let (elapsed, received) = result.unwrap_or_else(|e| panic!("a trickling header with header_read_timeout = 1s: {e}"));
    eprintln!("trickling header closed after {} (header_read_timeout = 1s)", secs(elapsed));
    assert_closed_at("a trickling header", elapsed, Duration::from_secs(1));
    assert_eq!(received, "", "no response to a request never complete");
}

#[tokio::test]
async fn a_stalled_or_trickling_request_body_is_refused_after_the_body_timeout() {
    let (_sb, _server, addr) = serve("header_read_timeout = \"5s\"\nrequest_body_timeout = \"1s\"\nidle_timeout = \"5s\"\n", None, "body");
    let head = format!(
        "PUT /v1/pin HTTP/1.1\r\nHost: sentinel\r\nAuthorization: Bearer {STAFF}\r\nContent-Type: application/json\r\n\
         Content-Length: 200\r\n\r\n{{\"state\": \"emergency\", "
    );
    let body_client = |trickle: &'static [u8], every: Duration| {
        let head = head.clone();
        async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            stream.write_all(head.as_bytes()).await.unwrap();
            until_closed(stream, Instant::now(), trickle, every).await
        }
    };
    // One stops after a part of its body; the other sends a byte every 300 ms, which would
    // keep a timeout between bytes from ever firing.
    let (stalled, trickling) = tokio::join!(body_client(b"", Duration::ZERO), body_client(&[b' '; 100], Duration::from_millis(300)));
    for (what, result) in [("a stalled body", stalled), ("a trickling body", trickling)] {
        let (elapsed, response) = result.unwrap_or_else(|e| panic!("{what} with request_body_timeout = 1s: {e}"));
        eprintln!("{what}: answered and closed after {} (request_body_timeout = 1s)", secs(elapsed));
        assert_closed_at(what, elapsed, Duration::from_secs(1));
        assert!(response.starts_with("HTTP/1.1 400 "), "{what}: {response}");
        assert!(response.contains("api.request_body_timeout"), "{what}: the problem names the key: {response}");
    }
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_after_the_idle_timeout() {
    let (_sb, _server, addr) = serve("header_read_timeout = \"3s\"\nidle_timeout = \"1s\"\n", None, "idle");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // Two requests on one connection: it is kept alive.
    for _ in 0..2 {
        stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: sentinel\r\n\r\n").await.unwrap();
        let response = read_response(&mut stream).await;
        assert!(response.starts_with("HTTP/1.1 200 "), "{response}");
        assert!(!response.to_ascii_lowercase().contains("connection: close"), "{response}");
    }
    let (elapsed, received) = until_closed(stream, Instant::now(), b"", Duration::ZERO)
        .await
        .unwrap_or_else(|e| panic!("an idle kept-alive connection with idle_timeout = 1s: {e}"));
    eprintln!("idle kept-alive connection closed after {} (idle_timeout = 1s, header_read_timeout = 3s)", secs(elapsed));
    // Closed by the idle timeout, well before the header-read timeout (3 s).
    assert_closed_at("an idle kept-alive connection", elapsed, Duration::from_secs(1));
    assert_eq!(received, "");
}

#[tokio::test]
async fn on_sigterm_requests_in_flight_finish_idle_connections_close_and_slow_ones_do_not_hold_the_exit() {
    let (_sb, mut server, addr) =
        serve("header_read_timeout = \"3s\"\nrequest_body_timeout = \"2s\"\nidle_timeout = \"3s\"\n", None, "drain");
    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: sentinel\r\n\r\n").await.unwrap();
    assert!(read_response(&mut idle).await.starts_with("HTTP/1.1 200 "));
    let mut slow_header = TcpStream::connect(addr).await.unwrap();
    slow_header.write_all(b"GET /healthz HTTP/1.1\r\nHost: sentinel\r\n").await.unwrap();
    let mut in_flight = TcpStream::connect(addr).await.unwrap();
    let put = format!(
        "PUT /v1/pin HTTP/1.1\r\nHost: sentinel\r\nAuthorization: Bearer {STAFF}\r\nContent-Type: application/json\r\n\
         Content-Length: 200\r\n\r\n{{\"state\": "
    );
    in_flight.write_all(put.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    server.signal("TERM");
    let since = Instant::now();
    let (idle, slow_header, in_flight) = tokio::join!(
        until_closed(idle, since, b"", Duration::ZERO),
        until_closed(slow_header, since, b"", Duration::ZERO),
        until_closed(in_flight, since, b"", Duration::ZERO),
    );
    let status = server.wait_for_exit(Duration::from_secs(12)).unwrap_or_else(|| panic!("no exit after SIGTERM:\n{}", server.stderr()));
    let exited = since.elapsed();
    let log = server.stderr();
    let (idle, _) = idle.unwrap_or_else(|e| panic!("the idle connection after SIGTERM: {e}"));
    let (in_flight, response) = in_flight.unwrap_or_else(|e| panic!("the request in flight after SIGTERM: {e}\n{log}"));
    let (slow_header, _) = slow_header.unwrap_or_else(|e| panic!("the half-sent header after SIGTERM: {e}"));
    eprintln!(
        "after SIGTERM: idle connection closed after {}, the request in flight answered after {}, the half-sent header closed after {}, exit after {}",
        secs(idle),
        secs(in_flight),
        secs(slow_header),
        secs(exited)
    );
    assert!(idle < Duration::from_millis(500), "an idle connection closes at once: {}", secs(idle));
    // The request in flight is not cut off: it gets its answer (here, its body's deadline).
    assert!(response.starts_with("HTTP/1.1 400 ") && response.contains("api.request_body_timeout"), "{response}");
    assert!(slow_header <= Duration::from_secs(3) + MARGIN, "{}", secs(slow_header));
    assert!(exited <= Duration::from_secs(3) + MARGIN, "the drain ends with the last connection: {}\n{log}", secs(exited));
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("the API stopped"), "{log}");
}

/// One response with a Content-Length body, read off a kept-alive connection.
async fn read_response(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(GIVE_UP, stream.read(&mut chunk)).await.expect("a response in time").unwrap();
        assert!(n > 0, "closed mid-response: {}", String::from_utf8_lossy(&received));
        received.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&received).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap()))
                .expect("a Content-Length");
            if body.len() >= length {
                return text;
            }
        }
    }
}

/// The open-file limit of the flood tests, and the slow clients: more connections than the
/// process has file descriptors for (64, less about 16 it uses itself).
const NOFILE: u32 = 64;
const ATTACKERS: usize = 60;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_get_through_while_slow_clients_flood_past_the_connection_limit() {
    let (_sb, server, addr) = serve("header_read_timeout = \"1s\"\nidle_timeout = \"1s\"\nmax_connections = 32\n", Some(NOFILE), "flood");
    flood_and_probe(&server, addr, 32).await;
    assert!(!server.stderr().contains("open-file limit"), "32 connections fit: no warning");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_limit_beyond_the_open_file_limit_is_lowered_with_a_warning() {
    // The default limit (256) under 64 open files: the finding's setup (128 fds, 140 clients).
    let (_sb, server, addr) = serve("header_read_timeout = \"1s\"\nidle_timeout = \"1s\"\n", Some(NOFILE), "lowered");
    let warning = "api.max_connections (256) is more than the open-file limit (64) leaves for connections after 32 \
                   for the process's own files: serving at most 32 connections at once";
    assert!(eventually(Duration::from_secs(5), || server.stderr().contains(warning)), "{}", server.stderr());
    flood_and_probe(&server, addr, 32).await;
}

/// `ATTACKERS` slow clients each hold a half-sent request and open a new one as soon as the
/// server closes it; meanwhile three `/healthz` probes must each be answered within the
/// header-read timeout (1 s) and `MARGIN`. The server must log reaching `limit`, once.
async fn flood_and_probe(server: &Background, addr: SocketAddr, limit: u32) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    let in_use = std::fs::read_dir(format!("/proc/{}/fd", server.child.id())).unwrap().count();
    assert!(ATTACKERS + in_use > NOFILE as usize, "the flood must outnumber the free file descriptors: {in_use} in use of {NOFILE}");
    let stop = Arc::new(AtomicBool::new(false));
    let opened = Arc::new(AtomicUsize::new(0));
    let mut attackers = tokio::task::JoinSet::new();
    for _ in 0..ATTACKERS {
        let (stop, opened) = (stop.clone(), opened.clone());
        attackers.spawn(async move {
            while !stop.load(Relaxed) {
                let Ok(mut stream) = TcpStream::connect(addr).await else { continue };
                opened.fetch_add(1, Relaxed);
                if stream.write_all(b"GET /v1/state HTTP/1.1\r\nHost: sentinel\r\n").await.is_ok() {
                    let _ = until_closed(stream, Instant::now(), b"", Duration::ZERO).await;
                }
            }
        });
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut latencies = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let probe = async {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: sentinel\r\nConnection: close\r\n\r\n").await.unwrap();
            let mut response = String::new();
            let _ = stream.read_to_string(&mut response).await;
            response
        };
        let deadline = Duration::from_secs(1) + MARGIN;
        let response = tokio::time::timeout(deadline, probe).await.unwrap_or_else(|_| {
            panic!(
                "/healthz did not answer within {} while {ATTACKERS} slow clients held connections:\n{}",
                secs(deadline),
                server.stderr()
            )
        });
        assert!(response.starts_with("HTTP/1.1 200 "), "{response}");
        latencies.push(started.elapsed());
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    stop.store(true, Relaxed);
    attackers.abort_all();
    let opened = opened.load(Relaxed);
    eprintln!(
        "/healthz answered after {} with {ATTACKERS} slow clients ({opened} connections opened), {limit} allowed, {in_use} of {NOFILE} fds in use at start",
        latencies.iter().map(|l| secs(*l)).collect::<Vec<_>>().join(", ")
    );
    assert!(opened > ATTACKERS, "slow clients were closed and came back: {opened} connections");
    let log = server.stderr();
    let reached = format!("api.max_connections ({limit}) reached");
    assert_eq!(log.matches(&reached).count(), 1, "reaching the limit is logged once a minute at most:\n{log}");
    assert!(!log.contains("cannot accept"), "never out of file descriptors:\n{log}");
}
