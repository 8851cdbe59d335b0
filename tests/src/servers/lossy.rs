//! A TCP proxy in front of a real server that can lose answers: everything the client sends
//! reaches the server, and the server's answers come back, except the next N reads from the
//! server, which are dropped. The server has acted on the request; the client never hears so
//! (a lost reply, as a flaky network or a failover loses it). It can also lose every answer on
//! the connections that carry requests starting with a given text (an HTTP method): the server
//! applies each such request, its client waits for an answer that never comes; or hold such
//! answers back a while (counting the requests). It can hold requests that contain a given text
//! on the way to the server until released (a write held on the network that lands late). And
//! it can play the server being down (connections refused and cut) while the server keeps its
//! state.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

pub struct LossyProxy {
    pub port: u16,
    lose: Arc<AtomicUsize>,
    armed: Arc<Mutex<Option<Vec<u8>>>>,
    slow: Arc<Slow>,
    down: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

/// Requests whose answers are held back, and how many such requests came; requests that are
/// themselves held on the way to the server, and how many are held now.
#[derive(Default)]
struct Slow {
    rule: Mutex<Option<(Vec<u8>, Duration)>>,
    seen: AtomicUsize,
    hold: Mutex<Option<Vec<u8>>>,
    held: AtomicUsize,
}

impl LossyProxy {
    /// A proxy on a free port to `127.0.0.1:upstream`.
    pub fn start(upstream: u16) -> LossyProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding the proxy");
        let port = listener.local_addr().expect("local addr").port();
        listener.set_nonblocking(true).expect("nonblocking listener");
        let (lose, stop) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        let armed: Arc<Mutex<Option<Vec<u8>>>> = Arc::new(Mutex::new(None));
        let down = Arc::new(AtomicBool::new(false));
        let slow = Arc::new(Slow::default());
        let (losing, stopping, arming, downing, slowing) = (lose.clone(), stop.clone(), armed.clone(), down.clone(), slow.clone());
        std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) if downing.load(Ordering::SeqCst) => drop(client),
                    Ok((client, _)) => {
                        client.set_nonblocking(false).expect("blocking client socket");
                        // A server that is not there (stopped, restarting): the client's
                        // connection is closed, as a proxy in front of a stopped server does.
                        let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                            drop(client);
                            continue;
                        };
                        // Set when this connection carried the armed request: its answers are lost.
                        let swallow = Arc::new(AtomicBool::new(false));
                        // Set by a slow request: how long to hold its answer back.
                        let delay = Arc::new(Mutex::new(None));
                        let requests = Direction {
                            lose: None,
                            swallow: swallow.clone(),
                            watch: Some(arming.clone()),
                            down: downing.clone(),
                            slow: slowing.clone(),
                            delay: delay.clone(),
                        };
                        let answers = Direction {
                            lose: Some(losing.clone()),
                            swallow,
                            watch: None,
                            down: downing.clone(),
                            slow: slowing.clone(),
                            delay,
                        };
                        pump(client.try_clone().expect("clone"), server.try_clone().expect("clone"), requests);
                        pump(server, client, answers);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        LossyProxy { port, lose, armed, slow, down, stop }
    }

    /// The next `n` answers from the server (one read each) are lost.
    pub fn lose_next(&self, n: usize) {
        self.lose.store(n, Ordering::SeqCst);
    }

    /// From now until [`LossyProxy::keep_answers`], every answer on a connection that carried a
    /// request starting with `prefix` (for example `"PATCH "`) is lost: the server acts on each
    /// such request (and on the client's retries of it), the client never hears.
    pub fn lose_answers_to(&self, prefix: &str) {
        *self.armed.lock().unwrap_or_else(PoisonError::into_inner) = Some(prefix.as_bytes().to_vec());
    }

    pub fn keep_answers(&self) {
        *self.armed.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// From now on, the answer to each request starting with `prefix` is held back `delay`
    /// (the server has acted; the client waits), and such requests are counted.
    pub fn slow_answers_to(&self, prefix: &str, delay: Duration) {
        *self.slow.rule.lock().unwrap_or_else(PoisonError::into_inner) = Some((prefix.as_bytes().to_vec(), delay));
    }

    /// How many requests matched the rule of [`LossyProxy::slow_answers_to`] so far.
    pub fn slow_requests_seen(&self) -> usize {
        self.slow.seen.load(Ordering::SeqCst)
    }

    /// From now until [`LossyProxy::release_held`], a request that contains `text` is held on
    /// the way to the server (with everything its connection sends after it): the client has
    /// sent it, the server has not seen it.
    pub fn hold_requests_containing(&self, text: &str) {
        *self.slow.hold.lock().unwrap_or_else(PoisonError::into_inner) = Some(text.as_bytes().to_vec());
    }

    /// How many requests are held now.
    pub fn requests_held(&self) -> usize {
        self.slow.held.load(Ordering::SeqCst)
    }

    /// Lets the held requests through to the server, and holds no more.
    pub fn release_held(&self) {
        *self.slow.hold.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Down: new connections are closed at once and open ones are cut at their next data, as
    /// when the server stops (but it keeps its state, unlike a stopped emulator); up: all pass.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }
}

impl Drop for LossyProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// What one direction of a connection drops or watches for.
struct Direction {
    /// Answers: drop reads while above zero.
    lose: Option<Arc<AtomicUsize>>,
    /// Answers: drop everything once set. Requests: set it on the armed request.
    swallow: Arc<AtomicBool>,
    /// Requests: the armed prefix; a request starting with it sets `swallow`.
    watch: Option<Arc<Mutex<Option<Vec<u8>>>>>,
    /// Both: the server is "down", the connection is cut.
    down: Arc<AtomicBool>,
    slow: Arc<Slow>,
    /// Requests: set to the slow rule's delay on a slow request. Answers: taken and slept.
    delay: Arc<Mutex<Option<Duration>>>,
}

/// Copies `from` to `to` until either side closes, dropping what `direction` says.
fn pump(mut from: TcpStream, mut to: TcpStream, direction: Direction) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if direction.down.load(Ordering::SeqCst) {
                break;
            }
            if let Some(watch) = &direction.watch {
                let armed = watch.lock().unwrap_or_else(PoisonError::into_inner);
                if armed.as_ref().is_some_and(|prefix| buf[..n].starts_with(prefix)) {
                    direction.swallow.store(true, Ordering::SeqCst);
                }
                let holds = |buf: &[u8]| {
                    let hold = direction.slow.hold.lock().unwrap_or_else(PoisonError::into_inner);
                    hold.as_ref().is_some_and(|text| buf.windows(text.len()).any(|w| w == text.as_slice()))
                };
                if holds(&buf[..n]) {
                    direction.slow.held.fetch_add(1, Ordering::SeqCst);
                    while holds(&buf[..n]) {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    direction.slow.held.fetch_sub(1, Ordering::SeqCst);
                }
                let rule = direction.slow.rule.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some((prefix, delay)) = rule.as_ref()
                    && buf[..n].starts_with(prefix)
                {
                    *direction.delay.lock().unwrap_or_else(PoisonError::into_inner) = Some(*delay);
                    direction.slow.seen.fetch_add(1, Ordering::SeqCst);
                }
            } else if direction.swallow.load(Ordering::SeqCst) {
                continue;
            } else if let Some(delay) = direction.delay.lock().unwrap_or_else(PoisonError::into_inner).take() {
                std::thread::sleep(delay);
            }
            if let Some(lose) = &direction.lose
                && lose.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| left.checked_sub(1)).is_ok()
            {
                continue;
            }
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}
