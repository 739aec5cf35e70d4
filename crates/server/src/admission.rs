//! How many requests generate at once, and how many may wait.
//!
//! An engine has a fixed number of sequences it can decode together (llama.cpp's
//! `--parallel`). Requests beyond that wait their turn, up to a bounded queue; a request
//! that finds the queue full is answered 503 at once rather than left hanging, so a client
//! (the OpenAI SDKs retry 503 with back-off) learns the server is busy; one that waits
//! longer than the queue's time limit is answered 503 then. The permit moves
//! with the generation onto its thread and is released when the engine returns, not when
//! the HTTP response ends, so a cancelled stream frees its slot as soon as the engine stops.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::Failure;

/// The right to run one generation.
pub type Permit = OwnedSemaphorePermit;

/// Generation slots and the queue in front of them.
#[derive(Debug)]
pub struct Admission {
    slots: Arc<Semaphore>,
    parallel: usize,
    waiting: AtomicUsize,
    max_waiting: usize,
    max_wait: Duration,
}

impl Admission {
    /// `parallel` generations at once (at least one), `max_waiting` requests queued, each
    /// for at most `max_wait`.
    pub fn new(parallel: usize, max_waiting: usize, max_wait: Duration) -> Self {
        Admission {
            slots: Arc::new(Semaphore::new(parallel.max(1))),
            parallel: parallel.max(1),
            waiting: AtomicUsize::new(0),
            max_waiting,
            max_wait,
        }
    }

    /// A slot: at once if one is free, after waiting if the queue has room (503 after
    /// waiting too long), else 503.
    pub async fn admit(&self) -> Result<Permit, Failure> {
        if let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() {
            return Ok(permit);
        }
        let _place = self.queue()?;
        let slot = Arc::clone(&self.slots).acquire_owned();
        match tokio::time::timeout(self.max_wait, slot).await {
            Ok(Ok(permit)) => Ok(permit),
            // The semaphore is never closed; treat it like a full queue if it were.
            Ok(Err(_)) => Err(Failure::overloaded()),
            Err(_) => Err(Failure::queue_timeout(self.max_wait)),
        }
    }

    /// Requests waiting for a slot.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// Slots in use.
    pub fn busy(&self) -> usize {
        self.parallel.saturating_sub(self.slots.available_permits())
    }

    /// Slots in all.
    pub fn slots(&self) -> usize {
        self.parallel
    }

    /// A place in the queue, given back when dropped (served or abandoned).
    fn queue(&self) -> Result<QueuePlace<'_>, Failure> {
        let taken = self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |waiting| {
                (waiting < self.max_waiting).then_some(waiting + 1)
            });
        match taken {
            Ok(_) => Ok(QueuePlace(&self.waiting)),
            Err(_) => Err(Failure::overloaded()),
        }
    }
}

struct QueuePlace<'a>(&'a AtomicUsize);

impl Drop for QueuePlace<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn beyond_slots_and_queue_is_refused() {
        let admission = Arc::new(Admission::new(1, 1, Duration::from_secs(60)));
        let running = admission.admit().await.expect("a free slot");
        let queued = tokio::spawn({
            let admission = Arc::clone(&admission);
            async move { admission.admit().await.map(drop) }
        });
        tokio::task::yield_now().await;
        while admission.waiting.load(Ordering::Acquire) == 0 {
            tokio::task::yield_now().await;
        }
        let refused = admission.admit().await.expect_err("the queue is full");
        assert_eq!(refused.status, axum::http::StatusCode::SERVICE_UNAVAILABLE);
        drop(running);
        queued
            .await
            .expect("joined")
            .expect("served after the first");
        assert_eq!(admission.waiting.load(Ordering::Acquire), 0);
        assert!(admission.admit().await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_waits_at_most_the_queues_limit() {
        let admission = Admission::new(1, 4, Duration::from_secs(30));
        let _running = admission.admit().await.expect("a free slot");
        let refused = admission
            .admit()
            .await
            .expect_err("no slot within the limit");
        assert_eq!(refused.status, axum::http::StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.error.code.as_deref(), Some("queue_timeout"));
        assert_eq!(admission.waiting(), 0);
    }
}
