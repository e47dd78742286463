//! The simulation: one match of N sides on any map, exactly as SPEC §3–§10 say.
//!
//! The match is a pure state machine: production, observations, resolution of the sides'
//! commands, the end check. It does no IO and reads no clock; agents' mistakes are events.

use std::sync::Arc;

use gbely_rules::constants::{ALLOWED_VIOLATIONS, BASE_BONUS, FORTIFY_EFFICIENCY, ROUNDS, STARTING_UNITS};
use gbely_rules::{
    round_tenth, Cell, Command, DiscardReason, Neighbours, Observation, OwnCell, Owner, Terrain, VisibleCell,
};
use gbely_world::{Map, SeatRole};

mod bits;

use bits::Territory;

/// The owner value of a neutral (`hbp`) cell (written -1 in replays).
pub use gbely_world::replay::NEUTRAL;

pub use gbely_rules::{EndReason, Mode};

/// One owned cell's units after production (SPEC §4 step 1): two separate additions, in that
/// order (SPEC §6.6). The one place production is computed; replay frames use it too.
#[inline]
pub fn produced(units: f64, production: f64, base: bool) -> f64 {
    let u = units + production;
    if base {
        u + BASE_BONUS
    } else {
        u
    }
}

/// Settings of a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchConfig {
    /// Rounds to play (SPEC: 150).
    pub rounds: u32,
}

impl Default for MatchConfig {
    fn default() -> Self {
        MatchConfig { rounds: ROUNDS }
    }
}

/// One side's commands for a round, as the engine resolves them.
pub type Order = Result<Command, DiscardReason>;

/// What a side handed in for a round.
#[derive(Clone, Debug, PartialEq)]
pub enum SideInput {
    /// Its commands, in order (well-formed or already discarded at parsing).
    Orders(Vec<Order>),
    /// A violation (timeout, crash, unreadable answer): no commands this round.
    Violation,
    /// Nothing: the side is out of the game (or simply sent no answer to record).
    Nothing,
}

/// A discarded command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiscardEvent {
    /// The seat whose command it was.
    pub seat: u8,
    /// Its place in the seat's list of commands for the round (0-based).
    pub index: u32,
    /// Why it was discarded (SPEC §6.2).
    pub reason: DiscardReason,
}

/// A capture in the round: `seat` took `cell` from `from` (a seat or [`NEUTRAL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaptureEvent {
    /// The attacking seat.
    pub seat: u8,
    /// The cell attacked.
    pub cell: Cell,
    /// Its owner before the attack: a seat or [`NEUTRAL`].
    pub from: u8,
}

/// What happened in one round, besides the state change.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoundReport {
    /// The round resolved (0-based).
    pub round: u32,
    /// Commands discarded, in resolution order (SPEC §6.2).
    pub discarded: Vec<DiscardEvent>,
    /// Cells taken by a successful ATTACK, in resolution order.
    pub captures: Vec<CaptureEvent>,
    /// Attacks that failed: `seat` attacked `cell` (owned by `from`) and lost its units.
    pub failed: Vec<CaptureEvent>,
    /// Seats with a violation this round.
    pub violations: Vec<u8>,
    /// Seats disqualified this round.
    pub disqualified: Vec<u8>,
    /// Seats eliminated at the end of this round.
    pub eliminated: Vec<u8>,
}

#[derive(Clone, Debug, Default)]
struct SideState {
    violations: u32,
    disqualified: Option<u32>,
    eliminated: Option<u32>,
    /// Cells owned at the end of each round played.
    history: Vec<u32>,
}

/// One side's standing at the end (SPEC §10).
#[derive(Clone, Debug, PartialEq)]
pub struct SideOutcome {
    /// The seat (0-based, in the map's seat order).
    pub seat: u8,
    /// Cells it owns.
    pub cells: u32,
    /// `owned / cells × 100`; `None` when disqualified.
    pub score: Option<f64>,
    /// The tie-break: the first round at whose end it owned at least its final number of cells
    /// (lower is better); `None` when disqualified, or before any round ended.
    pub tiebreak_round: Option<u32>,
    /// Violations counted (SPEC §8).
    pub violations: u32,
    /// The round of its disqualifying (fourth) violation, if any.
    pub disqualified: Option<u32>,
    /// The round at whose end it had no cell left, if any.
    pub eliminated: Option<u32>,
}

