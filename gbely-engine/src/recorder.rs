//! Writing replays: the replay document (`gbely_world::Replay`) built round by round while a
//! match is played, in memory or streamed to a file ([`ReplayWriter`]) so that memory does not
//! grow with the match; and the result section of a match ([`match_result`]). Reading replays is
//! [`crate::replays`]'s.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use gbely_rules::{Command, DiscardReason, Notes};
use gbely_world::replay::{
    owner_code, Answer, CellChange, CompactCommands, Cut, Discarded, FinalState, ForkRecord, MapRecord, MatchResult,
    SeatNotes, SeatRecord, SideResult, Turn, REPLAY_FORMAT, REPLAY_VERSION,
};
use gbely_world::Replay;
use serde_json::Value;

use crate::sim::{EndReason, Match, Order, RoundReport, SideOutcome};

/// The result section of a replay for the match as it stands: `ended_by` is
/// [`EndReason::Unfinished`] while it is not over.
pub fn match_result(m: &Match, names: &[String]) -> MatchResult {
    MatchResult {
        last_round: m.round(),
        ended_by: m.end_reason().unwrap_or(EndReason::Unfinished),
        council_fell: m.council_fell(),
        sides: m.outcome().iter().map(|o| side_result(o, &names[o.seat as usize])).collect(),
    }
}

/// The result of a match that ends here: when it is not over, it was stopped before its end
/// (`ended_by: interrupted`).
pub fn stopped_result(m: &Match, names: &[String]) -> MatchResult {
    let mut result = match_result(m, names);
    if !m.is_over() {
        result.ended_by = EndReason::Interrupted;
    }
    result
}

/// One side of a replay's result.
pub fn side_result(o: &SideOutcome, name: &str) -> SideResult {
    SideResult {
        seat: o.seat,
        name: name.to_string(),
        cells: o.cells,
        score: o.score,
        tiebreak_round: o.tiebreak_round,
        violations: o.violations,
        disqualified: o.disqualified.is_some(),
        eliminated: o.eliminated,
    }
}

/// Most discarded items of one answer a replay records one by one; the rest are counted
/// ([`Cut`]). An agent that means to play discards a few a round (the template: about 6).
pub const KEPT_DISCARDS_PER_ANSWER: u32 = 1000;
// The answer reader keeps more discarded items than are recorded: its counted ones fall past the cut.
const _: () = assert!(crate::wire::DISCARDED_ITEMS_KEPT > KEPT_DISCARDS_PER_ANSWER as usize);

