//! The policy directory's watcher: looks every `poll` (modification times, no file-system
//! events needed) and activates what changed, off the tick path. It belongs to the command
//! that started it and stops with it: [`Watcher::stop`] ends it between two looks (never in the
//! middle of an activation), and dropping it ends it too.

use super::Lifecycle;
use std::sync::Arc;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The task that watches a lifecycle's policy directory and activates what changed;
/// [`Watcher::stop`] ends it between two looks, dropping it aborts it.
pub struct Watcher {
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl Watcher {
    /// Starts looking at `lifecycle`'s directory every `poll`.
    pub fn start(lifecycle: Arc<Lifecycle>) -> Watcher {
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            let mut interval = tokio::time::interval(lifecycle.config.poll);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    biased;
                    _ = stopped.changed() => break,
                    _ = interval.tick() => {}
                }
                if let Err(e) = lifecycle.sync().await {
                    tracing::error!("policy directory {}: {e:#}", lifecycle.config.dir.display());
                }
            }
        });
        Watcher { stop, task: Some(task) }
    }

    /// Stops looking and waits for a look in progress to finish.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take()
            && let Err(e) = task.await
            && e.is_panic()
        {
            tracing::error!("the policy directory watcher panicked: {e}");
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
