//! Who plays a seat: the [`Player`] trait, its answers, in-process [`Decide`] players, and the
//! figures an agent process reports ([`AgentStats`]: time, the scheduler's CPU figures,
//! isolation). Agent processes (`process`) and served players are the other implementations.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use gbely_rules::{Cell, Command, Decide, Grid, Neighbours, Notes, Observation, OwnCell, ViolationKind, VisibleCell};
use gbely_world::Map;

use crate::builtins::{builtin_agent, BUILTIN_AGENTS, BUILTIN_COUNCIL};
use crate::limits::TimeLimit;

/// The 95th percentile of answer times (nearest rank), 0 when there are none.
pub fn p95(seconds: &[f64]) -> f64 {
    let mut sorted = seconds.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (sorted.len() as f64 * 0.95).ceil() as usize;
    sorted.get(rank.saturating_sub(1)).copied().unwrap_or(0.0)
}

/// What the scheduler says about an agent's rounds (Linux `/proc/PID/schedstat`; zero elsewhere and in process).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct CpuTally {
    /// Rounds measured.
    pub rounds: u32,
    /// Seconds the agent ran on a CPU while it was deciding.
    pub run_seconds: f64,
    /// Seconds it was ready to run but waited for a CPU (other agents or programs had them all).
    pub wait_seconds: f64,
    /// The longest such wait in one round.
    pub max_wait_seconds: f64,
    /// Rounds in which waiting for a CPU took more than a tenth of the round's time limit.
    pub starved_rounds: u32,
}

/// A player's answer for one round.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerAnswer {
    /// Typed commands from an in-process agent.
    Commands(Vec<Command>),
    /// The command list as received on the wire (each item parsed on its own).
    Raw(Vec<serde_json::Value>),
    /// An answer line already read by [`crate::wire::read_answer`] (agent processes): its
    /// commands parsed, a flood's discarded items counted rather than held.
    Read(crate::wire::ReadAnswer),
    /// A violation (SPEC §8): the round's commands are lost.
    Violation {
        /// Timeout, crash or unreadable answer.
        kind: ViolationKind,
        /// What happened, in words, for the log and the replay.
        detail: String,
    },
    /// A stop was requested (Ctrl-C) while waiting for the answer: the round is not played.
    Interrupted,
    /// An answer as a replay holds it (re-simulation).
    Replayed(gbely_world::replay::Answer),
}

/// How an agent process fared, for the summary's fairness notes.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct AgentStats {
    /// Whether it played under a time limit.
    pub timed: bool,
    /// Processes started (1 + restarts after violations).
    pub starts: u32,
    /// Rounds whose answer was timed: the answer times below are over them.
    pub answered_rounds: u32,
    /// The slowest answer in time, in seconds.
    pub max_answer_seconds: f64,
    /// The 95th percentile of the answers' times (nearest rank), in seconds.
    pub p95_answer_seconds: f64,
    /// The time of the first answer, in seconds: the start-up (interpreter, imports, the first
    /// decide) included when it answered round 0.
    pub first_answer_seconds: Option<f64>,
    /// CPU time and waits for a CPU while deciding (Linux).
    pub cpu: CpuTally,
    /// Whether it ran in the sandbox, and what held it (or why nothing did).
    pub isolation: Isolation,
    /// Lines it wrote after a round's answer (or out of turn): dropped, one answer a round.
    pub dropped_lines: u64,
}

/// How an agent process was isolated from the machine and from the other agents: in the
/// sandbox (`runner::sandbox`) or not, with one line that says how, or why not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Isolation {
    /// Whether the agent ran in the sandbox.
    pub sandboxed: bool,
    /// How it was held, or why it was not.
    pub detail: &'static str,
}

impl Isolation {
    /// Sandboxed, held as `detail` says.
    pub fn sandboxed(detail: &'static str) -> Isolation {
        Isolation { sandboxed: true, detail }
    }

    /// Not sandboxed, for the reason `detail` gives.
    pub fn unsandboxed(detail: &'static str) -> Isolation {
        Isolation { sandboxed: false, detail }
    }