/// The state of a match between two rounds, to save and restore ([`Match::snapshot`],
/// [`Match::restore`]): what search and pickling need. The map travels separately.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MatchState {
    /// Rounds the match plays ([`MatchConfig::rounds`]).
    pub rounds: u32,
    /// The current round ([`Match::round`]).
    pub round: u32,
    /// Whether this round's production was applied already.
    pub produced: bool,
    /// Why the match ended, once it has.
    pub ended: Option<EndReason>,
    /// The round in which the Council's seat lost its last cell ([`Match::council_fell`]).
    pub council_fell: Option<u32>,
    /// Per cell, row-major: the owning seat or [`NEUTRAL`].
    pub owner: Vec<u8>,
    /// Per cell, row-major: units (the garrison), unrounded.
    pub units: Vec<f64>,
    /// Per cell, row-major: fortification, unrounded.
    pub fortification: Vec<f64>,
    /// Per seat: violations so far, the rounds of its disqualification and elimination, and the
    /// cells it owned at the end of each round played.
    pub sides: Vec<SeatState>,
}

/// One seat's part of a [`MatchState`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SeatState {
    /// Violations so far.
    pub violations: u32,
    /// The round of its disqualification, if any.
    pub disqualified: Option<u32>,
    /// The round of its elimination, if any.
    pub eliminated: Option<u32>,
    /// Cells owned at the end of each round played (the tie-break is read from it).
    pub history: Vec<u32>,
}

/// A match in progress.
#[derive(Clone, Debug)]
pub struct Match {
    map: Arc<Map>,
    mode: Mode,
    rounds: u32,
    round: u32,
    produced: bool,
    ended: Option<EndReason>,
    council_fell: Option<u32>,
    owner: Vec<u8>,
    units: Vec<f64>,
    fort: Vec<f64>,
    production: Vec<f64>,
    is_base: Vec<bool>,
    territory: Vec<Territory>,
    counts: Vec<u32>,
    /// Per cell, its ready units in the side's step that last touched it (SPEC §6.1) and that
    /// step: side by side, so a command reads one cache line for both.
    ready: Vec<Ready>,
    step: u32,
    sides: Vec<SideState>,
    council_seat: Option<u8>,
}

/// A cell's ready units in a side's step ([`Board::ready_of`]).
#[derive(Clone, Copy, Debug, Default)]
struct Ready {
    units: f64,
    step: u32,
}

/// What one side's commands read and change ([`Match::board`]): the per-cell slices all of the
/// map's length.
struct Board<'a> {
    owner: &'a mut [u8],
    units: &'a mut [f64],
    fort: &'a mut [f64],
    ready: &'a mut [Ready],
    terrains: &'a [Terrain],
    neighbours: &'a [Neighbours],
    territory: &'a mut [Territory],
    counts: &'a mut [u32],
    /// The side's step (SPEC §6.1): ready units of another step are stale.
    step: u32,
    final_mode: bool,
    council_seat: Option<u8>,
}

