//! The wasmtime engine shared by every component: compiled once per process, with epoch
//! interruption (a ticker thread advances the epoch) so a call that loops is cut off.

use super::PolicyError;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;
use wasmtime::{Config, Engine};

/// Bounds on one policy call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long one call may run before it is interrupted.
    pub deadline: Duration,
    /// The most linear memory one instance may grow to.
    pub memory_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { deadline: Duration::from_millis(500), memory_bytes: 16 << 20 }
    }
}

/// How often the epoch advances; a deadline is counted in these.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The process's wasmtime engine, the limits every policy call runs under, and the thread that
/// advances the epoch. Shared as `Arc<Runtime>`; dropping the last one stops the ticker thread.
pub struct Runtime {
    engine: Engine,
    limits: Limits,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("limits", &self.limits).finish_non_exhaustive()
    }
}

impl Runtime {
    /// An engine with epoch interruption, calls bounded by `limits`, and its epoch ticker thread
    /// (`policy-epoch`) started. Fails when wasmtime refuses the configuration or the thread cannot
    /// start.
    pub fn new(limits: Limits) -> Result<Arc<Runtime>, PolicyError> {
        let mut config = Config::new();
        config.epoch_interruption(true);
        let engine = Engine::new(&config).map_err(|e| PolicyError::Engine { message: format!("{e:#}") })?;
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = {
            let engine = engine.clone();
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("policy-epoch".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(EPOCH_TICK);
                        engine.increment_epoch();
                    }
                })
                .map_err(|e| PolicyError::Engine { message: format!("cannot start the epoch ticker thread: {e}") })?
        };
        Ok(Arc::new(Runtime { engine, limits, stop, ticker: Some(ticker) }))
    }

    /// The engine every component is compiled for and instantiated in.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The bounds every policy call and instance runs under.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The deadline in epoch ticks (at least one).
    pub fn deadline_ticks(&self) -> u64 {
        (self.limits.deadline.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
    }
}