    /// The summary's line: `sandboxed (…)` or `not sandboxed: why`.
    pub fn line(&self) -> String {
        if self.sandboxed {
            self.detail.to_string()
        } else {
            format!(
                "not sandboxed: {} (agents can read your files and each other's; see docs/protocol.md)",
                self.detail
            )
        }
    }
}

/// Where the players' loop takes the observations from: the match's session.
pub trait Observed {
    /// The map played on.
    fn map(&self) -> &Arc<Map>;
    /// The observation of SPEC §5 for `seat` this round, cells numbered by the map's grid.
    fn observe_into(&mut self, seat: u8, obs: &mut Observation);
    /// The same observation with every cell and neighbour renumbered by `table` (per map cell,
    /// its number and its neighbours' in a row-major numbering, as [`agent_cell`] gives).
    fn observe_renumbered_into(&mut self, seat: u8, obs: &mut Observation, table: &[(Cell, Neighbours)]);
}

/// Someone who plays a seat. Deciding is split in two so that agent processes of all seats
/// can think at the same time: `begin` hands over the observation, `finish` collects the answer.
pub trait Player {
    /// A short name for tables and replays.
    fn name(&self) -> String;
    /// Hands over the seat's observation for the round (cells numbered by the map's `grid`): an
    /// agent process starts thinking, an in-process agent decides here.
    fn begin(&mut self, obs: &Observation, grid: &Grid);
    /// Takes the seat's observation from `source` (the match's session) into `obs` and
    /// [`begin`](Player::begin)s with it: what the players' loop calls. A player may observe
    /// otherwise, as long as it plays what `begin` would with that observation: an in-process
    /// agent takes it in the agents' numbering at once.
    fn observe_and_begin(&mut self, source: &mut dyn Observed, seat: u8, obs: &mut Observation) {
        source.observe_into(seat, obs);
        let map = Arc::clone(source.map());
        self.begin(obs, map.grid());
    }
    /// The answer to the observation of the last [`begin`](Player::begin), waiting for it if
    /// need be.
    fn finish(&mut self) -> PlayerAnswer;
    /// Called once when the match is over (agent processes are stopped here).
    fn end(&mut self) {}
    /// Timings of an agent process (`None` for in-process players).
    fn stats(&self) -> Option<AgentStats> {
        None
    }
    /// The name of a deterministic built-in agent a replay reader can run again (`council`):
    /// its commands are then regenerated on reading rather than stored.
    fn builtin(&self) -> Option<&'static str> {
        None
    }
    /// The player's notes on the round just answered (for the replay), asked once after
    /// `finish`.
    fn notes(&mut self) -> Option<Notes> {
        None
    }
    /// How long the answer just collected by `finish` took, in seconds: from the observation
    /// sent to the answer received (or to the violation). `None` for players that are not timed.
    fn answer_seconds(&self) -> Option<f64> {
        None
    }
}

/// Plays a seat with an in-process [`Decide`].
///
/// The agent sees cells numbered as agents number them ([`gbely_rules::AGENT_GRID_WIDTH`]
/// columns, [`Cell::row_col`]), the same as when it is served over the line protocol, so geometry
/// it computes carries over; a built-in agent ([`DecidePlayer::builtin`]) sees the map's own
/// numbering, as the replay readers that decide its commands again give it.
///
/// Failures count as they do for an agent process: a `decide` that panics is a crash violation
/// for its seat (the match goes on; the agent keeps its state, where a process is restarted),
/// and with a time limit ([`DecidePlayer::with_time_limit`]) an answer slower than the limit is a
/// timeout violation. `decide` is timed once it returns: one that never returns hangs the match.
#[derive(Debug)]
pub struct DecidePlayer<D> {
    name: String,
    agent: D,
    answer: Option<PlayerAnswer>,
    builtin: Option<&'static str>,
    limit: TimeLimit,
    /// Seconds each answer took (only with a time limit).
    times: Vec<f64>,
    /// Whether the agent sees the agents' numbering (all but built-in agents).
    agent_grid: bool,
    /// The observation renumbered for the agent (reused).
    view: Observation,
    /// The agents' numbering of the grid the agent plays on, built once for the grid.
    numbering: AgentNumbering,
    /// The agent's notes on the last round, on the map's numbering.
    notes: Option<Notes>,
}