/// The raw items of an answer's commands, for the ones the replay keeps as received.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RawItems<'a> {
    /// None (typed commands).
    None,
    /// The whole list as received, by the commands' index.
    ByIndex(&'a [Value]),
    /// The items of the discarded commands only (those whose order is an error), in order.
    OfDiscarded(&'a [Value]),
}
/// Most discarded items of one seat a replay records one by one over a whole match.
pub const KEPT_DISCARDS_PER_SEAT: u32 = 20_000;
/// Most JSON text of unparsable items of one answer a replay keeps as received.
pub const KEPT_RAW_BYTES_PER_ANSWER: usize = 64 << 10;
/// Most JSON text of unparsable items of one seat a replay keeps over a whole match.
pub const KEPT_RAW_BYTES_PER_SEAT: usize = 1 << 20;
/// Bytes of notes a seat's allowance grows by each round: an agent that writes up to this much
/// every round keeps every round's notes, however long the match. What a round does not use is
/// kept for later rounds.
pub const NOTE_BYTES_PER_ROUND: usize = 2 << 10;
/// A seat's allowance of notes before round 0: a round's notes at their bounds
/// (`gbely_rules::Notes`: 2 000 characters and 64 cell notes of 200, 15 312 bytes in ASCII) fit
/// it whole, in any round.
pub const NOTE_BYTES_AT_START: usize = 16 << 10;
/// Most bytes of notes of one seat a replay keeps over a whole match, however long (a 150-round
/// match allows at most [`NOTE_BYTES_AT_START`] + 149 × [`NOTE_BYTES_PER_ROUND`], 314 KiB);
/// after them, one mark says the notes were cut.
pub const KEPT_NOTE_BYTES_PER_SEAT: usize = 1 << 20;

/// The bytes a seat's notes take against its allowance: the text, each cell's note and 8 bytes
/// for its cell, and each drawing's 16 bytes and its label.
fn note_bytes(n: &Notes) -> usize {
    let label = |d: &gbely_rules::Drawing| match &d.shape {
        gbely_rules::Shape::Label(_, t) => t.len(),
        _ => 0,
    };
    n.text.len()
        + n.cells.iter().map(|(_, t)| t.len() + 8).sum::<usize>()
        + n.draw.iter().map(|d| 16 + label(d)).sum::<usize>()
}

/// A drawing as the replay keeps it.
fn drawn(d: &gbely_rules::Drawing) -> gbely_world::replay::Drawn {
    use gbely_rules::Shape;
    let mut out = gbely_world::replay::Drawn { color: d.color_text(), ..Default::default() };
    match &d.shape {
        Shape::Dot(c) => out.dot = Some(c.0),
        Shape::Fill(c) => out.fill = Some(c.0),
        Shape::Line(a, b) => out.line = Some([a.0, b.0]),
        Shape::Label(c, t) => {
            out.label = Some(c.0);
            out.text = t.clone();
        }
    }
    out
}

/// What a seat may still have recorded one by one of its discarded items in this match.
#[derive(Clone, Copy, Debug)]
struct Allowance {
    discards: u32,
    raw_bytes: usize,
}

impl Default for Allowance {
    fn default() -> Self {
        Allowance { discards: KEPT_DISCARDS_PER_SEAT, raw_bytes: KEPT_RAW_BYTES_PER_SEAT }
    }
}

/// Builds a replay while a match is played: in memory, or streamed to a file round by round.
#[derive(Debug)]
pub struct Recorder {
    after_production: (Vec<u8>, Vec<f64>, Vec<f64>),
    /// The state at the end of the last round recorded: the final state of an interrupted match.
    end_state: FinalState,
    turns: Vec<Turn>,
    stream: Option<Stream>,
    /// Records nothing: only the last round's turn is kept, for an observer ([`Recorder::observing`]).
    observing: bool,
    /// The last round's turn when it is streamed or only observed (in memory: the last of `turns`).
    last: Option<Turn>,
    /// Per seat, the built-in agent whose commands are regenerated rather than stored.
    builtins: Vec<Option<String>>,
    /// Whether turns carry their cell changes (version 1's form; readers rebuilding a version 2
    /// file's rounds want them, files leave them out).
    changes: bool,
    /// Per seat, what is left of its match's allowance of discarded items recorded one by one.
    allowances: Vec<Allowance>,
    /// Per seat, the bytes of notes recorded so far (marks included), and whether the match's
    /// [`KEPT_NOTE_BYTES_PER_SEAT`] are used.
    notes_spent: Vec<(usize, bool)>,
    /// Where a forked match came from (set before the head is written).
    fork: Option<ForkRecord>,
}

/// A replay being written to its file, and the first error writing it, if any (the match goes
/// on without the file rather than failing).
#[derive(Debug)]
struct Stream {
    writer: ReplayWriter,
    error: Option<String>,
}

impl Recorder {
    /// Records in memory ([`Recorder::finish`] gives the [`Replay`]).
    pub fn new() -> Recorder {
        Recorder {
            builtins: Vec::new(),
            changes: false,
            after_production: (Vec::new(), Vec::new(), Vec::new()),
            end_state: FinalState { owner: Vec::new(), units: Vec::new(), fortification: Vec::new() },
            turns: Vec::new(),
            stream: None,
            observing: false,
            last: None,
            allowances: Vec::new(),
            notes_spent: Vec::new(),
            fork: None,
        }
    }

    /// Records that the match is a fork of another ([`Replay::fork`]); before the head is written.
    pub fn set_fork(&mut self, fork: Option<ForkRecord>) {
        self.fork = fork;
    }

    /// Records nothing but keeps each round's turn until the next (see [`Recorder::last_turn`]):
    /// what a live page shows of a match that is not recorded, with the replay's bounds and
    /// notes' budget. Call [`Recorder::start`] before round 0.
    pub fn observing(builtins: &[Option<String>]) -> Recorder {
        let mut r = Recorder::new();
        r.builtins = builtins.to_vec();
        r.observing = true;
        r
    }

    /// Whether this recorder only keeps the last round for an observer ([`Recorder::observing`]).
    pub fn is_observing(&self) -> bool {
        self.observing
    }

    /// The turn of the last round recorded, as the replay has it (streamed, in memory or only
    /// observed).
    pub fn last_turn(&self) -> Option<&Turn> {
        self.last.as_ref().or_else(|| self.turns.last())
    }

    /// The compact record (replay version 2) of a seat's answer, made after the round was
    /// resolved: each item a command as parsed or, when it did not parse, the item as received
    /// (`raw[index]`). `discarded` are the seat's discard events of the round, in index order.
    ///
    /// Bounded against a flooding agent: once recording a discarded item would pass
    /// [`KEPT_DISCARDS_PER_ANSWER`], [`KEPT_RAW_BYTES_PER_ANSWER`] or what is left of the seat's
    /// match allowance ([`KEPT_DISCARDS_PER_SEAT`], [`KEPT_RAW_BYTES_PER_SEAT`]), the answer is
    /// [`Cut`] there: after it only the commands carried out are kept, the discarded items counted.
    ///
    /// `left_out`: discarded items the answer's reader counted rather than held
    /// ([`crate::wire::read_answer`]: all past the first [`crate::wire::DISCARDED_ITEMS_KEPT`]
    /// discarded items, so past the cut): counted with the cut's.
    pub(crate) fn compact(
        &mut self,
        seat: usize,
        orders: &[Order],
        raw: RawItems<'_>,
        discarded: &[(u32, DiscardReason)],
        left_out: &BTreeMap<DiscardReason, u32>,
    ) -> CompactCommands {
        if self.allowances.len() <= seat {
            self.allowances.resize(seat + 1, Allowance::default());
        }
        let allowance = &mut self.allowances[seat];
        let mut c = CompactCommands::default();
        let (mut kept, mut kept_raw) = (0u32, 0usize);
        let mut events = discarded.iter().peekable();
        let mut unparsed = 0;
        for (index, order) in orders.iter().enumerate() {
            let reason = events.next_if(|(i, _)| *i as usize == index).map(|&(_, r)| r);
            let raw_item = match raw {
                RawItems::None => None,
                RawItems::ByIndex(items) => items.get(index),
                RawItems::OfDiscarded(items) if order.is_err() => {
                    unparsed += 1;
                    items.get(unparsed - 1)
                }
                RawItems::OfDiscarded(_) => None,
            };
            if let Some(cut) = c.cut.as_mut() {
                match reason {
                    Some(r) => *cut.left_out.entry(r).or_default() += 1,
                    None => push_command(&mut c, order),
                }
                continue;
            }
            if let Some(r) = reason {
                let item = raw_item.filter(|_| order.is_err());
                let room = (KEPT_RAW_BYTES_PER_ANSWER - kept_raw).min(allowance.raw_bytes);
                let size = match item {
                    Some(v) => json_len_within(v, room),
                    None => Some(0),
                };
                match size {
                    Some(size) if kept < KEPT_DISCARDS_PER_ANSWER && allowance.discards > 0 => {
                        kept += 1;
                        allowance.discards -= 1;
                        kept_raw += size;
                        allowance.raw_bytes -= size;
                    }
                    _ => {
                        let at = c.kinds.len() as u32;
                        c.cut = Some(Cut { at, left_out: [(r, 1)].into() });
                        continue;
                    }
                }
            }
            match order {
                Ok(_) => push_command(&mut c, order),
                Err(_) => {
                    c.kinds.push('r');
                    c.raw.push(raw_item.cloned().unwrap_or(Value::Null));
                }
            }
        }
        if !left_out.is_empty() {
            let at = c.kinds.len() as u32;
            let cut = c.cut.get_or_insert_with(|| Cut { at, left_out: BTreeMap::new() });
            for (reason, n) in left_out {
                *cut.left_out.entry(*reason).or_default() += n;
            }
        }
        c
    }

    /// Streams to `writer`, starting with the replay's head (map, seats); call before round 0.
    pub fn streaming(
        mut writer: ReplayWriter,
        m: &Match,
        names: &[String],
        builtins: &[Option<String>],
        fork: Option<ForkRecord>,
    ) -> Recorder {
        let mut r = Recorder::new();
        r.builtins = builtins.to_vec();
        r.fork = fork;
        r.start(m);
        let head = r.document(m, names, match_result(m, names), Vec::new());
        let error = writer.head(&head).err().map(|e| e.to_string());
        r.stream = Some(Stream { writer, error });
        r
    }

    fn snapshot_end(&mut self, m: &Match) {
        self.end_state.set(m.owners(), m.all_units(), m.all_fortifications());
    }

    /// Keeps every round's cell changes in the turns (for readers; files leave them out).
    pub fn keep_changes(&mut self) {
        self.changes = true;
    }

    /// Seats whose built-in agent's commands are regenerated on reading (see [`Answer::Regen`]).
    pub fn set_builtins(&mut self, builtins: &[Option<String>]) {
        self.builtins = builtins.to_vec();
    }

    /// Call once before round 0 (the state an interrupted match ends with if no round was played).
    pub fn start(&mut self, m: &Match) {
        self.snapshot_end(m);
    }

    /// Whether the replay is streamed to a file ([`Recorder::streaming`]) rather than built in
    /// memory.
    pub fn is_streaming(&self) -> bool {
        self.stream.is_some()
    }

    /// Call after production, before resolution.
    pub fn before_resolution(&mut self, m: &Match) {
        let (o, u, f) = &mut self.after_production;
        o.clear();
        o.extend_from_slice(m.owners());
        u.clear();
        u.extend_from_slice(m.all_units());
        f.clear();
        f.extend_from_slice(m.all_fortifications());
    }

    /// The notes a replay keeps of round `round`: each seat's when they fit its allowance,
    /// [`NOTE_BYTES_AT_START`] + [`NOTE_BYTES_PER_ROUND`] × `round` less what it has recorded, and
    /// [`KEPT_NOTE_BYTES_PER_SEAT`] over the match. A round's notes that do not fit are replaced
    /// by a mark (the seat's later rounds are kept again as its allowance grows); past the match's
    /// bytes, one mark, and nothing more.
    fn keep_notes(&mut self, round: u32, notes: Vec<(u8, Notes)>) -> Vec<SeatNotes> {
        let mut kept = Vec::new();
        let allowed = NOTE_BYTES_AT_START.saturating_add(NOTE_BYTES_PER_ROUND.saturating_mul(round as usize));
        for (seat, n) in notes.into_iter().filter(|(_, n)| !n.is_empty()) {
            if self.notes_spent.len() <= seat as usize {
                self.notes_spent.resize(seat as usize + 1, (0, false));
            }
            let (spent, done) = &mut self.notes_spent[seat as usize];
            if *done {
                continue;
            }
            let size = note_bytes(&n);
            if *spent + size > KEPT_NOTE_BYTES_PER_SEAT {
                *done = true;
                let text =
                    format!("[notes cut: the match's {} KiB for notes are used]", KEPT_NOTE_BYTES_PER_SEAT >> 10);
                kept.push(SeatNotes { seat, text, ..SeatNotes::default() });
            } else if *spent + size > allowed {
                let text = format!(
                    "[notes cut: {size} bytes, more than the {} left of {} KiB a round]",
                    allowed.saturating_sub(*spent),
                    NOTE_BYTES_PER_ROUND >> 10
                );
                *spent += text.len();
                kept.push(SeatNotes { seat, text, ..SeatNotes::default() });
            } else {
                *spent += size;
                let cells = n.cells.into_iter().map(|(c, t)| (c.0, t)).collect();
                let draw = n.draw.iter().map(drawn).collect();
                kept.push(SeatNotes { seat, text: n.text, cells, draw });
            }
        }
        kept
    }

    /// Call after resolution with the answers as received and the seats' notes on the round.
    /// `answer_ms`: per seat, the milliseconds its answer took (`None`: not timed); recorded only
    /// when some seat was timed.
    pub fn after_resolution(
        &mut self,
        m: &Match,
        answers: Vec<Answer>,
        notes: Vec<(u8, Notes)>,
        answer_ms: Vec<Option<u32>>,
        report: &RoundReport,
    ) {
        let notes = self.keep_notes(report.round, notes);
        let (o, u, f) = &self.after_production;
        let mut changes = Vec::new();
        for i in (0..o.len()).filter(|_| self.changes) {
            let (no, nu, nf) = (m.owners()[i], m.all_units()[i], m.all_fortifications()[i]);
            if no != o[i] || nu.to_bits() != u[i].to_bits() || nf.to_bits() != f[i].to_bits() {
                changes.push(CellChange(i as u32, owner_code(no), nu, nf));
            }
        }
        let seats = m.seats() as u8;
        // The discard events of items left out after an answer's cut are counted in the answer.
        let listed = |seat: u8, index: u32| match answers.get(seat as usize) {
            Some(Answer::Compact(CompactCommands { cut: Some(cut), .. })) => index < cut.at,
            _ => true,
        };
        let discarded = report
            .discarded
            .iter()
            .filter(|d| listed(d.seat, d.index))
            .map(|d| Discarded { seat: d.seat, index: d.index, reason: d.reason })
            .collect();
        let turn = Turn {
            round: report.round,
            answers,
            discarded,
            cells: (0..seats).map(|s| m.cell_count(s)).collect(),
            units: (0..seats).map(|s| m.unit_total(s)).collect(),
            changes,
            notes,
            answer_ms: if answer_ms.iter().any(Option::is_some) { answer_ms } else { Vec::new() },
        };
        // An interrupted match ends with the state at the end of its last round, not with the
        // production of the round it stopped in.
        self.snapshot_end(m);
        match &mut self.stream {
            Some(s) => {
                if s.error.is_none() {
                    s.error = s.writer.turn(&turn).err().map(|e| e.to_string());
                }
                self.last = Some(turn);
            }
            None if self.observing => self.last = Some(turn),
            None => self.turns.push(turn),
        }
    }

    fn document(&self, m: &Match, names: &[String], result: MatchResult, turns: Vec<Turn>) -> Replay {
        let map = m.map();
        Replay {
            format: REPLAY_FORMAT.to_string(),
            version: REPLAY_VERSION,
            engine: format!("gbely-engine {}", env!("CARGO_PKG_VERSION")),
            map: MapRecord::of(map),
            mode: m.mode(),
            rounds: m.rounds(),
            seats: map
                .seats()
                .iter()
                .enumerate()
                .map(|(k, s)| SeatRecord {
                    seat: k as u8,
                    name: names[k].clone(),
                    role: s.role,
                    base: map.grid().id(s.base),
                    builtin: self.builtins.get(k).cloned().flatten(),
                })
                .collect(),
            fork: self.fork.clone(),
            turns,
            final_state: m.cell_states(),
            result,
        }
    }

    /// The replay recorded in memory.
    pub fn finish(mut self, m: &Match, names: &[String], result: MatchResult) -> Replay {
        let interrupted = result.ended_by == EndReason::Interrupted;
        let turns = std::mem::take(&mut self.turns);
        let mut doc = self.document(m, names, result, turns);
        if interrupted {
            doc.final_state = self.end_state;
        }
        doc
    }

    /// The replay of the rounds recorded in memory so far, the recorder going on.
    pub fn replay_so_far(&self, m: &Match, names: &[String], result: MatchResult) -> Replay {
        self.document(m, names, result, self.turns.clone())
    }

    /// Ends a streamed replay: the final state (the state after the last round recorded when the
    /// match was interrupted) and the result. Returns the file's size, or what went wrong.
    pub(crate) fn finish_stream(
        mut self,
        m: &Match,
        result: &MatchResult,
        interrupted: bool,
    ) -> Option<Result<u64, String>> {
        let mut s = self.stream.take()?;
        if let Some(e) = s.error {
            return Some(Err(e));
        }
        if !interrupted {
            self.snapshot_end(m);
        }
        Some(s.writer.finish(&self.end_state, result).map_err(|e| e.to_string()))
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

/// A command as a compact record's letter, cells and amount (an unparsable item has none: see
/// [`Recorder::compact`]).
fn push_command(c: &mut CompactCommands, order: &Order) {
    match *order {
        Ok(Command::Move { from, to, amount }) => {
            c.kinds.push('M');
            c.cells.extend([from.0, to.0]);
            c.amounts.push(amount);
        }
        Ok(Command::Attack { from, to, amount }) => {
            c.kinds.push('A');
            c.cells.extend([from.0, to.0]);
            c.amounts.push(amount);
        }
        Ok(Command::Fortify { cell, amount }) => {
            c.kinds.push('F');
            c.cells.push(cell.0);
            c.amounts.push(amount);
        }
        Err(_) => {}
    }
}

/// The length of a value's JSON text if it is at most `limit` bytes (writing stops past it).
fn json_len_within(v: &Value, limit: usize) -> Option<usize> {
    struct Count {
        n: usize,
        limit: usize,
    }
    impl Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.n += buf.len();
            if self.n > self.limit {
                return Err(std::io::Error::other("too long"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count { n: 0, limit };
    serde_json::to_writer(&mut count, v).ok().map(|()| count.n)
}

/// Writes a replay; a name ending in `.gz` is gzip-compressed. Returns the bytes written.
pub fn write_replay(path: &Path, replay: &Replay) -> std::io::Result<u64> {
    let mut w = ReplayWriter::create(path)?;
    w.head(replay)?;
    for t in &replay.turns {
        w.turn(t)?;
    }
    w.finish(&replay.final_state, &replay.result)
}

/// The bytes of a replay file, plain or gzip. (One lives per file, on its writing thread: the
/// size of the gzip state does not matter.)
#[allow(clippy::large_enum_variant)]
enum Sink {
    Plain(std::io::BufWriter<std::fs::File>),
    #[cfg(feature = "gzip")]
    Gzip(flate2::write::GzEncoder<std::io::BufWriter<std::fs::File>>),
}

impl Sink {
    fn out(&mut self) -> &mut dyn Write {
        match self {
            Sink::Plain(w) => w,
            #[cfg(feature = "gzip")]
            Sink::Gzip(w) => w,
        }
    }

    /// Flushes and closes the file; its size on disk.
    // Without gzip the sink has one kind only.
    #[cfg_attr(not(feature = "gzip"), allow(clippy::infallible_destructuring_match))]
    fn close(self) -> std::io::Result<u64> {
        let file = match self {
            Sink::Plain(w) => w,
            #[cfg(feature = "gzip")]
            Sink::Gzip(w) => w.finish()?,
        };
        let file = file.into_inner().map_err(|e| e.into_error())?;
        Ok(file.metadata()?.len())
    }
}

/// Pieces of the document (rounds) on their way to the writing thread, at most this many at once:
/// memory stays bounded however fast rounds come (a flooding agent's round is megabytes).
const QUEUE: usize = 2;

/// Writes a replay as the match goes: the head, then each round as it finishes, then the final
/// state and the result. Memory does not grow with the match, and the file is the same, byte for
/// byte, as [`Replay::to_json`] of the whole document (compressed when the name ends in `.gz`).
///
/// Each piece is flushed to the file as it is written (a gzip sync flush at each round's end), so
/// a match whose process is killed (`kill -9`) leaves a file that stops after its last complete
/// round: `crate::replays::read_replay_or_cut` reads its rounds, and nothing reads it as whole.
///
/// A compressed file is compressed and written on a thread of its own, so that a match on one
/// core is not slowed by its replay (gzip level 6: examples/replay_size.rs prints the sizes and
/// times); a plain file is written directly.
/// Opening it before the match starts is how an unwritable path is found before anyone plays.
pub struct ReplayWriter {
    path: std::path::PathBuf,
    /// A plain file is written here, directly.
    direct: Option<Sink>,
    /// A compressed one goes to its writing thread.
    tx: Option<std::sync::mpsc::SyncSender<Vec<u8>>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<u64>>>,
    turns: usize,
}

impl std::fmt::Debug for ReplayWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayWriter").field("path", &self.path).field("turns", &self.turns).finish()
    }
}

impl ReplayWriter {
    /// Creates the file (and its folder); a name ending in `.gz` is gzip-compressed.
    pub fn create(path: &Path) -> std::io::Result<ReplayWriter> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let gz = path.extension().is_some_and(|e| e == "gz");
        if gz && cfg!(not(feature = "gzip")) {
            return Err(std::io::Error::other("this build writes no gzip (feature `gzip`): name the replay .json"));
        }
        let file = std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(path)?);
        #[cfg(feature = "gzip")]
        let mut sink = if gz {
            Sink::Gzip(flate2::write::GzEncoder::new(file, flate2::Compression::default()))
        } else {
            Sink::Plain(file)
        };
        #[cfg(not(feature = "gzip"))]
        let mut sink = Sink::Plain(file);
        let path = path.to_path_buf();
        if !gz {
            // Writing plain text costs next to nothing: no thread (and no memory of its own).
            return Ok(ReplayWriter { path, direct: Some(sink), tx: None, thread: None, turns: 0 });
        }
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(QUEUE);
        let thread = std::thread::Builder::new().name("gbely-replay".into()).spawn(move || {
            for piece in rx {
                sink.out().write_all(&piece)?;
                // At a round's end the compressor is flushed (a sync flush: the round's bytes
                // can be decompressed from what is on disk), so that a match whose process is
                // killed leaves a file readable up to its last round; the text is unchanged.
                sink.out().flush()?;
            }
            sink.close()
        })?;
        Ok(ReplayWriter { path, direct: None, tx: Some(tx), thread: Some(thread), turns: 0 })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Hands a piece to the writing thread; if it has stopped, its error.
    fn send(&mut self, piece: Vec<u8>) -> std::io::Result<()> {
        if let Some(sink) = self.direct.as_mut() {
            // On disk at each round's end, as a compressed file's (see `create`).
            return sink.out().write_all(&piece).and_then(|()| sink.out().flush());
        }
        let sent = match &self.tx {
            Some(tx) => tx.send(piece).is_ok(),
            None => return Err(std::io::Error::other("the replay is already finished")),
        };
        if sent {
            return Ok(());
        }
        self.tx = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(Err(e))) => Err(e),
            _ => Err(std::io::Error::other("the replay's writing thread stopped")),
        }
    }

    /// Everything before the rounds (the `turns` of `replay` are ignored).
    pub fn head(&mut self, replay: &Replay) -> std::io::Result<()> {
        let head = ReplayHead {
            format: &replay.format,
            version: replay.version,
            engine: &replay.engine,
            map: &replay.map,
            mode: replay.mode,
            rounds: replay.rounds,
            seats: &replay.seats,
            fork: replay.fork.as_ref(),
        };
        let mut text = serde_json::to_vec(&head).map_err(std::io::Error::other)?;
        text.pop(); // the closing brace: the document goes on
        text.extend_from_slice(b",\"turns\":[");
        self.send(text)
    }

    /// One round, written and forgotten.
    pub fn turn(&mut self, turn: &Turn) -> std::io::Result<()> {
        let mut bytes = Vec::with_capacity(1 << 14);
        if self.turns > 0 {
            bytes.push(b',');
        }
        serde_json::to_writer(&mut bytes, turn).map_err(std::io::Error::other)?;
        self.send(bytes)?;
        self.turns += 1;
        Ok(())
    }

    /// The end of the document; waits for the file to be flushed and closed. Returns the bytes
    /// written to disk.
    pub fn finish(&mut self, final_state: &FinalState, result: &MatchResult) -> std::io::Result<u64> {
        let mut tail = b"],\"final\":".to_vec();
        serde_json::to_writer(&mut tail, final_state).map_err(std::io::Error::other)?;
        tail.extend_from_slice(b",\"result\":");
        serde_json::to_writer(&mut tail, result).map_err(std::io::Error::other)?;
        tail.push(b'}');
        self.send(tail)?;
        if let Some(sink) = self.direct.take() {
            return sink.close();
        }
        self.tx = None; // the thread ends when the queue is drained
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(std::io::Error::other("the replay's writing thread panicked")),
            None => Err(std::io::Error::other("the replay is already finished")),
        }
    }
}

/// The fields of [`Replay`] before `turns`, in its order, for [`ReplayWriter::head`].
#[derive(serde::Serialize)]
struct ReplayHead<'a> {
    format: &'a str,
    version: u32,
    engine: &'a str,
    map: &'a gbely_world::replay::MapRecord,
    mode: gbely_rules::Mode,
    rounds: u32,
    seats: &'a [gbely_world::replay::SeatRecord],
    #[serde(skip_serializing_if = "Option::is_none")]
    fork: Option<&'a ForkRecord>,
}
