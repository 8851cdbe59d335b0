//! A server that accepts connections and never answers: the failure mode that makes clients
//! without timeouts wait forever.

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub struct HungServer {
    pub port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HungServer {
    pub fn start() -> HungServer {
        HungServer::start_on(0)
    }

    /// On a given port: a killed server's port, so that its clients meet a hang.
    pub fn start_on(port: u16) -> HungServer {
        let listener = TcpListener::bind(("127.0.0.1", port)).expect("binding the hung server");
        let port = listener.local_addr().expect("local addr").port();
        listener.set_nonblocking(true).expect("nonblocking listener");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut held = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => held.push(stream),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        HungServer { port, stop, thread: Some(thread) }
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for HungServer {
    /// Stops listening and drops every held connection before returning, so the port is
    /// free for the real server again.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