impl Board<'_> {
    /// The ready units of an own cell in this side's step (SPEC §6.1), initialised on first use:
    /// every modification of an own cell's units goes through here first.
    #[inline]
    fn ready_of(&mut self, i: usize) -> f64 {
        let r = &mut self.ready[i];
        if r.step != self.step {
            *r = Ready { units: self.units[i], step: self.step };
        }
        r.units
    }

    /// Applies one well-formed command for `seat`, or says why it is discarded.
    #[inline]
    fn apply(&mut self, seat: u8, cmd: &Command, report: &mut RoundReport) -> Result<(), DiscardReason> {
        let n = self.owner.len();
        let amount = cmd.amount();
        // Typed commands from in-process agents are checked as the wire form is.
        let cells_ok = match *cmd {
            Command::Move { from, to, .. } | Command::Attack { from, to, .. } => from.index() < n && to.index() < n,
            Command::Fortify { cell, .. } => cell.index() < n,
        };
        if !cells_ok {
            return Err(DiscardReason::UnknownCell);
        }
        // Finite and positive (NaN fails both comparisons).
        if !(amount > 0.0 && amount < f64::INFINITY) {
            return Err(DiscardReason::InvalidAmount);
        }
        // `amount.min(ready)` for an amount and ready units that are numbers (never NaN).
        let at_most = |amount: f64, ready: f64| if amount < ready { amount } else { ready };
        match *cmd {
            Command::Move { from, to, amount } => {
                let (z, na) = (from.index(), to.index());
                if self.owner[z] != seat {
                    return Err(DiscardReason::SourceNotOwned);
                }
                if self.owner[na] != seat {
                    return Err(DiscardReason::TargetNotOwned);
                }
                if !self.neighbours[z].contains(to) {
                    return Err(DiscardReason::NotAdjacent);
                }
                let ready = self.ready_of(z);
                if ready <= 0.0 {
                    return Err(DiscardReason::NoReadyUnits);
                }
                let k = at_most(amount, ready);
                self.ready[z].units = nonneg(ready - k);
                self.units[z] = nonneg(self.units[z] - k);
                let arrive = k * self.terrains[na].passability();
                self.ready_of(na); // fix the target's ready before units arrive
                self.units[na] += arrive;
                self.units[z] += k - arrive;
            }
            Command::Attack { from, to, amount } => {
                let (z, na) = (from.index(), to.index());
                if self.owner[z] != seat {
                    return Err(DiscardReason::SourceNotOwned);
                }
                if !self.neighbours[z].contains(to) {
                    return Err(DiscardReason::NotAdjacent);
                }
                let target_owner = self.owner[na];
                if target_owner == seat {
                    return Err(DiscardReason::TargetOwnCell);
                }
                if self.final_mode
                    && target_owner != NEUTRAL
                    && Some(seat) != self.council_seat
                    && Some(target_owner) != self.council_seat
                {
                    return Err(DiscardReason::TargetFinalist);
                }
                let ready = self.ready_of(z);
                if ready <= 0.0 {
                    return Err(DiscardReason::NoReadyUnits);
                }
                let k = at_most(amount, ready);
                self.ready[z].units = nonneg(ready - k);
                self.units[z] = nonneg(self.units[z] - k);
                let bonus = self.terrains[na].defence_bonus();
                let defence = self.units[na] * bonus + self.fort[na];
                if k > defence {
                    if target_owner != NEUTRAL {
                        self.territory[target_owner as usize].clear(to.0);
                        self.counts[target_owner as usize] -= 1;
                    }
                    self.territory[seat as usize].set(to.0);
                    self.counts[seat as usize] += 1;
                    self.owner[na] = seat;
                    self.units[na] = k - defence;
                    self.fort[na] = 0.0;
                    // Units that arrive by capture do not act again this round.
                    self.ready[na] = Ready { units: 0.0, step: self.step };
                    report.captures.push(CaptureEvent { seat, cell: to, from: target_owner });
                } else {
                    if k <= self.units[na] * bonus {
                        self.units[na] = nonneg(self.units[na] - k / bonus);
                    } else {
                        self.fort[na] = nonneg(self.fort[na] - (k - self.units[na] * bonus));
                        self.units[na] = 0.0;
                    }
                    report.failed.push(CaptureEvent { seat, cell: to, from: target_owner });
                }
            }
            Command::Fortify { cell, amount } => {
                let i = cell.index();
                if self.owner[i] != seat {
                    return Err(DiscardReason::SourceNotOwned);
                }
                let ready = self.ready_of(i);
                if ready <= 0.0 {
                    return Err(DiscardReason::NoReadyUnits);
                }
                let k = at_most(amount, ready);
                self.ready[i].units = nonneg(ready - k);
                self.units[i] = nonneg(self.units[i] - k);
                self.fort[i] += FORTIFY_EFFICIENCY * k;
            }
        }
        Ok(())
    }
}

#[inline]
fn nonneg(x: f64) -> f64 {
    if x < 0.0 {
        0.0
    } else {
        x
    }
}

