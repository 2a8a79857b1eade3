//! The call queue of `aiq mcp` (SPEC §12, "under load the server queues,
//! it does not refuse"): at most `[mcp] max_concurrent` calls run at once,
//! over stdio and HTTP alike; later ones wait first come first served on a
//! fair semaphore. A call is refused as busy only when `[mcp] max_queued`
//! calls wait already, or when it waited longer than `[mcp]
//! queue_timeout_secs`; a cancelled call leaves the queue at once. Never
//! runs a call itself: it hands out the permission to run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::cancel::CancelToken;

/// How many calls run at once, how many may wait, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimits {
    /// Calls running at once (`[mcp] max_concurrent`).
    pub concurrent: usize,
    /// Calls waiting at once (`[mcp] max_queued`).
    pub queued: usize,
    /// How long a call may wait (`[mcp] queue_timeout_secs`).
    pub wait: Duration,
}

/// Why a call did not get to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The queue was full when the call came.
    Full { concurrent: usize, queued: usize },
    /// The call waited as long as it may.
    WaitedTooLong { concurrent: usize, waited: Duration },
    /// The client cancelled the call (or went away) while it waited.
    Cancelled,
}

impl Refused {
    /// The tool error the client gets: what happened and what to do.
    pub fn message(&self) -> String {
        match self {
            Refused::Full { concurrent, queued } => format!(
                "busy: {concurrent} calls are running and {queued} are waiting already (the server's limits, [mcp] max_concurrent and [mcp] max_queued); try again when one has finished"
            ),
            Refused::WaitedTooLong { concurrent, waited } => format!(
                "busy: waited {} s for one of the {concurrent} running calls to finish (the server's limit, [mcp] queue_timeout_secs); try again later",
                waited.as_secs()
            ),
            Refused::Cancelled => "cancelled".to_string(),
        }
    }
}

/// Permission to run one call; the next waiting call runs when it is dropped.
#[derive(Debug)]
pub struct Turn {
    _permit: OwnedSemaphorePermit,
    /// How long the call waited for it.
    pub waited: Duration,
}

/// The queue: a FIFO semaphore for the running calls and a count of the
/// waiting ones.
pub struct CallQueue {
    limits: QueueLimits,
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
}

/// Takes a waiting call off the count however its wait ends (a permit, a
/// refusal, or its future dropped with its HTTP session).
struct Waiting<'q>(&'q AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl CallQueue {
    pub fn new(limits: QueueLimits) -> Self {
        let limits = QueueLimits {
            concurrent: limits.concurrent.max(1),
            ..limits
        };
        CallQueue {
            slots: Arc::new(Semaphore::new(limits.concurrent)),
            waiting: AtomicUsize::new(0),
            limits,
        }
    }

