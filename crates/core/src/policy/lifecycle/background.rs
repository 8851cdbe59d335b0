//! The lifecycle's work that must not run on the tick's thread or while the tick holds the
//! policy: recording a rollback in the policy state, and the shadow version's step (a second
//! policy call and two file writes). One thread runs the jobs in the order they were given,
//! so the shadow's log keeps the ticks' order. The queue is bounded: a shadow step that finds
//! it full is dropped and counted (a slow shadow never holds the sentinel back), a rollback
//! record waits for room. A job that panics is logged and the thread goes on. The thread ends
//! when the lifecycle is dropped, after the jobs already given.

use std::sync::mpsc;
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send>;

/// Jobs waiting at most; beyond, shadow steps are dropped.
const QUEUE: usize = 64;

pub struct Background {
    jobs: Option<mpsc::SyncSender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    pub fn start() -> Background {
        let (jobs, queue) = mpsc::sync_channel::<Job>(QUEUE);
        let thread = std::thread::Builder::new()
            .name("policy-background".into())
            .spawn(move || {
                for job in queue {
                    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).is_err() {
                        tracing::error!("a policy background job panicked (a rollback record or a shadow step was lost)");
                    }
                }
            })
            .expect("the policy background thread starts");
        Background { jobs: Some(jobs), thread: Some(thread) }
    }

    /// Runs `job` after the jobs given before it, waiting for room in the queue.
    pub fn run(&self, job: impl FnOnce() + Send + 'static) {
        if let Some(jobs) = &self.jobs
            && jobs.send(Box::new(job)).is_err()
        {
            tracing::error!("the policy background thread has stopped: a rollback record was not written");
        }
    }

    /// Runs `job` after the jobs given before it if there is room now; false when the queue
    /// is full (or the thread has stopped) and the job was dropped.
    pub fn try_run(&self, job: impl FnOnce() + Send + 'static) -> bool {
        self.jobs.as_ref().is_some_and(|jobs| jobs.try_send(Box::new(job)).is_ok())
    }

    /// Waits until every job given so far has run (never call it from the tick).
    pub fn settle(&self) {
        let (done, finished) = mpsc::channel();
        self.run(move || {
            let _ = done.send(());
        });
        let _ = finished.recv();
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take()
            && thread.thread().id() != std::thread::current().id()
            && thread.join().is_err()
        {
            tracing::error!("the policy background thread panicked");
        }
    }
}