impl Match {
    /// A match at the start of round 0 (production not yet applied).
    pub fn new(map: Arc<Map>, config: MatchConfig) -> Match {
        let n = map.len();
        let seats = map.seats().len();
        let armies = map.seats().iter().filter(|s| s.role == SeatRole::Army).count();
        let mode = if seats == 2 { Mode::Duel } else { Mode::Final };
        let council_seat = map.seats().iter().position(|s| s.role == SeatRole::Council).map(|k| k as u8);
        debug_assert!(mode == Mode::Duel || armies + 1 == seats);
        let mut owner = vec![NEUTRAL; n];
        let mut units = vec![0.0; n];
        let mut territory = vec![Territory::new(map.width(), map.height()); seats];
        let mut counts = vec![0; seats];
        for c in map.grid().cells() {
            let i = c.index();
            units[i] = map.garrison(c) as f64;
            if let Some(s) = map.start_owner(c) {
                owner[i] = s;
                territory[s as usize].set(c.0);
                counts[s as usize] += 1;
            }
        }
        for s in map.seats() {
            units[s.base.index()] = STARTING_UNITS;
        }
        let production = map.terrains().iter().map(|t| t.production()).collect();
        let is_base = map.grid().cells().map(|c| map.is_base(c)).collect();
        Match {
            mode,
            rounds: config.rounds,
            round: 0,
            produced: false,
            ended: if config.rounds == 0 { Some(EndReason::Rounds) } else { None },
            council_fell: None,
            owner,
            units,
            fort: vec![0.0; n],
            production,
            is_base,
            territory,
            counts,
            ready: vec![Ready::default(); n],
            step: 0,
            sides: vec![SideState::default(); seats],
            council_seat,
            map,
        }
    }

    /// The map played on.
    pub fn map(&self) -> &Arc<Map> {
        &self.map
    }
    /// Duel (two seats) or final (more), as the map's seats imply (SPEC §9).
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// The current round (the last one played once the match is over).
    pub fn round(&self) -> u32 {
        self.round
    }
    /// Rounds the match plays at most ([`MatchConfig::rounds`]).
    pub fn rounds(&self) -> u32 {
        self.rounds
    }
    /// Number of seats (sides), eliminated and disqualified ones included.
    pub fn seats(&self) -> usize {
        self.sides.len()
    }
    /// Whether the match has ended (SPEC §4 step 4): no more rounds to resolve.
    pub fn is_over(&self) -> bool {
        self.ended.is_some()
    }
    /// Why the match ended; `None` while it is being played.
    pub fn end_reason(&self) -> Option<EndReason> {
        self.ended
    }
    /// The round in which the Council's seat lost its last cell (blitz record).
    pub fn council_fell(&self) -> Option<u32> {
        self.council_fell
    }
    /// The seat owning `c` (the map's numbering), or [`NEUTRAL`].
    pub fn owner(&self, c: Cell) -> u8 {
        self.owner[c.index()]
    }
    /// The units on `c`, unrounded.
    pub fn units(&self, c: Cell) -> f64 {
        self.units[c.index()]
    }
    /// The fortification of `c`, unrounded.
    pub fn fortification(&self, c: Cell) -> f64 {
        self.fort[c.index()]
    }
    /// Every cell's owner, row-major: a seat or [`NEUTRAL`].
    pub fn owners(&self) -> &[u8] {
        &self.owner
    }
    /// Every cell's units, row-major, unrounded.
    pub fn all_units(&self) -> &[f64] {
        &self.units
    }
    /// Every cell's fortification, row-major, unrounded.
    pub fn all_fortifications(&self) -> &[f64] {
        &self.fort
    }
    /// Every cell's owner, units and fortification as a replay writes them.
    pub fn cell_states(&self) -> gbely_world::replay::FinalState {
        gbely_world::replay::FinalState::of(&self.owner, &self.units, &self.fort)
    }
    /// Cells owned by a seat now.
    pub fn cell_count(&self, seat: u8) -> u32 {
        self.counts[seat as usize]
    }
    /// Units of a seat now (sum over its cells, in row-major order).
    pub fn unit_total(&self, seat: u8) -> f64 {
        let mut sum = 0.0;
        self.territory[seat as usize].for_each(|c| sum += self.units[c as usize]);
        sum
    }
    /// Violations of a seat so far (SPEC §8).
    pub fn violations(&self, seat: u8) -> u32 {
        self.sides[seat as usize].violations
    }
    /// Whether the side still decides: neither eliminated nor disqualified.
    pub fn is_active(&self, seat: u8) -> bool {
        let s = &self.sides[seat as usize];
        s.eliminated.is_none() && s.disqualified.is_none()
    }
    /// Cells owned per round end so far.
    pub fn history(&self, seat: u8) -> &[u32] {
        &self.sides[seat as usize].history
    }

