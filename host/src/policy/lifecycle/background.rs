//! The lifecycle's work that must not run on the tick's thread or while the tick holds the
//! policy: recording a rollback in the policy state, and the shadow version's step (a second
//! policy call and two file writes). One thread runs the jobs in the order they were given,
//! so the shadow's log keeps the ticks' order; it ends when the lifecycle is dropped, after
//! the jobs already given.

use std::sync::mpsc;
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send>;

pub struct Background {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    pub fn start() -> Background {
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("policy-background".into())
            .spawn(move || {
                for job in queue {
                    job();
                }
            })
            .expect("the policy background thread starts");
        Background { jobs: Some(jobs), thread: Some(thread) }
    }

    /// Runs `job` after the jobs given before it.
    pub fn run(&self, job: impl FnOnce() + Send + 'static) {
        if let Some(jobs) = &self.jobs
            && jobs.send(Box::new(job)).is_err()
        {
            tracing::error!("the policy background thread has stopped: a rollback record or shadow step was dropped");
        }
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
            && thread.join().is_err()
        {
            tracing::error!("the policy background thread panicked");
        }
    }
}
