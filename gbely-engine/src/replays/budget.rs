//! What reading a replay may cost in memory: every reader stays within [`READ_BUDGET`] on any
//! file. The parsed document holds at most `gbely_world::replay::MAX_REPLAY_HELD` (counted while
//! it is parsed); before a reader starts its own work (a copy with the cell changes rebuilt, a
//! re-simulation, a frame per round, the viewer's data) it estimates that work from what the
//! replay holds — never from what it claims — and refuses in one line when the two together
//! would pass the budget.

use gbely_world::replay::Answer;
use gbely_world::{Map, Replay};

/// Most memory a reader of a replay takes (`gbely replay view/verify/stats/show`, `gbely.Replay`
/// and its datasets): 2 GiB. The viewer of an honest 9-seat final on a 90×90 map takes about
/// 0.9 GB (measured: `gbely replay view` of `gbely final expander-rs --fill template-rs`), and
/// the estimates below are upper bounds, about twice what is taken.
pub const READ_BUDGET: usize = 2 << 30;

/// Bytes per cell of a map, a match and a frame or two over it (the terrain, the neighbour
/// tables, the per-cell state of the match and of the reader; measured with room to spare).
const PER_CELL: usize = 160;
/// A recorded cell change (`CellChange`): the rebuilt copy, the recorder's and the reader's.
const PER_CHANGE: usize = 3 * 24;
/// One cell of a frame (`Frame`: owner, units, fortification).
const PER_FRAME_CELL: usize = 17;

/// The work a reader does on top of holding the replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// Re-simulation alone (`verify`, `observation_at`, the data set).
    Resimulate,
    /// The cell changes of every round, rebuilt for a version 2 file (`stats`, `show`).
    Changes,
    /// A frame of every round held at once ([`super::frames`]).
    Frames,
    /// The viewer's data: every change, event and command as JSON (`replay view`).
    Viewer,
    /// A seat's observation of every round held at once (`gbely.Replay` data sets), for this
    /// many seats.
    Observations(usize),
    /// One answer written out in the wire form (`replay show --observation`): its items.
    Answer(usize),
    /// A re-simulation and this many bytes of the reader's own (a data set's arrays), for
    /// what it is.
    Extra(usize, &'static str),
}

impl Work {
    fn what(self) -> &'static str {
        match self {
            Work::Resimulate => "re-simulating it",
            Work::Changes => "rebuilding its cell changes",
            Work::Frames => "holding every round's frame",
            Work::Viewer => "building the viewer's data",
            Work::Observations(_) => "holding every round's observation",
            Work::Answer(_) => "writing out the answer",
            Work::Extra(_, what) => what,
        }
    }
}

/// The items of an answer (commands and items kept as received); for a built-in seat whose
/// commands are regenerated, at most two per cell it owns (`owned`).
fn items(answer: &Answer, owned: u32) -> usize {
    match answer {
        Answer::Commands(list) => list.len(),
        Answer::Compact(c) => c.kinds.len(),
        Answer::Regen => 2 * owned as usize + 2,
        Answer::Violation(_) | Answer::Out => 0,
    }
}

/// What a replay's rounds may hold at most, found in one walk over its turns.
struct Bounds {
    /// Items of every answer: a built-in seat's regenerated commands counted by the cells it
    /// owned as the round began (the turn's own counts in the first round; the map's cells for a
    /// seat the replay does not count), not by the whole map for every seat and round, which put
    /// an honest 9-seat final of built-ins at 15 GiB.
    items: usize,
    /// Cell changes: a version 1 file's, as written; for version 2, rebuilt by re-simulation,
    /// each round at most the cells its commands touch (two a command) — all cells in a round
    /// with a violation (a disqualified seat's cells change hands) — and never more than the
    /// map's cells.
    changes: usize,
}