    /// Sets a cell's state directly: for crafted positions in tests and tools.
    pub fn set_cell(&mut self, c: Cell, owner: u8, units: f64, fortification: f64) {
        let i = c.index();
        let old = self.owner[i];
        if old != NEUTRAL {
            self.territory[old as usize].clear(c.0);
            self.counts[old as usize] -= 1;
        }
        if owner != NEUTRAL {
            self.territory[owner as usize].set(c.0);
            self.counts[owner as usize] += 1;
        }
        self.owner[i] = owner;
        self.units[i] = units;
        self.fort[i] = fortification;
    }

    /// Step 1 of a round: production (idempotent within a round; called by `observe` and
    /// `resolve_round` when needed).
    pub fn start_round(&mut self) {
        if self.produced || self.ended.is_some() {
            return;
        }
        self.produced = true;
        for (s, t) in self.territory.iter().enumerate() {
            let _ = s;
            t.for_each(|c| {
                let i = c as usize;
                self.units[i] = produced(self.units[i], self.production[i], self.is_base[i]);
            });
        }
    }

    /// How `observer` sees the owner `owner` (SPEC §1, §9).
    pub fn label(&self, observer: u8, owner: u8) -> Owner {
        if owner == NEUTRAL {
            return Owner::Neutral;
        }
        match self.mode {
            Mode::Duel => Owner::Council,
            Mode::Final => {
                let council = self.council_seat.unwrap_or(u8::MAX);
                if owner == council {
                    Owner::Council
                } else if observer == council {
                    Owner::Army(owner + 1)
                } else {
                    let armies = self.sides.len() as i32 - 1;
                    let rel = (owner as i32 - observer as i32).rem_euclid(armies);
                    Owner::Army(rel as u8 + 1)
                }
            }
        }
    }

    /// Fills `obs` with what `seat` sees now (SPEC §5), reusing its buffers.
    pub fn observe_into(&mut self, seat: u8, obs: &mut Observation) {
        let map = Arc::clone(&self.map);
        let grid = map.grid();
        self.observe_numbered_into(seat, obs, |c| (c, *grid.neighbours(c)));
    }

    /// [`observe_into`](Match::observe_into) with every cell in another numbering of the grid:
    /// `number(c)` is the map's cell `c` and its neighbours there (the numbering must be
    /// row-major, as the agents' is, so that the lists keep their order). In-process agents take
    /// their observation this way, in the agents' numbering, without a second pass over it.
    pub fn observe_numbered_into(
        &mut self,
        seat: u8,
        obs: &mut Observation,
        number: impl Fn(Cell) -> (Cell, Neighbours),
    ) {
        self.start_round();
        obs.round = self.round;
        obs.base = number(self.map.seats()[seat as usize].base).0;
        obs.own.clear();
        obs.visible.clear();
        let terrains = self.map.terrains();
        let t = &self.territory[seat as usize];
        obs.own.reserve(self.counts[seat as usize] as usize);
        t.for_each(|c| {
            let i = c as usize;
            let (cell, neighbours) = number(Cell(c));
            obs.own.push(OwnCell {
                cell,
                terrain: terrains[i],
                units: round_tenth(self.units[i]),
                fortification: round_tenth(self.fort[i]),
                neighbours,
            });
        });
        t.for_each_border(|c| {
            let i = c as usize;
            obs.visible.push(VisibleCell {
                cell: number(Cell(c)).0,
                owner: self.label(seat, self.owner[i]),
                garrison: round_tenth(self.units[i]),
                fortification: round_tenth(self.fort[i]),
                terrain: terrains[i],
            });
        });
    }

