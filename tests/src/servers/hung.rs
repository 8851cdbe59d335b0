//! A server that accepts connections and never answers: the failure mode that makes clients
//! without timeouts wait forever.

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub struct HungServer {
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl HungServer {
    pub fn start() -> HungServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding the hung server");
        let port = listener.local_addr().expect("local addr").port();
        listener.set_nonblocking(true).expect("nonblocking listener");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => held.push(stream),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        HungServer { port, stop }
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for HungServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
