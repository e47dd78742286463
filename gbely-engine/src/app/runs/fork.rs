//! Forks: a match continued from the start of any round of a replay, with the agents given
//! (`gbely play --from R --round N`, `gbely.Match.from_replay`, the environments' reset option,
//! `gbely ab --from-replays`).
//!
//! The engine is deterministic and the Council decides from its observation alone (rules §11),
//! so the state at the start of a round follows from the replay's answers before it: a fork plays
//! those answers again ([`crate::app::service::MatchPlan::resume`]) and hands the seats to their
//! agents at the round. Only an agent's own memory of the rounds before is lost, as after a
//! violation's restart. The forked match's replay keeps the source's rounds before the fork and
//! says where it came from ([`ForkRecord`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gbely_world::replay::ForkRecord;
use gbely_world::{Map, Replay};
use sha2::{Digest, Sha256};

use super::agent_spec::AgentSpec;
use super::RunError;
use crate::replays::resimulate;
use crate::sim::EndReason;

/// The SHA-256 of a replay's JSON as gbely writes it ([`Replay::to_json`]), in lowercase hex:
/// what a fork's replay names its source by. The same for the replay read from its file
/// (compressed or not) and held in memory.
pub fn replay_sha256(replay: &Replay) -> String {
    Sha256::digest(replay.to_json().as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The replay a match forked from `source` at the start of `round` continues, the record of
/// where it came from, and the map: the source's first `round` rounds, checked to re-simulate
/// here as recorded (cells and units of every round) — a replay this build cannot rebuild the
/// same is refused, never continued into another match.
///
/// Refused with what is wrong: a map that cannot be rebuilt, a round the source did not reach
/// (a match ended or cut off before it), one at or past the match's end.
pub fn fork_at(source: &Replay, round: u32) -> Result<(Arc<Replay>, ForkRecord, Arc<Map>), RunError> {
    let map = Arc::new(source.check().map_err(|e| RunError::Fork(format!("it cannot be rebuilt here: {e}")))?);
    check_round(source, round)?;
    let fork = ForkRecord { source: replay_sha256(source), round };
    let mut head = source.clone();
    head.turns.truncate(round as usize);
    head.fork = None;
    let mut differs = None;
    resimulate(&head, Arc::clone(&map), |r, m, _| {
        let t = &head.turns[r];
        let same = (0..m.seats())
            .all(|s| m.cell_count(s as u8) == t.cells[s] && m.unit_total(s as u8).to_bits() == t.units[s].to_bits());
        if !same {
            differs = Some(r);
        }
        same
    });
    if let Some(r) = differs {
        return Err(RunError::Fork(format!(
            "its round {r} does not re-simulate here as it was recorded (written by {}): a fork of it would not \
             continue the same match (`gbely replay verify` says more)",
            source.engine
        )));
    }
    Ok((Arc::new(head), fork, map))
}

/// Whether `source` can be forked at the start of `round`: refused with why when the round is at
/// or past the match's end, or the replay did not reach it (a match ended, or cut off, before).
/// The replay's rounds are not re-simulated here ([`fork_at`] does).
pub fn check_round(source: &Replay, round: u32) -> Result<(), RunError> {
    let played = source.turns.len();
    if round >= source.rounds {
        return Err(RunError::Fork(format!(
            "round {round} is past the match's last round ({}): nothing is left to play",
            source.rounds - 1
        )));
    }
    let ended = source.result.ended_by != EndReason::Interrupted;
    if round as usize > played || (ended && round as usize == played) {
        let last = played.saturating_sub(1);
        return Err(RunError::Fork(if ended {
            format!("round {round} was not played: the match ended after round {last} (fork at 0…{last})")
        } else {
            format!(
                "round {round} was not reached: the replay stops after round {last} (fork at 0…{played}; {played} \
                 continues after its last)"
            )
        }));
    }
    Ok(())
}

/// Who plays each seat of a fork when nobody is named for it: the replay's own built-in agent
/// (the Council, `expander-rs`, …) or example agent (`template`, `expander`). An agent process's
/// file is not in the replay, and a name in a replay is never run as a file or a command (a
/// replay may come from anyone): such a seat is `None`, and the caller asks for its agent.
pub fn own_agents(source: &Replay) -> Vec<Option<AgentSpec>> {
    source.seats.iter().map(|s| AgentSpec::carried(s.builtin.as_deref().unwrap_or(&s.name))).collect()
}

// ---------------------------------------------------------------------------------------------
// The fork points of a paired-fork A/B test (`gbely ab --from-replays DIR --at 30,60`).

/// One fork point: a replay, the round its pair starts from and the seat the tested agents take.
#[derive(Clone, Debug)]
pub struct ForkPoint {
    /// The replay's file, as it is shown.
    pub file: String,
    /// The replay, shared by the points of its file.
    pub source: Arc<Replay>,
    /// The round the agents take over at.
    pub round: u32,
    /// The seat the tested agents play.
    pub seat: usize,
    /// Who plays each other seat: the replay's own agents ([`own_agents`]); `seat`'s entry is
    /// the replay's and unused.
    pub agents: Arc<[Option<AgentSpec>]>,
}

impl ForkPoint {
    /// `games/b.json.gz@40`: the point as the pairs' list names it.
    pub fn name(&self) -> String {
        format!("{}@{}", self.file, self.round)
    }
}

/// The fork points of a folder of replays, in a fixed order (files by name, then rounds as
/// given), and why any file or round was left out.
#[derive(Clone, Debug)]
pub struct ForkPoints {
    pub points: Vec<ForkPoint>,
    /// The replay files that gave points.
    pub files: usize,
    /// What was left out, one line each (`a.json: round 90 skipped: …`).
    pub notes: Vec<String>,
    /// SHA-256 over every point's source, round and seat: the same folder and rounds give the
    /// same digest (the journal's key), a changed replay another.
    pub digest: String,
}

/// The fork points of every replay in `dir` (`*.json`, `*.json.gz`, not in sub-folders) at each
/// of `rounds`, the tested agents in `seat` (default: each replay's first army seat); `rounds_of`
/// is the match length asked for (a fork plays its source's rounds: another is an error).
///
/// A file that is no replay, cannot be rebuilt here, or whose other seats are played by agents
/// not in the replay (only built-in agents and the examples play them) is left out with a note,
/// as is a round a replay did not reach; no point left is an error saying why.
pub fn fork_points(
    dir: &Path,
    rounds: &[u32],
    seat: Option<usize>,
    rounds_of: Option<u32>,
) -> Result<ForkPoints, RunError> {
    let bad = |why: String| Err(RunError::ForkPoints(why));
    if rounds.is_empty() {
        return bad("--at: give the rounds to fork at (e.g. --at 30,60,90)".into());
    }
    let listed =
        std::fs::read_dir(dir).map_err(|e| RunError::ForkPoints(format!("--from-replays {}: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> = listed
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            (name.ends_with(".json") || name.ends_with(".json.gz")) && p.is_file()
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return bad(format!("no replay (*.json, *.json.gz) in {}", dir.display()));
    }
    let mut out = ForkPoints { points: Vec::new(), files: 0, notes: Vec::new(), digest: String::new() };
    let mut digest = Sha256::new();
    for path in &files {
        let file = path.display().to_string();
        let mut note = |why: String| out.notes.push(format!("{file}: {why}"));
        let source = match crate::replays::read_replay_or_cut(path) {
            Ok(read) => read.replay,
            Err(e) => {
                note(format!("skipped, not a replay gbely reads ({e})"));
                continue;
            }
        };
        if let Some(r) = rounds_of.filter(|&r| r != source.rounds) {
            return bad(format!(
                "--rounds {r}: a fork plays the rounds of the match it continues ({} in {file})",
                source.rounds
            ));
        }
        let map_seats = &source.seats;
        let first_army = map_seats.iter().position(|s| s.role == gbely_rules::SeatRole::Army).unwrap_or(0);
        let seat = seat.unwrap_or(first_army);
        match map_seats.get(seat) {
            None => {
                note(format!("skipped, its map has seats 0…{} (--seat {seat})", map_seats.len() - 1));
                continue;
            }
            Some(s) if s.role != gbely_rules::SeatRole::Army => {
                note(format!("skipped, seat {seat} is the Council's, not an army's (--seat)"));
                continue;
            }
            Some(_) => {}
        }
        let own = own_agents(&source);
        let missing: Vec<String> = (0..own.len())
            .filter(|&s| s != seat && own[s].is_none())
            .map(|s| format!("seat {s} ({})", crate::text::printable(&source.seats[s].name)))
            .collect();
        if !missing.is_empty() {
            note(format!(
                "skipped, {} played by an agent that is not in the replay (the other seats of a fork keep their \
                 own agents: built-in agents and the examples)",
                missing.join(", ")
            ));
            continue;
        }
        let mut reached = Vec::new();
        for &round in rounds {
            match check_round(&source, round) {
                Ok(()) => reached.push(round),
                Err(RunError::Fork(why) | RunError::ForkPoints(why)) => note(format!("round {round} skipped: {why}")),
                Err(e) => note(format!("round {round} skipped: {e}")),
            }
        }
        let Some(&last) = reached.iter().max() else { continue };
        // The rounds before the last fork re-simulate here (those of every earlier one with them).
        if let Err(e) = fork_at(&source, last) {
            note(format!("skipped: {e}"));
            continue;
        }
        let sha = replay_sha256(&source);
        let source = Arc::new(source);
        let agents: Arc<[Option<AgentSpec>]> = own.into();
        out.files += 1;
        for round in reached {
            digest.update(format!("{sha} {round} {seat}\n").as_bytes());
            out.points.push(ForkPoint {
                file: file.clone(),
                source: Arc::clone(&source),
                round,
                seat,
                agents: Arc::clone(&agents),
            });
        }
    }
    if out.points.is_empty() {
        let rounds: Vec<String> = rounds.iter().map(u32::to_string).collect();
        return bad(format!(
            "no fork point in {} at rounds {}:\n  {}",
            dir.display(),
            rounds.join(", "),
            out.notes.join("\n  ")
        ));
    }
    out.digest = digest.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{play, PlayOptions};
    use crate::runner::player::{DecidePlayer, Player};

    fn replay(rounds: u32) -> Replay {
        let map = Arc::new(gbely_world::generate_duel("fork", 16, 16).unwrap());
        let mut a = DecidePlayer::new("expander", agents::Expander::default());
        let mut b = DecidePlayer::council("council");
        let mut players: [&mut dyn Player; 2] = [&mut a, &mut b];
        let opts = PlayOptions { config: crate::sim::MatchConfig { rounds }, record: true };
        play(map, &mut players, opts, &mut ()).replay.unwrap()
    }

    #[test]
    fn a_fork_keeps_the_rounds_before_it_and_refuses_rounds_not_played() {
        let source = replay(12);
        let (head, fork, map) = fork_at(&source, 5).unwrap();
        assert_eq!(head.turns.len(), 5);
        assert_eq!(head.turns[..], source.turns[..5]);
        assert_eq!(fork.round, 5);
        assert_eq!(fork.source.len(), 64);
        assert_eq!(map.fingerprint(), source.map.fingerprint);
        assert_eq!(fork_at(&source, 11).unwrap().0.turns.len(), 11);
        let why = fork_at(&source, 12).unwrap_err().to_string();
        assert!(why.contains("past the match's last round (11)"), "{why}");
        // A match cut off after round 6 continues at 7, not later.
        let mut cut = source.clone();
        cut.turns.truncate(7);
        cut.result.ended_by = EndReason::Interrupted;
        assert!(fork_at(&cut, 7).is_ok());
        let why = fork_at(&cut, 8).unwrap_err().to_string();
        assert!(why.contains("round 8 was not reached: the replay stops after round 6"), "{why}");
        // A match that ended (here: a shorter one played to its end) has no round after its last.
        let ended = replay(7);
        let why = fork_at(&ended, 7).unwrap_err().to_string();
        assert!(why.contains("past the match's last round (6)"), "{why}");
    }

    #[test]
    fn a_replay_whose_rounds_re_simulate_otherwise_here_is_refused() {
        let mut source = replay(12);
        source.turns[3].units[0] += 1.0;
        let why = fork_at(&source, 6).unwrap_err().to_string();
        assert!(why.contains("its round 3 does not re-simulate here as it was recorded"), "{why}");
        // Rounds after the fork are not the fork's business.
        assert!(fork_at(&source, 3).is_ok());
    }

    #[test]
    fn the_source_is_named_by_the_sha256_of_its_json() {
        let source = replay(3);
        let text = source.to_json();
        let name = replay_sha256(&source);
        assert_eq!(name, replay_sha256(&Replay::from_json(&text).unwrap()));
        let mut other = source.clone();
        other.seats[0].name = "someone else".into();
        assert_ne!(name, replay_sha256(&other));
        // The digest of the text itself, as `sha256sum` gives it.
        assert!(name.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    #[test]
    fn a_seat_is_played_by_its_own_agent_when_the_replay_names_one_that_runs_here() {
        let mut source = replay(2);
        source.seats[0].name = "my bot 2".into();
        assert_eq!(own_agents(&source), [None, Some(AgentSpec::COUNCIL)]);
        source.seats[0].name = "template".into();
        assert_eq!(own_agents(&source)[0], Some(AgentSpec::Example(super::super::agent_spec::Example::Template)));
        // Never a file or a command named by the replay.
        for name in ["cmd:touch pwned", "Cargo.toml", "/usr/bin/true"] {
            source.seats[0].name = name.into();
            assert_eq!(own_agents(&source)[0], None, "{name}");
        }
    }
}