fn bounds(replay: &Replay, cells: usize) -> Bounds {
    let mut owned: Vec<u32> = vec![0; replay.seats.len()];
    let (mut items_total, mut changes) = (0usize, 0usize);
    for (k, t) in replay.turns.iter().enumerate() {
        let mut round = 0usize;
        for (s, a) in t.answers.iter().enumerate() {
            let had = if k == 0 { t.cells.get(s) } else { owned.get(s) };
            items_total = items_total.saturating_add(items(a, had.copied().unwrap_or(cells as u32)));
            round = round.saturating_add(2 * items(a, owned.get(s).copied().unwrap_or(cells as u32)));
            if matches!(a, Answer::Violation(_)) {
                round = round.saturating_add(cells);
            }
        }
        changes = changes.saturating_add(round.min(cells));
        owned.clone_from(&t.cells);
    }
    if replay.version < 2 {
        changes = replay.turns.iter().map(|t| t.changes.len()).sum();
    }
    Bounds { items: items_total, changes }
}

/// At most how many cell changes the replay's rounds have: a version 1 file's, as written; for
/// version 2 (rebuilt by re-simulation) each round at most the cells its commands touch, all
/// cells in a round with a violation, never more than the map's cells a round.
pub fn changes_bound(replay: &Replay, cells: usize) -> usize {
    bounds(replay, cells).changes
}

/// About how many bytes a reader takes for `work` on `replay` (over `map`), the replay itself
/// included.
pub fn estimate(replay: &Replay, map: &Map, work: Work) -> usize {
    let cells = map.len();
    let rounds = replay.turns.len() + 1;
    let held = replay.held_bytes();
    let Bounds { items: all_items, changes: changes_bound } = bounds(replay, cells);
    let discarded: usize = replay.turns.iter().map(|t| t.discarded.len()).sum();
    // The largest answer is copied as a session takes it, once a round, and read into orders
    // and discard events.
    let answer = replay.turns.iter().flat_map(|t| &t.answers).map(|a| items(a, 0)).max().unwrap_or(0) * 160;
    let mut n = held.saturating_add(cells * PER_CELL).saturating_add(answer);
    // A version 1 file holds its changes; for version 2 they are rebuilt by a recording
    // re-simulation: the record (as big as the replay), its copy, the copy of the replay.
    let changes = || {
        if replay.version < 2 {
            0
        } else {
            held.saturating_mul(3).saturating_add(changes_bound.saturating_mul(PER_CHANGE))
        }
    };
    let value = std::mem::size_of::<serde_json::Value>() + 16;
    n = n.saturating_add(match work {
        Work::Resimulate => 0,
        Work::Changes => changes(),
        Work::Frames => changes().saturating_add(rounds.saturating_mul(cells).saturating_mul(PER_FRAME_CELL)),
        // Each change four numbers, each discard and command a few values, and the text.
        Work::Viewer => changes()
            .saturating_add(changes_bound.saturating_mul(4 * value + 24))
            .saturating_add(discarded.saturating_add(all_items).saturating_mul(8 * value)),
        Work::Observations(seats) => rounds.saturating_mul(cells).saturating_mul(seats).saturating_mul(24),
        // Each item an object of four entries.
        Work::Answer(items) => items.saturating_mul(12 * value),
        Work::Extra(bytes, _) => bytes,
    });
    n
}

/// Refuses `work` on `replay` when it would take more than [`READ_BUDGET`], saying what and how
/// much.
pub fn within_budget(replay: &Replay, map: &Map, work: Work) -> Result<(), String> {
    let need = estimate(replay, map, work);
    if need <= READ_BUDGET {
        return Ok(());
    }
    Err(format!(
        "{} would take about {} MiB of memory ({} rounds on a {}×{} map, up to {} cell changes, \
         the replay itself {} MiB): more than the {} MiB gbely's replay readers allow themselves",
        work.what(),
        need >> 20,
        replay.turns.len(),
        map.width(),
        map.height(),
        changes_bound(replay, map.len()),
        replay.held_bytes() >> 20,
        READ_BUDGET >> 20
    ))
}
