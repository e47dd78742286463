//! The one scheduler of tournaments: numbered tasks (a league's matches, an A/B test's pairs)
//! on worker threads, their results handed back **in task order**, whatever order they finish
//! in, so that what is built from them (a table, a sequential test) does not depend on the number
//! of threads. Leagues, A/B tests, in-process experiments and the Ray backend all run through it;
//! it is the only place that starts their worker threads.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{mpsc, Condvar, Mutex};
use std::time::Duration;

/// How many tasks run at once, and how far ahead of the results read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workers {
    /// Tasks at once (at least 1; never more threads than tasks).
    pub jobs: usize,
    /// A task `k` starts only when `k < read + ahead`, `read` the tasks whose results were taken
    /// in order: when a sequential test decides, at most `ahead` tasks are in progress. `None`:
    /// no limit.
    pub ahead: Option<usize>,
}

impl Workers {
    /// `jobs` at a time (0: one per core), as far ahead as they like.
    pub fn new(jobs: usize) -> Workers {
        let jobs = match jobs {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        Workers { jobs, ahead: None }
    }

    /// No task more than `jobs` ahead of the results read.
    pub fn in_step(self) -> Workers {
        Workers { ahead: Some(self.jobs.max(1)), ..self }
    }
}

/// What the taker of results wants next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on.
    Go,
    /// Start no more tasks (those in progress finish, and their results are still taken).
    Stop,
}

/// Runs `play(k)` for each task `k` of `tasks` on `workers.jobs` threads and hands each result to
/// `take(k, result)` on the calling thread, in task order. Every task that ran reaches `take`
/// exactly once: when the run stops (`take` said [`Flow::Stop`], or `stop()` turned true: Ctrl-C)
/// no new task starts, and those that finished after a gap (an unfinished task before them) are
/// taken last, still in order.
pub fn run_in_order<T: Send>(
    tasks: Range<usize>,
    workers: Workers,
    stop: &(dyn Fn() -> bool + Sync),
    play: impl Fn(usize) -> T + Sync,
    mut take: impl FnMut(usize, T) -> Flow,
) {
    struct Gate {
        next: usize,
        read: usize,
        stopped: bool,
    }
    if tasks.is_empty() {
        return;
    }
    let threads = workers.jobs.clamp(1, tasks.len());
    let gate = Mutex::new(Gate { next: tasks.start, read: tasks.start, stopped: false });
    let moved = Condvar::new();
    let (tx, rx) = mpsc::channel::<(usize, T)>();
    let play = &play;
    // The workers stop when the caller's thread would (a stand stops one of its tournaments).
    let stop_scope = crate::runner::interrupt::scope();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let tx = tx.clone();
            let (gate, moved, end) = (&gate, &moved, tasks.end);
            let stop_scope = stop_scope.clone();
            scope.spawn(move || {
                crate::runner::interrupt::within(stop_scope, || loop {
                    let k = {
                        let mut g = gate.lock().unwrap_or_else(|e| e.into_inner());
                        loop {
                            if g.stopped || stop() || g.next >= end {
                                return;
                            }
                            if workers.ahead.is_none_or(|a| g.next < g.read + a) {
                                g.next += 1;
                                break g.next - 1;
                            }
                            // Ctrl-C does not wake the condition variable: look every 100 ms.
                            g = moved.wait_timeout(g, Duration::from_millis(100)).unwrap_or_else(|e| e.into_inner()).0;
                        }
                    };
                    if tx.send((k, play(k))).is_err() {
                        return;
                    }
                })
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, T> = BTreeMap::new();
        let mut read = tasks.start;
        for (k, result) in rx.iter() {
            pending.insert(k, result);
            let mut halt = false;
            while let Some(result) = pending.remove(&read) {
                read += 1;
                halt |= take(read - 1, result) == Flow::Stop;
            }
            let mut g = gate.lock().unwrap_or_else(|e| e.into_inner());
            g.read = read;
            g.stopped |= halt;
            drop(g);
            moved.notify_all();
        }
        // Finished after a gap: taken all the same, in order.
        for (k, result) in pending {
            take(k, result);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn results_come_in_task_order_and_no_task_runs_past_the_window() {
        for jobs in [1, 2, 5] {
            let started = AtomicUsize::new(0);
            let mut seen = Vec::new();
            // Later tasks finish first; the taker stops at task 6.
            run_in_order(
                0..100,
                Workers::new(jobs).in_step(),
                &|| false,
                |k| {
                    started.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(((7 - k % 7) * 2) as u64));
                    k * 10
                },
                |k, v| {
                    seen.push((k, v));
                    if k == 6 {
                        Flow::Stop
                    } else {
                        Flow::Go
                    }
                },
            );
            let keys: Vec<usize> = seen.iter().map(|s| s.0).collect();
            assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
            assert_eq!(&keys[..7], &[0, 1, 2, 3, 4, 5, 6]);
            assert!(seen.iter().all(|&(k, v)| v == k * 10));
            // Task 6 was read when at most `jobs` tasks past it had started.
            assert!(started.load(Ordering::SeqCst) <= 7 + jobs, "jobs {jobs}: {}", started.load(Ordering::SeqCst));
            assert_eq!(keys.len(), started.load(Ordering::SeqCst), "every task that ran was taken");
        }
    }

    #[test]
    fn a_stop_request_starts_nothing_more() {
        let mut taken = 0;
        run_in_order(
            0..50,
            Workers::new(3),
            &|| true,
            |k| k,
            |_, _| {
                taken += 1;
                Flow::Go
            },
        );
        assert_eq!(taken, 0);
    }
}