    /// What `seat` sees now.
    pub fn observe(&mut self, seat: u8) -> Observation {
        let mut obs = Observation::default();
        self.observe_into(seat, &mut obs);
        obs
    }

    /// The seats in resolution order this round: starting at `round mod n`, cyclically (SPEC §4).
    pub fn resolution_order(&self) -> impl Iterator<Item = u8> {
        let n = self.sides.len() as u32;
        let start = self.round % n;
        (0..n).map(move |k| ((start + k) % n) as u8)
    }

    /// Steps 3 and 4 of a round: resolves every side's input, then the end check.
    /// `inputs[seat]` is that seat's input; inactive seats are skipped whatever they hold.
    pub fn resolve_round(&mut self, inputs: &[SideInput], report: &mut RoundReport) {
        assert!(!self.is_over(), "the match is over");
        assert_eq!(inputs.len(), self.sides.len(), "one input per seat");
        self.start_round();
        report.round = self.round;
        report.discarded.clear();
        report.captures.clear();
        report.failed.clear();
        report.violations.clear();
        report.disqualified.clear();
        report.eliminated.clear();
        let round = self.round;
        for (seat, input) in inputs.iter().enumerate() {
            if self.is_active(seat as u8) && matches!(input, SideInput::Violation) {
                let side = &mut self.sides[seat];
                side.violations += 1;
                report.violations.push(seat as u8);
                if side.violations > ALLOWED_VIOLATIONS {
                    side.disqualified = Some(round);
                    report.disqualified.push(seat as u8);
                }
            }
        }
        // The iterator holds no borrow of `self` (only the count and the start).
        for seat in self.resolution_order() {
            let s = &self.sides[seat as usize];
            if s.eliminated.is_some() || s.disqualified.is_some() {
                continue;
            }
            if let SideInput::Orders(orders) = &inputs[seat as usize] {
                self.step += 1;
                let mut board = self.board();
                for (index, order) in orders.iter().enumerate() {
                    let outcome = match order {
                        Ok(cmd) => board.apply(seat, cmd, report),
                        Err(reason) => Err(*reason),
                    };
                    if let Err(reason) = outcome {
                        report.discarded.push(DiscardEvent { seat, index: index as u32, reason });
                    }
                }
            }
        }
        self.end_round(report);
    }

    fn end_round(&mut self, report: &mut RoundReport) {
        let round = self.round;
        let mut ended = None;
        for seat in 0..self.sides.len() {
            let count = self.counts[seat];
            let side = &mut self.sides[seat];
            side.history.push(count);
            if count == 0 && side.eliminated.is_none() {
                side.eliminated = Some(round);
                report.eliminated.push(seat as u8);
                if self.council_seat == Some(seat as u8) && self.council_fell.is_none() {
                    self.council_fell = Some(round);
                }
            }
        }
        match self.mode {
            Mode::Duel => {
                if !report.eliminated.is_empty() {
                    ended = Some(EndReason::Elimination);
                } else if !report.disqualified.is_empty() {
                    ended = Some(EndReason::Disqualification);
                }
            }
            Mode::Final => {
                if self.council_fell.is_some() {
                    ended = Some(EndReason::CouncilFell);
                }
            }
        }
        if ended.is_none() && round + 1 >= self.rounds {
            ended = Some(EndReason::Rounds);
        }
        if ended.is_some() {
            self.ended = ended;
        } else {
            self.round += 1;
            self.produced = false;
        }
    }