impl<D: Decide> DecidePlayer<D> {
    /// A player named `name` (in tables and replays) that asks `agent`, without a time limit.
    pub fn new(name: impl Into<String>, agent: D) -> Self {
        DecidePlayer {
            name: name.into(),
            agent,
            answer: None,
            builtin: None,
            limit: TimeLimit::OFF,
            times: Vec::new(),
            agent_grid: true,
            view: Observation::default(),
            numbering: AgentNumbering::default(),
            notes: None,
        }
    }

    /// Judges each answer against `limit`, as the judge does an agent process's (SPEC §8), and
    /// reports the answers' times in [`Player::stats`].
    pub fn with_time_limit(mut self, limit: TimeLimit) -> Self {
        self.limit = limit;
        self
    }

    /// A deterministic built-in agent, named as [`builtin_agent`] knows it: replays regenerate
    /// its commands from its observations instead of storing them. The agent must be what
    /// `builtin_agent(name)` makes, fresh.
    pub fn builtin(name: impl Into<String>, builtin: &'static str, agent: D) -> Self {
        debug_assert!(builtin_agent(builtin).is_some(), "unknown built-in agent `{builtin}`");
        DecidePlayer { builtin: Some(builtin), agent_grid: false, ..DecidePlayer::new(name, agent) }
    }
}

impl DecidePlayer<gbely_council::Council> {
    /// The Council as a built-in: replays regenerate its commands instead of storing them.
    pub fn council(name: impl Into<String>) -> Self {
        DecidePlayer::builtin(name, BUILTIN_COUNCIL, gbely_council::Council::new())
    }
}

/// A player of a built-in agent (see [`BUILTIN_AGENTS`]); `None` for another name.
pub fn builtin_player(name: impl Into<String>, builtin: &str) -> Option<Box<dyn Player + Send>> {
    let known = BUILTIN_AGENTS.into_iter().find(|b| *b == builtin)?;
    Some(Box::new(DecidePlayer::builtin(name, known, builtin_agent(known)?)))
}

impl<D: Decide> DecidePlayer<D> {
    /// Asks the agent for its commands on `obs` (`None`: the renumbered view) and keeps its
    /// answer and notes; `start` is when the round's observation began to be made for it.
    fn ask(&mut self, start: Instant, obs: Option<&Observation>, grid: &Grid) {
        let obs = obs.unwrap_or(&self.view);
        let agent = &mut self.agent;
        let decided = std::panic::catch_unwind(AssertUnwindSafe(|| agent.decide(obs)));
        let decided = match decided {
            Ok(mut commands) if self.agent_grid => {
                for c in &mut commands {
                    renumber_command(c, |cell| map_cell(cell, grid));
                }
                Ok(commands)
            }
            d => d,
        };
        let elapsed = start.elapsed();
        self.answer = Some(match decided {
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".to_string());
                PlayerAnswer::Violation { kind: ViolationKind::Crash, detail: format!("decide panicked: {what}") }
            }
            Ok(_) if self.limit.exceeded_by(elapsed) => PlayerAnswer::Violation {
                kind: ViolationKind::Timeout,
                detail: format!(
                    "decide took {:.2} s (limit {:.1} s)",
                    elapsed.as_secs_f64(),
                    self.limit.as_secs_f64().unwrap_or_default()
                ),
            },
            Ok(commands) => PlayerAnswer::Commands(commands),
        });
        if !self.limit.is_off() {
            self.times.push(elapsed.as_secs_f64());
        }
        // Notes are the agent's own business: one that panics gives none.
        let agent_grid = self.agent_grid;
        self.notes = std::panic::catch_unwind(AssertUnwindSafe(|| agent.notes())).ok().flatten().map(|mut n| {
            if agent_grid {
                n.cells =
                    n.cells.into_iter().map(|(c, t)| (map_cell(c, grid), t)).filter(|(c, _)| c.0 != u32::MAX).collect();
                // Drawings too: one on a cell not on the map is left out.
                let on_map = |c: Cell| Some(map_cell(c, grid)).filter(|c| c.0 != u32::MAX);
                n.draw = std::mem::take(&mut n.draw)
                    .into_iter()
                    .filter_map(|mut d| {
                        use gbely_rules::Shape;
                        d.shape = match d.shape {
                            Shape::Dot(c) => Shape::Dot(on_map(c)?),
                            Shape::Fill(c) => Shape::Fill(on_map(c)?),
                            Shape::Line(a, b) => Shape::Line(on_map(a)?, on_map(b)?),
                            Shape::Label(c, t) => Shape::Label(on_map(c)?, t),
                        };
                        Some(d)
                    })
                    .collect();
            }
            n
        });
    }
}

