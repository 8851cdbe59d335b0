//! The policy directory's watcher: looks every `poll` (modification times, no file-system
//! events needed) and activates what changed, off the tick path. It belongs to the command
//! that started it and stops with it: [`Watcher::stop`] ends it between two looks (never in the
//! middle of an activation), and dropping it ends it too.

use super::Lifecycle;
use std::sync::Arc;
use tokio::sync::watch;
use tokio::task::JoinHandle;

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

#[cfg(test)]
mod tests {
    use super::Watcher;
    use crate::policy::lifecycle::tests::{START, config, install, trace};
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stopped_watcher_lets_go_of_the_lifecycle_and_activates_nothing_more() {
        let dir = tempfile::tempdir().unwrap();
        let policies = dir.path().join("policies");
        install(&policies, &["capacity-policy-1.0.0"]);
        trace(dir.path(), &[40.0; 3]);
        let (sentinel, _) = crate::setup::sentinel(&config(dir.path(), ""), START, None).await.unwrap();
        let lifecycle = sentinel.policy.lifecycle().cloned().unwrap();
        let before = Arc::strong_count(&lifecycle);

        let watcher = Watcher::start(lifecycle.clone());
        install(&policies, &["capacity-policy-2.0.0"]);
        let started = std::time::Instant::now();
        while lifecycle.active_version().0 != "2.0.0" {
            assert!(started.elapsed() < Duration::from_secs(20), "the watcher never activated 2.0.0");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        watcher.stop().await;
        assert_eq!(Arc::strong_count(&lifecycle), before, "the stopped watcher holds the lifecycle no more");

        // Dropping a watcher stops it too.
        drop(Watcher::start(lifecycle.clone()));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(Arc::strong_count(&lifecycle), before, "a dropped watcher holds the lifecycle no more");
    }
}
