//! The replicas of a remote engine: which one a generation goes to, how many each runs at
//! once, and which are fit to be sent anything.
//!
//! - **Affinity.** A prompt that continues an earlier one (a conversation's next turn)
//!   goes to the replica that was sent the longest such earlier prompt
//!   ([`super::affinity`]), so that replica's prompt cache is reused; otherwise, and when
//!   that replica is full while another has room, to the least busy replica (fewest
//!   generations in flight, then the one used longest ago). A shared system prompt alone
//!   does not pin every conversation to one replica.
//! - **Capacity.** Each replica runs at most its capacity (llama-server's slots, or
//!   `--engine-capacity`); more wait for a place there.
//! - **Health.** A replica that refuses a connection or answers 5xx is ejected at once;
//!   a health check every few seconds ejects the silent ones and re-admits the recovered.
//!   With no healthy replica a generation fails as unavailable (503) instead of waiting.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::affinity::{block_hashes, PrefixIndex};
use super::http::Http;
use crate::error::unavailable_error;
use crate::EngineError;

/// Prompts each replica's index remembers.
const INDEX_PROMPTS: usize = 1 << 14;

/// One upstream server.
#[derive(Debug)]
pub(crate) struct Replica {
    pub base: String,
    healthy: AtomicBool,
    in_flight: AtomicUsize,
    last_used: AtomicU64,
    capacity: usize,
    places: Arc<Semaphore>,
    index: Mutex<PrefixIndex>,
}

impl Replica {
    pub fn new(base: String, capacity: usize, healthy: bool) -> Replica {
        let capacity = capacity.max(1);
        Replica {
            base,
            healthy: AtomicBool::new(healthy),
            in_flight: AtomicUsize::new(0),
            last_used: AtomicU64::new(0),
            capacity,
            places: Arc::new(Semaphore::new(capacity)),
            index: Mutex::new(PrefixIndex::new(INDEX_PROMPTS)),
        }
    }

    pub fn is_healthy(&self) -> bool {
        self.healthy.load(Ordering::Acquire)
    }

    /// Marks the replica fit or unfit, saying so in the log when that changes.
    pub fn set_healthy(&self, healthy: bool, why: &str) {
        if self.healthy.swap(healthy, Ordering::AcqRel) != healthy {
            if healthy {
                tracing::info!(replica = %self.base, "replica re-admitted: {why}");
            } else {
                tracing::warn!(replica = %self.base, "replica ejected: {why}");
            }
        }
    }

    fn has_room(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) < self.capacity
    }

    fn index(&self) -> std::sync::MutexGuard<'_, PrefixIndex> {
        self.index.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A generation's hold on a place at a replica, given back when dropped.
pub(crate) struct Place {
    pub replica: Arc<Replica>,
    _permit: OwnedSemaphorePermit,
    _counted: InFlight,
}

/// A generation counted in its replica's `in_flight` from when it is sent there, waiting
/// for room included, until it is dropped (done, or abandoned while waiting).
struct InFlight(Arc<Replica>);