impl<D: Decide> Player for DecidePlayer<D> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn begin(&mut self, obs: &Observation, grid: &Grid) {
        let start = Instant::now();
        if self.agent_grid {
            self.numbering.renumber_into(obs, grid, &mut self.view);
            self.ask(start, None, grid);
        } else {
            self.ask(start, Some(obs), grid);
        }
    }
    fn observe_and_begin(&mut self, source: &mut dyn Observed, seat: u8, obs: &mut Observation) {
        let start = Instant::now();
        let map = Arc::clone(source.map());
        let grid = map.grid();
        if self.agent_grid {
            let table = self.numbering.of(grid);
            source.observe_renumbered_into(seat, &mut self.view, table);
            self.ask(start, None, grid);
        } else {
            source.observe_into(seat, obs);
            self.ask(start, Some(obs), grid);
        }
    }
    fn notes(&mut self) -> Option<Notes> {
        self.notes.take()
    }
    fn finish(&mut self) -> PlayerAnswer {
        self.answer.take().unwrap_or(PlayerAnswer::Commands(Vec::new()))
    }
    fn answer_seconds(&self) -> Option<f64> {
        // Timed only under a limit: the last time is this round's (`begin` pushed it).
        self.times.last().copied().filter(|_| !self.limit.is_off())
    }
    fn stats(&self) -> Option<AgentStats> {
        (!self.limit.is_off()).then(|| AgentStats {
            timed: true,
            starts: 1,
            answered_rounds: self.times.len() as u32,
            max_answer_seconds: self.times.iter().copied().fold(0.0, f64::max),
            p95_answer_seconds: p95(&self.times),
            first_answer_seconds: self.times.first().copied(),
            cpu: CpuTally::default(),
            isolation: Isolation::unsandboxed("in-process"),
            dropped_lines: 0,
        })
    }
    fn builtin(&self) -> Option<&'static str> {
        self.builtin
    }
}

/// A cell of the map as agents number it ([`gbely_rules::AGENT_GRID_WIDTH`] columns).
pub fn agent_cell(c: Cell, grid: &Grid) -> Cell {
    Cell::at(c.0 / grid.width(), c.0 % grid.width())
}

/// The map's cell an agent's cell names; `Cell(u32::MAX)` (not on the map: such a command is
/// discarded) for one outside the map.
pub fn map_cell(c: Cell, grid: &Grid) -> Cell {
    let (row, col) = c.row_col();
    if row < grid.height() && col < grid.width() {
        Cell(row * grid.width() + col)
    } else {
        Cell(u32::MAX)
    }
}

/// Every cell of a grid and its neighbours in the agents' numbering ([`agent_cell`]), computed
/// once for the grid rather than for every cell of every observation.
#[derive(Clone, Debug, Default)]
struct AgentNumbering {
    /// The grid's width and height the table was built for.
    size: (u32, u32),
    /// Per cell of the map (its index): the cell and its neighbours as agents number them.
    cells: Vec<(Cell, Neighbours)>,
}

impl AgentNumbering {
    /// The table for `grid`: per cell of the map, the cell and its neighbours as agents number
    /// them (built on the first call for a grid of this size, then kept).
    fn of(&mut self, grid: &Grid) -> &[(Cell, Neighbours)] {
        if self.size != (grid.width(), grid.height()) || self.cells.len() != grid.len() {
            self.size = (grid.width(), grid.height());
            self.cells.clear();
            self.cells
                .extend(grid.cells().map(|c| (agent_cell(c, grid), grid.neighbours(c).map(|n| agent_cell(n, grid)))));
        }
        &self.cells
    }

