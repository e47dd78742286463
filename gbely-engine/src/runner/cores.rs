//! The cores that agent processes think on, shared by the matches of a league.
//!
//! An agent on a 2 s clock must never wait for a CPU while its clock runs, yet a league should
//! keep every core busy: while one match resolves its round, writes observations or waits for
//! its slower agent, another match's agents can think. So matches may outnumber cores, and each
//! agent process is sent its observation only once it holds a core ([`CoreGate::acquire`]); it
//! gives the core back the moment its answer arrives (the reader thread drops the
//! [`CoreLease`]), when it stops, or when its time is up.
//!
//! Deadlock-free: a lease is given back by the agent's own answer (another thread than the
//! match's, which may be waiting for a second core), and a lease whose time limit has passed no
//! longer counts, so agents that hang cannot hold every core while their matches wait for one.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The cores agents may think on.
#[derive(Debug)]
pub struct CoreGate {
    cores: usize,
    held: Mutex<Held>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct Held {
    next_id: u64,
    /// The leases out: id, when it stops counting (its agent's deadline), if ever, and its slot.
    leases: Vec<(u64, Option<Instant>, usize)>,
}

impl Held {
    fn forget_expired(&mut self, now: Instant) {
        self.leases.retain(|&(_, until, _)| until.is_none_or(|u| u > now));
    }
}

/// A core held by one agent for one round; given back when dropped.
#[derive(Debug)]
pub struct CoreLease {
    gate: Arc<CoreGate>,
    id: u64,
    slot: usize,
}

impl CoreLease {
    /// Which of the gate's cores this is, `0..cores`: no two leases out hold the same slot (the
    /// sandbox confines the agent to the CPU of its slot).
    pub fn slot(&self) -> usize {
        self.slot
    }
}

impl Drop for CoreLease {
    fn drop(&mut self) {
        let mut held = self.gate.held.lock().unwrap_or_else(|e| e.into_inner());
        held.leases.retain(|&(id, _, _)| id != self.id);
        drop(held);
        self.gate.freed.notify_one();
    }
}

impl CoreGate {
    /// A gate of `cores` cores (at least one).
    pub fn new(cores: usize) -> Arc<CoreGate> {
        Arc::new(CoreGate { cores: cores.max(1), held: Mutex::new(Held::default()), freed: Condvar::new() })
    }

    /// How many cores the gate shares out.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// Waits for a free core, for an agent whose answer is due within `limit` (the lease stops
    /// counting then). `None` when `give_up` says so while waiting (Ctrl-C).
    pub fn acquire(self: &Arc<Self>, limit: Option<Duration>, give_up: &dyn Fn() -> bool) -> Option<CoreLease> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            held.forget_expired(now);
            if held.leases.len() < self.cores {
                let id = held.next_id;
                held.next_id += 1;
                let slot = (0..self.cores).find(|s| held.leases.iter().all(|l| l.2 != *s)).unwrap_or(0);
                held.leases.push((id, limit.map(|l| now + l), slot));
                return Some(CoreLease { gate: self.clone(), id, slot });
            }
            if give_up() {
                return None;
            }
            // Woken by a lease given back; the timeout also lets expiries and Ctrl-C be seen.
            held = self.freed.wait_timeout(held, Duration::from_millis(20)).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Leases out now (for tests and reports).
    pub fn in_use(&self) -> usize {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.forget_expired(Instant::now());
        held.leases.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_more_leases_than_cores_and_a_lease_given_back_lets_the_next_in() {
        let gate = CoreGate::new(2);
        let a = gate.acquire(None, &|| false).unwrap();
        let _b = gate.acquire(None, &|| false).unwrap();
        assert_eq!(gate.in_use(), 2);
        assert_eq!((a.slot(), _b.slot()), (0, 1), "two leases out never share a core");
        // A third waits until one is given back (from another thread, as an answer would).
        let g = gate.clone();
        let waiter = std::thread::spawn(move || g.acquire(None, &|| false).map(|_| Instant::now()));
        std::thread::sleep(Duration::from_millis(100));
        let released = Instant::now();
        drop(a);
        let got = waiter.join().unwrap().unwrap();
        assert!(got >= released);
        // The slot given back is the one lent next.
        let c = gate.acquire(None, &|| false).unwrap();
        assert_eq!(c.slot(), 0);
    }

    #[test]
    fn an_expired_lease_stops_counting_and_waiting_can_be_given_up() {
        let gate = CoreGate::new(1);
        let _hung = gate.acquire(Some(Duration::from_millis(50)), &|| false).unwrap();
        let t = Instant::now();
        let next = gate.acquire(None, &|| false);
        assert!(next.is_some() && t.elapsed() >= Duration::from_millis(40));
        // The gate is full again (no expiry): a waiter that gives up gets nothing.
        assert!(gate.acquire(None, &|| true).is_none());
    }
}
