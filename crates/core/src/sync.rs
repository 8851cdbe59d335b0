//! The one rule for the sentinel's locks, written where they are made: a lock poisoned by a
//! panic in an earlier holder is taken anyway, said once in the log, and cleared.
//!
//! Why: every value the sentinel keeps behind a lock is replaced or changed whole inside one
//! critical section (the last good policy, the versions seen, a cached key set, a connection
//! slot, the dead-letter files open, the metrics registry), so a panic inside one leaves a value
//! an earlier or later holder could have left. Refusing the lock instead would stop every later
//! tick, pin and probe of the process over one panic that is already logged where it happened.
//! Every `std::sync::Mutex` of the sentinel's crates is a [`Lock`]; tokio's mutexes are not
//! poisoned.

use std::sync::{Mutex, MutexGuard};

/// A mutex taken even when poisoned (see the module's rule), named for the log.
pub struct Lock<T> {
    name: &'static str,
    inner: Mutex<T>,
}

impl<T> Lock<T> {
    /// A lock named `name` (what it guards, as the log says it) around `value`.
    pub const fn new(name: &'static str, value: T) -> Lock<T> {
        Lock { name, inner: Mutex::new(value) }
    }

    /// The value, locked. A poisoned lock is taken, logged as a warning naming the lock, and
    /// cleared, so one panic is said once.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.inner.lock().unwrap_or_else(|poisoned| {
            tracing::warn!(
                lock = self.name,
                "a panic in an earlier holder poisoned the {} lock; taking it (its value is written whole)",
                self.name
            );
            self.inner.clear_poison();
            poisoned.into_inner()
        })
    }
}

impl<T> std::fmt::Debug for Lock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lock").field("name", &self.name).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::Lock;
    use std::sync::Arc;

    #[test]
    fn a_lock_poisoned_by_a_panicking_holder_is_taken_with_its_value_and_cleared() {
        let lock = Arc::new(Lock::new("test value", vec![1]));
        let holder = lock.clone();
        let panicked = std::thread::spawn(move || {
            let mut value = holder.lock();
            value.push(2);
            panic!("a holder's panic");
        })
        .join();
        assert!(panicked.is_err());
        assert!(lock.inner.is_poisoned());
        assert_eq!(*lock.lock(), [1, 2], "the value as the holder left it");
        assert!(!lock.inner.is_poisoned(), "cleared: the next holder is not warned again");
        lock.lock().push(3);
        assert_eq!(*lock.lock(), [1, 2, 3]);
    }
}