    /// `obs` (cells numbered by `grid`, each own cell's neighbours the grid's) with every cell in
    /// the agents' numbering, into `out` (its buffers reused). Both numberings are row-major,
    /// so the lists keep their order.
    fn renumber_into(&mut self, obs: &Observation, grid: &Grid, out: &mut Observation) {
        let table = self.of(grid);
        // A cell outside the grid (never in the engine's observations) is renumbered as it comes.
        let cell = |c: Cell| table.get(c.index()).map_or_else(|| agent_cell(c, grid), |t| t.0);
        out.round = obs.round;
        out.base = cell(obs.base);
        out.own.clear();
        out.own.extend(obs.own.iter().map(|o| {
            let (cell, neighbours) = match table.get(o.cell.index()) {
                Some(&(cell, neighbours)) => (cell, neighbours),
                None => (agent_cell(o.cell, grid), o.neighbours.map(|n| agent_cell(n, grid))),
            };
            debug_assert!(o.cell.index() >= grid.len() || o.neighbours == *grid.neighbours(o.cell));
            OwnCell { cell, terrain: o.terrain, units: o.units, fortification: o.fortification, neighbours }
        }));
        out.visible.clear();
        out.visible.extend(obs.visible.iter().map(|v| VisibleCell {
            cell: cell(v.cell),
            owner: v.owner,
            garrison: v.garrison,
            fortification: v.fortification,
            terrain: v.terrain,
        }));
    }
}

