//! A league's matches played over the [`super::scheduler`]: the pairings on an [`super::Arena`],
//! `jobs` at a time, each result handed back in pairing order as soon as those before it are in.

use super::{Arena, Flow, Pairing, Workers};

/// Plays `pairings` on `arena`, `jobs` at a time (0: one per core), until all are played, `take`
/// says [`Flow::Stop`] or `stop()` (Ctrl-C). `take(k, result)` gets the result of `pairings[k]`,
/// in order; the arena sees pairing `k` as the match [`Pairing::at`]`(k)`.
pub fn play_league<A: Arena>(
    arena: &A,
    pairings: &[Pairing],
    jobs: usize,
    stop: &(dyn Fn() -> bool + Sync),
    take: impl FnMut(usize, Result<A::Played, A::Error>) -> Flow,
) {
    super::run_in_order(0..pairings.len(), Workers::new(jobs), stop, |k| arena.play(&pairings[k].at(k)), take);
}
