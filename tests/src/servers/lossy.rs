//! A TCP proxy in front of a real server that can lose answers: everything the client sends
//! reaches the server, and the server's answers come back, except the next N reads from the
//! server, which are dropped. The server has acted on the request; the client never hears so
//! (a lost reply, as a flaky network or a failover loses it).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

pub struct LossyProxy {
    pub port: u16,
    lose: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl LossyProxy {
    /// A proxy on a free port to `127.0.0.1:upstream`.
    pub fn start(upstream: u16) -> LossyProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding the proxy");
        let port = listener.local_addr().expect("local addr").port();
        listener.set_nonblocking(true).expect("nonblocking listener");
        let (lose, stop) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        let (losing, stopping) = (lose.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).expect("blocking client socket");
                        let server = TcpStream::connect(("127.0.0.1", upstream)).expect("the proxy reaches its server");
                        pump(client.try_clone().expect("clone"), server.try_clone().expect("clone"), None);
                        pump(server, client, Some(losing.clone()));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        LossyProxy { port, lose, stop }
    }

    /// The next `n` answers from the server (one read each) are lost.
    pub fn lose_next(&self, n: usize) {
        self.lose.store(n, Ordering::SeqCst);
    }
}

impl Drop for LossyProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Copies `from` to `to` until either side closes, dropping reads while `lose` is above zero.
fn pump(mut from: TcpStream, mut to: TcpStream, lose: Option<Arc<AtomicUsize>>) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if let Some(lose) = &lose
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