    /// The cells' state as one side's commands change it: every per-cell slice cut to the map's
    /// length, so that a command checks its cells once against that length and its reads and
    /// writes need no further bounds checks.
    fn board(&mut self) -> Board<'_> {
        let n = self.owner.len();
        let grid = self.map.grid();
        Board {
            owner: &mut self.owner[..n],
            units: &mut self.units[..n],
            fort: &mut self.fort[..n],
            ready: &mut self.ready[..n],
            terrains: &self.map.terrains()[..n],
            neighbours: &grid.all_neighbours()[..n],
            territory: &mut self.territory,
            counts: &mut self.counts,
            step: self.step,
            final_mode: self.mode == Mode::Final,
            council_seat: self.council_seat,
        }
    }

    /// The standings now (final once the match is over).
    pub fn outcome(&self) -> Vec<SideOutcome> {
        let total = self.owner.len() as f64;
        self.sides
            .iter()
            .enumerate()
            .map(|(seat, s)| {
                let cells = self.counts[seat];
                let dq = s.disqualified.is_some();
                SideOutcome {
                    seat: seat as u8,
                    cells,
                    score: (!dq).then(|| cells as f64 / total * 100.0),
                    tiebreak_round: if dq {
                        None
                    } else {
                        s.history.iter().position(|&h| h >= cells).map(|r| r as u32)
                    },
                    violations: s.violations,
                    disqualified: s.disqualified,
                    eliminated: s.eliminated,
                }
            })
            .collect()
    }

    /// The state between rounds, to restore later with [`Match::restore`].
    pub fn snapshot(&self) -> MatchState {
        MatchState {
            rounds: self.rounds,
            round: self.round,
            produced: self.produced,
            ended: self.ended,
            council_fell: self.council_fell,
            owner: self.owner.clone(),
            units: self.units.clone(),
            fortification: self.fort.clone(),
            sides: self
                .sides
                .iter()
                .map(|s| SeatState {
                    violations: s.violations,
                    disqualified: s.disqualified,
                    eliminated: s.eliminated,
                    history: s.history.clone(),
                })
                .collect(),
        }
    }

    /// The match on `map` in the state `s` (from [`Match::snapshot`] on the same map). A state
    /// that cannot belong to the map (sizes, owners, negative or non-finite values) is refused
    /// with what is wrong.
    pub fn restore(map: Arc<Map>, s: MatchState) -> Result<Match, String> {
        let n = map.len();
        let seats = map.seats().len();
        if s.owner.len() != n || s.units.len() != n || s.fortification.len() != n {
            return Err(format!("the state has {} cells, the map {} has {n}", s.owner.len(), map.name()));
        }
        if s.sides.len() != seats {
            return Err(format!("the state has {} seats, the map {} has {seats}", s.sides.len(), map.name()));
        }
        if let Some(i) = s.owner.iter().position(|&o| o != NEUTRAL && o as usize >= seats) {
            return Err(format!(
                "cell {} has owner {}: the map has {seats} seats",
                map.grid().id(Cell(i as u32)),
                s.owner[i]
            ));
        }
        let bad = |v: &[f64]| v.iter().position(|x| !(x.is_finite() && *x >= 0.0));
        if let Some(i) = bad(&s.units).or_else(|| bad(&s.fortification)) {
            return Err(format!("cell {} has a negative or non-finite value", map.grid().id(Cell(i as u32))));
        }
        if s.round >= s.rounds.max(1) || s.sides.iter().any(|x| x.history.len() as u32 > s.round + 1) {
            return Err(format!("round {} of {} does not fit the state", s.round, s.rounds));
        }
        let mut m = Match::new(map, MatchConfig { rounds: s.rounds });
        let mut territory = vec![Territory::new(m.map.width(), m.map.height()); seats];
        let mut counts = vec![0; seats];
        for (i, &o) in s.owner.iter().enumerate() {
            if o != NEUTRAL {
                territory[o as usize].set(i as u32);
                counts[o as usize] += 1;
            }
        }
        m.round = s.round;
        m.produced = s.produced;
        m.ended = s.ended;
        m.council_fell = s.council_fell;
        m.owner = s.owner;
        m.units = s.units;
        m.fort = s.fortification;
        m.territory = territory;
        m.counts = counts;
        m.sides = s
            .sides
            .into_iter()
            .map(|x| SideState {
                violations: x.violations,
                disqualified: x.disqualified,
                eliminated: x.eliminated,
                history: x.history,
            })
            .collect();
        Ok(m)
    }

    /// Terrain of a cell (shortcut for callers holding only the match).
    pub fn terrain(&self, c: Cell) -> Terrain {
        self.map.terrain(c)
    }
}
