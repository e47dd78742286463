//! Playing a whole match: one [`Player`] per seat (in-process or agent processes) in a loop over
//! a [`Session`], recording the replay in memory or streaming it to a file.

use std::sync::Arc;

use gbely_rules::Observation;
use gbely_world::Map;

use crate::recorder::ReplayWriter;
use crate::runner::interrupt;
use crate::runner::player::{Player, PlayerAnswer};
use crate::session::{MatchRecord, RoundRecord, Session};
use crate::sim::{Match, MatchConfig, RoundReport};

/// Options of [`play`].
#[derive(Clone, Copy, Debug, Default)]
pub struct PlayOptions {
    /// The match's settings (rounds).
    pub config: MatchConfig,
    /// Build the replay document in memory while playing (see [`play_to`] to stream it to a file).
    pub record: bool,
}

/// Watches a match round by round (progress bars, logs, the live page).
pub trait Observer {
    /// Called after each round is resolved, with the match after it and what happened in it.
    fn round_done(&mut self, _m: &Match, _report: &RoundReport) {}

    /// Whether to call [`Observer::round_recorded`]: the session then keeps each round's record,
    /// also when the match is not recorded ([`Session::keep_rounds`]).
    fn wants_records(&self) -> bool {
        false
    }

    /// Called after [`Observer::round_done`] when [`Observer::wants_records`], with the round as
    /// its replay records it: the seats' answers (what each commanded, its discards' items, its
    /// violation), and their notes within the replay's budget.
    fn round_recorded(&mut self, _m: &Match, _report: &RoundReport, _record: &RoundRecord<'_>) {}
}

impl Observer for () {}

/// Plays a whole match: one player per seat, in seat order.
pub fn play(
    map: Arc<Map>,
    players: &mut [&mut dyn Player],
    opts: PlayOptions,
    observer: &mut dyn Observer,
) -> MatchRecord {
    let mut session = Session::new(map, opts.config, players.iter().map(|p| p.name()).collect());
    for (s, p) in players.iter().enumerate() {
        session.set_builtin(s as u8, p.builtin());
    }
    if opts.record {
        session.record();
    }
    play_session(session, players, observer)
}

/// Plays a whole match and streams its replay to `writer` as rounds finish (memory does not grow
/// with the match). When the match is interrupted the replay still ends properly, marked
/// `interrupted`; a write error is reported in [`MatchRecord::replay_written`], not raised.
pub fn play_to(
    map: Arc<Map>,
    players: &mut [&mut dyn Player],
    config: MatchConfig,
    writer: ReplayWriter,
    observer: &mut dyn Observer,
) -> MatchRecord {
    let mut session = Session::new(map, config, players.iter().map(|p| p.name()).collect());
    for (s, p) in players.iter().enumerate() {
        session.set_builtin(s as u8, p.builtin());
    }
    session.record_to(writer);
    play_session(session, players, observer)
}

/// The players' loop over a [`Session`]: every seat gets its observation before any answer is
/// collected, so agent processes think at the same time, each judged against its own send time.
/// A stop request (Ctrl-C) ends the match before the round in progress is resolved.
///
/// The session is set up by the caller (built-in seats, a fork, its recording: see
/// [`play`] and [`play_to`] for the usual ones).
pub fn play_session(mut session: Session, players: &mut [&mut dyn Player], observer: &mut dyn Observer) -> MatchRecord {
    let seats = session.seats();
    assert_eq!(players.len(), seats, "one player per seat");
    let records = observer.wants_records();
    if records {
        session.keep_rounds();
    }
    let mut obs: Vec<Observation> = vec![Observation::default(); seats];
    'rounds: while !session.is_over() {
        if interrupt::requested() {
            break;
        }
        let active: Vec<bool> = (0..seats).map(|s| session.is_active(s as u8)).collect();
        for s in (0..seats).filter(|&s| active[s]) {
            players[s].observe_and_begin(&mut session, s as u8, &mut obs[s]);
        }
        for s in (0..seats).filter(|&s| active[s]) {
            match players[s].finish() {
                PlayerAnswer::Interrupted => break 'rounds,
                answer => session.submit(s as u8, answer),
            }
            if let Some(notes) = players[s].notes() {
                session.note(s as u8, notes);
            }
            if let Some(seconds) = players[s].answer_seconds() {
                session.time(s as u8, seconds);
            }
        }
        if interrupt::requested() {
            // Nobody is charged for an answer cut short by a stop: the round is not played.
            break;
        }
        session.advance();
        observer.round_done(session.state(), session.report());
        if let Some(record) = records.then(|| session.round_record()).flatten() {
            observer.round_recorded(session.state(), session.report(), &record);
        }
    }
    for p in players.iter_mut() {
        p.end();
    }
    let mut rec = session.finish();
    rec.agents = players.iter().map(|p| p.stats()).collect();
    rec
}