fn renumber_command(c: &mut Command, f: impl Fn(Cell) -> Cell) {
    match c {
        Command::Move { from, to, .. } | Command::Attack { from, to, .. } => {
            *from = f(*from);
            *to = f(*to);
        }
        Command::Fortify { cell, .. } => *cell = f(*cell),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Session;

    #[test]
    fn every_built_in_agent_has_a_player_that_says_which_it_is() {
        for name in BUILTIN_AGENTS {
            assert_eq!(builtin_player("x", name).and_then(|p| p.builtin()), Some(name));
        }
        assert!(builtin_player("x", "nobody").is_none());
    }

    /// Keeps every observation it is given; plays nothing.
    #[derive(Default)]
    struct Seen(Vec<Observation>);

    impl Decide for Seen {
        fn decide(&mut self, obs: &Observation) -> Vec<Command> {
            self.0.push(obs.clone());
            Vec::new()
        }
    }

    #[test]
    fn an_observation_taken_in_the_agents_numbering_is_the_renumbered_one() {
        // The reference map (60 columns) and a generated 90×90 final: a player that observes in
        // the agents' numbering at once sees what one renumbering the map's observation sees.
        let finals = gbely_world::generate_final("numbering", gbely_world::FinalConfig::default()).unwrap();
        for map in [gbely_world::reference_map(), finals] {
            let map = Arc::new(map);
            let grid = map.grid();
            let seats = map.seats().len();
            let mut session = Session::new(
                map.clone(),
                crate::sim::MatchConfig::default(),
                (0..seats).map(|s| s.to_string()).collect(),
            );
            let mut at_once: Vec<_> = (0..seats).map(|_| DecidePlayer::new("a", Seen::default())).collect();
            let mut renumbered: Vec<_> = (0..seats).map(|_| DecidePlayer::new("b", Seen::default())).collect();
            let mut obs = Observation::default();
            for _ in 0..3 {
                for seat in 0..seats {
                    at_once[seat].observe_and_begin(&mut session, seat as u8, &mut obs);
                    renumbered[seat].begin(&session.observe(seat as u8), grid);
                }
                session.advance();
            }
            for seat in 0..seats {
                let (a, b) = (&at_once[seat].agent.0, &renumbered[seat].agent.0);
                assert_eq!(a.len(), 3);
                assert_eq!(a, b, "{}, seat {seat}", map.name());
                // By hand: the base is row × 1024 + column, its neighbours likewise, N, S, W, E.
                let base = map.seats()[seat].base;
                let (r, c) = grid.row_col(base);
                assert_eq!(a[0].base, Cell::at(r, c));
                let own = a[0].own.iter().find(|o| o.cell == Cell::at(r, c)).expect("the base is owned");
                let expected: Vec<Cell> =
                    grid.neighbours(base).iter().map(|n| Cell::at(n.0 / grid.width(), n.0 % grid.width())).collect();
                assert_eq!(own.neighbours.as_slice(), expected.as_slice());
                if r > 0 && c > 0 {
                    assert_eq!(own.neighbours.as_slice()[0], Cell::at(r - 1, c));
                }
            }
        }
    }

    /// Panics in the rounds it is given, plays nothing otherwise.
    struct Fragile {
        panics_in: Vec<u32>,
        sleeps_in: Option<(u32, std::time::Duration)>,
    }

    impl Decide for Fragile {
        fn decide(&mut self, obs: &Observation) -> Vec<Command> {
            if self.panics_in.contains(&obs.round) {
                panic!("boom in round {}", obs.round);
            }
            if let Some((_, nap)) = self.sleeps_in.filter(|(r, _)| *r == obs.round) {
                std::thread::sleep(nap);
            }
            Vec::new()
        }
    }

    fn play_against_the_council(mut agent: DecidePlayer<Fragile>, rounds: u32) -> crate::session::MatchRecord {
        let map = std::sync::Arc::new(gbely_world::reference_map());
        let mut council = DecidePlayer::council("council");
        let mut players: [&mut dyn Player; 2] = [&mut agent, &mut council];
        let opts = crate::game::PlayOptions { config: crate::sim::MatchConfig { rounds }, record: false };
        crate::game::play(map, &mut players, opts, &mut ())
    }

    #[test]
    fn a_panic_in_decide_is_a_crash_violation_and_the_match_goes_on() {
        let agent = DecidePlayer::new("fragile", Fragile { panics_in: vec![2, 5], sleeps_in: None });
        let rec = play_against_the_council(agent, 20);
        assert_eq!(rec.rounds_played(), 20, "the match goes on");
        let v: Vec<(u32, ViolationKind, &str)> =
            rec.violations[0].iter().map(|(r, k, d)| (*r, *k, d.as_str())).collect();
        assert_eq!(
            v,
            [
                (2, ViolationKind::Crash, "decide panicked: boom in round 2"),
                (5, ViolationKind::Crash, "decide panicked: boom in round 5")
            ]
        );
        assert!(rec.outcome[0].disqualified.is_none(), "two violations are allowed (SPEC §8: the fourth disqualifies)");
    }

    #[test]
    fn the_fourth_panic_disqualifies_as_the_fourth_crash_of_a_process_does() {
        let agent = DecidePlayer::new("fragile", Fragile { panics_in: vec![1, 3, 4, 6], sleeps_in: None });
        let rec = play_against_the_council(agent, 20);
        assert_eq!(rec.violations[0].len(), 4);
        assert_eq!(rec.outcome[0].disqualified, Some(6));
    }

    #[test]
    fn with_a_time_limit_a_slow_answer_is_a_timeout_and_times_are_reported() {
        let nap = std::time::Duration::from_millis(120);
        let limit = TimeLimit::seconds(0.05).expect("a limit");
        let agent =
            DecidePlayer::new("slow", Fragile { panics_in: vec![], sleeps_in: Some((3, nap)) }).with_time_limit(limit);
        let rec = play_against_the_council(agent, 10);
        assert_eq!(rec.violations[0].len(), 1);
        let (round, kind, detail) = &rec.violations[0][0];
        assert_eq!((*round, *kind), (3, ViolationKind::Timeout));
        assert!(detail.starts_with("decide took 0.1") && detail.ends_with("(limit 0.1 s)"), "{detail}");
        let stats = rec.agents[0].expect("timed in-process players report their times");
        assert!(stats.timed && stats.answered_rounds == 10 && stats.max_answer_seconds >= 0.12);
        assert!(rec.agents[1].is_none(), "an untimed player reports nothing, as before");
    }
}