impl InFlight {
    fn new(replica: &Arc<Replica>) -> InFlight {
        replica.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(Arc::clone(replica))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The replicas of one engine.
#[derive(Debug)]
pub(crate) struct Pool {
    pub replicas: Vec<Arc<Replica>>,
    clock: AtomicU64,
}

impl Pool {
    pub fn new(replicas: Vec<Replica>) -> Pool {
        Pool {
            replicas: replicas.into_iter().map(Arc::new).collect(),
            clock: AtomicU64::new(0),
        }
    }

    /// The base URL of a healthy replica, if any.
    pub fn any_healthy(&self) -> Option<String> {
        self.replicas
            .iter()
            .find(|replica| replica.is_healthy())
            .map(|replica| replica.base.clone())
    }

    /// Generations the replicas run at once, together.
    pub fn capacity(&self) -> usize {
        self.replicas.iter().map(|replica| replica.capacity).sum()
    }

    /// A place for `prompt` at the best healthy replica not in `excluded` (see the module
    /// docs), waiting for room there if it is full.
    pub async fn place(
        &self,
        prompt: &str,
        excluded: &[usize],
    ) -> Result<(usize, Place), EngineError> {
        let blocks = block_hashes(prompt);
        let chosen = self.choose(&blocks, excluded)?;
        let replica = Arc::clone(&self.replicas[chosen]);
        replica.index().record(&blocks);
        let counted = InFlight::new(&replica);
        replica.last_used.store(
            self.clock.fetch_add(1, Ordering::AcqRel) + 1,
            Ordering::Release,
        );
        let permit = Arc::clone(&replica.places).acquire_owned().await;
        let place = Place {
            replica,
            _permit: permit.map_err(|_| unavailable_error("the replica closed"))?,
            _counted: counted,
        };
        Ok((chosen, place))
    }

    fn choose(&self, blocks: &[u64], excluded: &[usize]) -> Result<usize, EngineError> {
        let candidates: Vec<usize> = (0..self.replicas.len())
            .filter(|n| !excluded.contains(n) && self.replicas[*n].is_healthy())
            .collect();
        let least_busy = candidates.iter().copied().min_by_key(|&n| {
            let replica = &self.replicas[n];
            (
                replica.in_flight.load(Ordering::Acquire),
                replica.last_used.load(Ordering::Acquire),
            )
        });
        let Some(least_busy) = least_busy else {
            return Err(unavailable_error(self.why_none(excluded)));
        };
        let best = candidates
            .iter()
            .map(|&n| (self.replicas[n].index().matched(blocks), n))
            .max_by_key(|&(matched, n)| (matched, std::cmp::Reverse(n)));
        Ok(match best {
            Some((matched, n))
                if matched > 0
                    && (self.replicas[n].has_room() || !self.replicas[least_busy].has_room()) =>
            {
                n
            }
            _ => least_busy,
        })
    }

    fn why_none(&self, excluded: &[usize]) -> String {
        let names: Vec<&str> = self.replicas.iter().map(|r| r.base.as_str()).collect();
        if excluded.is_empty() {
            format!("every replica is unhealthy ({})", names.join(", "))
        } else {
            format!(
                "the request failed, and no other replica is healthy ({})",
                names.join(", ")
            )
        }
    }

    /// Checks every replica's health (a 200 at `health_path`) every `interval` while the
    /// pool lives.
    pub fn watch(pool: &Arc<Pool>, http: &Http, health_path: &'static str, interval: Duration) {
        let pool = Arc::downgrade(pool);
        let http = http.with_idle(interval.min(Duration::from_secs(5)));
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            // The first tick is now, and every replica was just described.
            ticks.tick().await;
            loop {
                ticks.tick().await;
                let Some(pool) = pool.upgrade() else { return };
                for replica in &pool.replicas {
                    let url = format!("{}{health_path}", replica.base);
                    let healthy = http.get_ok(&url).await;
                    replica.set_healthy(
                        healthy,
                        if healthy {
                            "health check passed"
                        } else {
                            "health check failed"
                        },
                    );
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EngineErrorKind;

    fn pool(replicas: usize, capacity: usize) -> Pool {
        Pool::new(
            (0..replicas)
                .map(|n| Replica::new(format!("http://replica-{n}"), capacity, true))
                .collect(),
        )
    }

    fn conversation(name: &str, turns: usize) -> String {
        let mut prompt = format!(
            "<|im_start|>system\n{}<|im_end|>\n",
            "You are helpful. ".repeat(30)
        );
        for turn in 0..turns {
            prompt.push_str(&format!(
                "<|im_start|>user\n{name} asks {} {turn}<|im_end|>\n",
                "more ".repeat(60)
            ));
        }
        prompt
    }

    #[tokio::test]
    async fn a_next_turn_goes_where_the_first_went() {
        let pool = pool(3, 4);
        let mut first = Vec::new();
        for name in ["ann", "bob", "cy"] {
            let (n, place) = pool
                .place(&conversation(name, 1), &[])
                .await
                .expect("placed");
            first.push(n);
            drop(place);
        }
        // A shared system prompt alone does not pin new conversations to one replica.
        let mut spread = first.clone();
        spread.sort();
        spread.dedup();
        assert_eq!(spread.len(), 3, "{first:?}");
        for (name, expected) in ["cy", "ann", "bob"]
            .into_iter()
            .zip([first[2], first[0], first[1]])
        {
            let (n, _place) = pool
                .place(&conversation(name, 2), &[])
                .await
                .expect("placed");
            assert_eq!(n, expected, "{name}");
        }
    }

    #[tokio::test]
    async fn unhealthy_and_excluded_replicas_are_skipped() {
        let pool = pool(2, 1);
        pool.replicas[0].set_healthy(false, "test");
        let (n, _place) = pool.place("prompt", &[]).await.expect("placed");
        assert_eq!(n, 1);
        let none = pool.place("prompt", &[1]).await.err().expect("none left");
        assert!(
            matches!(none.kind(), EngineErrorKind::Unavailable),
            "{none:?}"
        );
    }

    #[tokio::test]
    async fn a_generation_abandoned_while_waiting_for_room_is_no_longer_counted() {
        let pool = pool(1, 1);
        let (_, held) = pool.place("a", &[]).await.expect("placed");
        let waiting = tokio::time::timeout(Duration::from_millis(20), pool.place("b", &[])).await;
        assert!(waiting.is_err(), "the replica is full");
        assert_eq!(pool.replicas[0].in_flight.load(Ordering::Acquire), 1);
        drop(held);
        assert_eq!(pool.replicas[0].in_flight.load(Ordering::Acquire), 0);
    }

    #[tokio::test]
    async fn a_full_replica_gives_way_to_one_with_room() {
        let pool = pool(2, 1);
        let prompt = conversation("ann", 2);
        let (n, held) = pool.place(&prompt, &[]).await.expect("placed");
        let (m, _other) = pool.place(&prompt, &[]).await.expect("placed");
        assert_ne!(n, m, "the affine replica is full, the other has room");
        drop(held);
    }
}