    /// Calls waiting now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// Waits for a turn to run, in arrival order; refused when the queue is
    /// full, when the wait is too long, or when `cancel` fires first.
    pub async fn enter(&self, cancel: &CancelToken) -> Result<Turn, Refused> {
        let started = Instant::now();
        if cancel.is_cancelled() {
            return Err(Refused::Cancelled);
        }
        // A free slot goes to a waiting call first: the semaphore hands a
        // released permit to the oldest waiter, so this cannot jump the queue.
        if let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() {
            return Ok(Turn {
                _permit: permit,
                waited: Duration::ZERO,
            });
        }
        let max = self.limits.queued;
        let entered = self
            .waiting
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < max).then_some(n + 1)
            });
        if entered.is_err() {
            return Err(Refused::Full {
                concurrent: self.limits.concurrent,
                queued: max,
            });
        }
        let _waiting = Waiting(&self.waiting);
        tokio::select! {
            permit = Arc::clone(&self.slots).acquire_owned() => match permit {
                Ok(permit) => Ok(Turn { _permit: permit, waited: started.elapsed() }),
                // The semaphore is never closed; read it as the server stopping.
                Err(_) => Err(Refused::Cancelled),
            },
            _ = cancel.cancelled() => Err(Refused::Cancelled),
            _ = tokio::time::sleep(self.limits.wait) => Err(Refused::WaitedTooLong {
                concurrent: self.limits.concurrent,
                waited: started.elapsed(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(concurrent: usize, queued: usize, wait_ms: u64) -> Arc<CallQueue> {
        Arc::new(CallQueue::new(QueueLimits {
            concurrent,
            queued,
            wait: Duration::from_millis(wait_ms),
        }))
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// Lets every spawned task run as far as it can.
    async fn settle() {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }

    #[test]
    fn calls_beyond_the_limit_wait_and_run_in_arrival_order() {
        runtime().block_on(async {
            let q = queue(2, 64, 60_000);
            let never = CancelToken::new();
            let a = q.enter(&never).await.unwrap();
            let b = q.enter(&never).await.unwrap();
            assert_eq!(a.waited, Duration::ZERO);
            let order = Arc::new(std::sync::Mutex::new(Vec::new()));
            let mut tasks = Vec::new();
            for i in 0..5 {
                let (q, order) = (Arc::clone(&q), Arc::clone(&order));
                tasks.push(tokio::spawn(async move {
                    let turn = q.enter(&CancelToken::new()).await.unwrap();
                    order.lock().unwrap().push(i);
                    settle().await;
                    drop(turn);
                }));
                settle().await;
            }
            assert_eq!(q.waiting(), 5);
            assert!(order.lock().unwrap().is_empty());
            drop(a);
            drop(b);
            for t in tasks {
                t.await.unwrap();
            }
            assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3, 4]);
            assert_eq!(q.waiting(), 0);
        });
    }

    #[test]
    fn a_full_queue_refuses_and_says_so() {
        runtime().block_on(async {
            let q = queue(1, 2, 60_000);
            let _running = q.enter(&CancelToken::new()).await.unwrap();
            let mut waiting = Vec::new();
            for _ in 0..2 {
                let q = Arc::clone(&q);
                waiting.push(tokio::spawn(async move {
                    q.enter(&CancelToken::new()).await.map(|_| ())
                }));
            }
            settle().await;
            let refused = q.enter(&CancelToken::new()).await.unwrap_err();
            assert_eq!(
                refused,
                Refused::Full {
                    concurrent: 1,
                    queued: 2
                }
            );
            assert_eq!(
                refused.message(),
                "busy: 1 calls are running and 2 are waiting already (the server's limits, [mcp] max_concurrent and [mcp] max_queued); try again when one has finished"
            );
            for w in waiting {
                w.abort();
            }
        });
    }

    #[test]
    fn a_call_that_waits_too_long_is_refused_and_says_so() {
        runtime().block_on(async {
            let q = queue(1, 4, 50);
            let _running = q.enter(&CancelToken::new()).await.unwrap();
            let refused = q.enter(&CancelToken::new()).await.unwrap_err();
            let Refused::WaitedTooLong { concurrent, waited } = &refused else {
                panic!("{refused:?}");
            };
            assert_eq!(*concurrent, 1);
            assert!(*waited >= Duration::from_millis(50));
            assert!(refused
                .message()
                .starts_with("busy: waited 0 s for one of the 1 running calls to finish (the server's limit, [mcp] queue_timeout_secs)"));
            assert_eq!(q.waiting(), 0);
        });
    }

    #[test]
    fn a_cancelled_call_leaves_the_queue_and_the_next_one_moves_up() {
        runtime().block_on(async {
            let q = queue(1, 1, 60_000);
            let running = q.enter(&CancelToken::new()).await.unwrap();
            let cancel = CancelToken::new();
            let first = {
                let (q, cancel) = (Arc::clone(&q), cancel.clone());
                tokio::spawn(async move { q.enter(&cancel).await.map(|_| ()) })
            };
            settle().await;
            assert_eq!(q.waiting(), 1);
            cancel.cancel();
            assert_eq!(first.await.unwrap(), Err(Refused::Cancelled));
            assert_eq!(q.waiting(), 0);
            // Its place is free: another call may wait, and runs next.
            let second = {
                let q = Arc::clone(&q);
                tokio::spawn(async move { q.enter(&CancelToken::new()).await.map(|_| ()) })
            };
            settle().await;
            assert_eq!(q.waiting(), 1);
            drop(running);
            assert_eq!(second.await.unwrap(), Ok(()));
            // A dropped wait (its HTTP session ended) leaves the queue too.
            let _running = q.enter(&CancelToken::new()).await.unwrap();
            let dropped = {
                let q = Arc::clone(&q);
                tokio::spawn(async move { q.enter(&CancelToken::new()).await.map(|_| ()) })
            };
            settle().await;
            assert_eq!(q.waiting(), 1);
            dropped.abort();
            settle().await;
            assert_eq!(q.waiting(), 0);
        });
    }
}
