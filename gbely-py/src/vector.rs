//! `VectorCore`, the engine of `gbely.env.VectorEnv`: n matches of one learning seat, stepped in
//! Rust on threads with the GIL released, written into arrays allocated once.
//!
//! Every match has its own map (any size that fits the arrays' grid: padded as `write_obs`
//! says) and starts again within the step that ends it (Gymnasium's same-step autoreset): the
//! ended match's last observation goes to the `final_*` arrays, the new match (on the map set by
//! `set_next`, else the same) writes the ordinary ones. Built-in opponents decide in Rust, on the
//! threads; opponents written in Python have submitted through `submit` before `step`. The
//! `final_` figures stay in Rust (`Last`) until asked for (`last`): a step borrows only the
//! arrays it always writes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gbely_engine::recorder::match_result;
use gbely_engine::runner::player::PlayerAnswer;
use gbely_rules::{Command, Observation};
use gbely_world::Map;
use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyReadonlyArray3, PyUntypedArrayMethods};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert::{answer_of, id_strings, obs_dict};
use crate::env::{contiguous, grid_of, Arena, Reward};
use crate::maps::{map_arg, PyMap};
use crate::schema::{obs_fields, rows_of, Obs, ObsOut, ObsVec, Written};
use crate::step::check_rounds;

/// One seat's observation arrays (the fields of `schema.rs`), n matches of them.
type ObsBufs = Obs<Py<PyArrayDyn<i8>>, Py<PyArrayDyn<f32>>, Py<PyArrayDyn<i32>>>;

fn obs_bufs(py: Python<'_>, n: usize, grid: (usize, usize)) -> ObsBufs {
    obs_fields!(Obs::<(), (), ()>::default(), |f, _| {
        PyArrayDyn::zeros(py, [&[n][..], &f.shape.dims(grid)].concat(), false).unbind()
    })
}

/// The arrays a `VectorCore` writes into: n matches' observations, rewards, ends and figures.
struct Buffers {
    obs: ObsBufs,
    reward: Py<PyArray1<f64>>,
    terminated: Py<PyArray1<bool>>,
    share: Py<PyArray1<f64>>,
    cells: Py<PyArray1<i64>>,
}

/// The last observation and figures of each match's last match that ended (in Rust: copied
/// out on request only).
struct Last {
    obs: ObsVec,
    share: Vec<f64>,
    cells: Vec<i64>,
}

/// One match's share of the buffers, to hand to a thread.
struct Slot<'a> {
    out: ObsOut<'a>,
    last: ObsOut<'a>,
    reward: &'a mut f64,
    terminated: &'a mut bool,
    share: &'a mut f64,
    cells: &'a mut i64,
    last_share: &'a mut f64,
    last_cells: &'a mut i64,
}

/// One match of a `VectorCore`.
struct Game {
    arena: Arena,
    /// The map of the next match (the same map when `None`).
    next: Option<Arc<Map>>,
    /// The result (JSON) of the last match that ended.
    result: Option<String>,
    /// What its row of the observation arrays holds (cleared only there at the next step).
    written: Written,
}

/// n matches of one learning seat, stepped in Rust on threads with the GIL released;
/// observations are written into arrays allocated once (`buffers`).
#[pyclass(name = "VectorCore", module = "gbely._gbely")]
pub(crate) struct VectorCore {
    games: Vec<Game>,
    seat: u8,
    reward: Reward,
    threads: usize,
    /// The worker threads when `threads` > 1 (made once, kept between steps).
    pool: Option<rayon::ThreadPool>,
    /// Counts steps; the pool's workers stay awake between steps until it changes ([`keep_warm`]).
    steps: Arc<AtomicU64>,
    bufs: Buffers,
    last: Last,
    /// Cell ids per map size, for the §5 dicts of opponents played from Python.
    ids: HashMap<(u32, u32), Vec<Py<PyString>>>,
}

#[pymethods]
impl VectorCore {
    /// `maps`: the first map of each match (n of them, each fitting in `grid`, rows × columns).
    /// `opponents`: per seat, the built-in agent that plays it, `None` for the learner's seat and
    /// seats played from Python (`submit` before each `step`).
    #[new]
    #[pyo3(signature = (maps, rounds, opponents, seat, threads, grid = None, reward = "share"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        maps: Vec<Bound<'_, PyAny>>,
        rounds: i64,
        opponents: Vec<Option<String>>,
        seat: u8,
        threads: usize,
        grid: Option<(usize, usize)>,
        reward: &str,
    ) -> PyResult<Self> {
        let n = maps.len();
        if n == 0 {
            return Err(PyValueError::new_err("a VectorEnv needs at least one match"));
        }
        let reward = Reward::parse(reward)?;
        let maps = maps.iter().map(|m| map_arg(Some(m))).collect::<PyResult<Vec<_>>>()?;
        let rounds = check_rounds(rounds)?;
        let grid = match grid {
            Some(g) => g,
            None => {
                let g = grid_of(&maps[0], None).map_err(PyValueError::new_err)?;
                maps.iter().fold(g, |(h, w), m| (h.max(m.height() as usize), w.max(m.width() as usize)))
            }
        };
        if seat as usize >= maps[0].seats().len() {
            return Err(PyValueError::new_err(format!("seat {seat} does not exist on {}", maps[0].name())));
        }
        if opponents.get(seat as usize).is_some_and(|o| o.is_some()) {
            return Err(PyValueError::new_err(format!("seat {seat} is the learner's: it has no opponent")));
        }
        let mut games = Vec::with_capacity(n);
        for m in &maps {
            // Made on the first map, whose seats the others must have, then reset on its own.
            let mut arena =
                Arena::new(maps[0].clone(), rounds, opponents.clone(), Some(grid)).map_err(PyValueError::new_err)?;
            if let Some(e) = arena.refuses(m) {
                return Err(PyValueError::new_err(e));
            }
            arena.reset(Some(m.clone()));
            games.push(Game { arena, next: None, result: None, written: Written::default() });
        }
        let bufs = Buffers {
            obs: obs_bufs(py, n, grid),
            reward: PyArray1::zeros(py, [n], false).unbind(),
            terminated: PyArray1::zeros(py, [n], false).unbind(),
            share: PyArray1::zeros(py, [n], false).unbind(),
            cells: PyArray1::zeros(py, [n], false).unbind(),
        };
        let last = Last { obs: ObsVec::new(n, grid.0 * grid.1), share: vec![0.0; n], cells: vec![0; n] };
        let mut core = VectorCore {
            games,
            seat,
            reward,
            threads: 1,
            pool: None,
            steps: Arc::default(),
            bufs,
            last,
            ids: HashMap::new(),
        };
        core.set_threads(threads)?;
        core.run(py, None)?;
        Ok(core)
    }

    /// The arrays written by `reset` and `step` (the same objects every time): the observation
    /// keys and `action_mask`, `reward`, `terminated`, `share`, `cells`.
    fn buffers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let b = &self.bufs;
        let d = PyDict::new(py);
        let _ = obs_fields!(&b.obs, |f, a| d.set_item(f.name, a.bind(py))?);
        d.set_item("reward", b.reward.bind(py))?;
        d.set_item("terminated", b.terminated.bind(py))?;
        d.set_item("share", b.share.bind(py))?;
        d.set_item("cells", b.cells.bind(py))?;
        Ok(d)
    }

    /// The last observations of the last matches that ended of the matches `ended` (in that
    /// order), as new arrays: the observation keys and `action_mask`, each `len(ended) × …`,
    /// and their `share` and `cells`.
    fn last<'py>(&self, py: Python<'py>, ended: Vec<usize>) -> PyResult<Bound<'py, PyDict>> {
        if let Some(i) = ended.iter().find(|&&i| i >= self.games.len()) {
            return Err(PyIndexError::new_err(format!("match {i} of {}", self.games.len())));
        }
        let (h, w) = self.games[0].arena.shape;
        let l = &self.last;
        let d = PyDict::new(py);
        l.obs.gather(&ended, h * w).put(py, &d, &[ended.len()], (h, w))?;
        d.set_item("share", PyArray1::from_vec(py, ended.iter().map(|&i| l.share[i]).collect()))?;
        d.set_item("cells", PyArray1::from_vec(py, ended.iter().map(|&i| l.cells[i]).collect()))?;
        Ok(d)
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.games.len()
    }
    /// The arrays' (rows, columns).
    #[getter]
    fn grid(&self) -> (usize, usize) {
        self.games[0].arena.shape
    }

    #[getter]
    fn threads(&self) -> usize {
        self.threads
    }
    #[setter]
    fn set_threads(&mut self, n: usize) -> PyResult<()> {
        let n = n.max(1);
        // The calling thread is one of the n (see `run`): the pool has the others.
        self.pool = if n > 1 {
            let pool =
                rayon::ThreadPoolBuilder::new().num_threads(n - 1).thread_name(|k| format!("gbely-env-{k}")).build();
            Some(pool.map_err(|e| PyRuntimeError::new_err(format!("cannot start {n} threads: {e}")))?)
        } else {
            None
        };
        self.threads = n;
        Ok(())
    }

    /// Starts every match again, match i on `maps[i]` when given (else on its map).
    #[pyo3(signature = (maps = None))]
    fn reset(&mut self, py: Python<'_>, maps: Option<Vec<Option<Bound<'_, PyAny>>>>) -> PyResult<()> {
        let maps = match maps {
            None => vec![None; self.games.len()],
            Some(ms) => {
                if ms.len() != self.games.len() {
                    return Err(PyValueError::new_err(format!("{} maps for {} matches", ms.len(), self.games.len())));
                }
                ms.iter()
                    .zip(&self.games)
                    .map(|(m, g)| match m {
                        Some(m) if !m.is_none() => {
                            let m = map_arg(Some(m))?;
                            match g.arena.refuses(&m) {
                                Some(e) => Err(PyValueError::new_err(e)),
                                None => Ok(Some(m)),
                            }
                        }
                        _ => Ok(None),
                    })
                    .collect::<PyResult<Vec<_>>>()?
            }
        };
        for (g, m) in self.games.iter_mut().zip(maps) {
            g.arena.reset(m);
            g.result = None;
        }
        self.run(py, None)
    }

    /// The map of match `i`'s next match (when the current one ends within a step).
    fn set_next(&mut self, i: usize, map: Bound<'_, PyAny>) -> PyResult<()> {
        let m = map_arg(Some(&map))?;
        let g = self.game(i)?;
        if let Some(e) = g.arena.refuses(&m) {
            return Err(PyValueError::new_err(e));
        }
        g.next = Some(m);
        Ok(())
    }

    /// The map match `i` plays now.
    fn map(&mut self, i: usize) -> PyResult<PyMap> {
        Ok(PyMap { inner: self.game(i)?.arena.map.clone() })
    }

    fn is_active(&mut self, i: usize, seat: u8) -> PyResult<bool> {
        let g = self.game(i)?;
        Ok((seat as usize) < g.arena.session.seats() && g.arena.session.is_active(seat))
    }

    /// Seat `seat`'s observation of SPEC §5 in match `i`, the dict an agent file gets.
    fn observation_dict<'py>(&mut self, py: Python<'py>, i: usize, seat: u8) -> PyResult<Bound<'py, PyDict>> {
        let ids = &mut self.ids;
        let g = self.games.get_mut(i).ok_or_else(|| PyIndexError::new_err(format!("no match {i}")))?;
        if seat as usize >= g.arena.session.seats() {
            return Err(PyValueError::new_err(format!("seat {seat} does not exist")));
        }
        let grid = g.arena.map.grid().clone();
        let ids = ids.entry((grid.width(), grid.height())).or_insert_with(|| id_strings(py, &grid));
        obs_dict(py, g.arena.observed(seat), ids)
    }

    /// A command list (`{"prikazy": [...]}` or a list) as seat `seat`'s answer in match `i` this
    /// round (for opponents played from Python).
    fn submit(&mut self, i: usize, seat: u8, commands: Bound<'_, PyAny>) -> PyResult<()> {
        let learner = self.seat;
        let g = self.game(i)?;
        if seat as usize >= g.arena.session.seats() || seat == learner {
            return Err(PyValueError::new_err(format!("seat {seat} is not an opponent's")));
        }
        g.arena.session.submit(seat, answer_of(&commands));
        Ok(())
    }

    /// The result (as `gbely.Match.result` gives it) of the last match of `i` that ended.
    fn result<'py>(&mut self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyAny>> {
        match &self.game(i)?.result {
            Some(text) => py.import("json")?.call_method1("loads", (text.as_str(),)),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// One round of every match: the learner's actions (`kind` int8 and `fraction` float32, each
    /// n × rows × columns of the grid), the opponents', resolution; a match that ends starts
    /// again at once.
    fn step(
        &mut self,
        py: Python<'_>,
        kind: PyReadonlyArray3<'_, i8>,
        fraction: PyReadonlyArray3<'_, f32>,
    ) -> PyResult<()> {
        let n = self.games.len();
        let (h, w) = self.games[0].arena.shape;
        if kind.shape() != [n, h, w] || fraction.shape() != kind.shape() {
            return Err(PyValueError::new_err(format!(
                "actions of shapes {:?} and {:?}: {n} × {h} × {w} expected",
                kind.shape(),
                fraction.shape()
            )));
        }
        let (k, f) = (contiguous(kind.as_slice())?, contiguous(fraction.as_slice())?);
        let actions: Vec<(&[i8], &[f32])> = k.chunks(h * w).zip(f.chunks(h * w)).collect();
        self.run(py, Some(&actions))
    }
}

impl VectorCore {
    fn game(&mut self, i: usize) -> PyResult<&mut Game> {
        let n = self.games.len();
        self.games.get_mut(i).ok_or_else(|| PyIndexError::new_err(format!("match {i} of {n}")))
    }

    /// Steps every match (when `actions` are given) and writes its observation, on threads.
    fn run(&mut self, py: Python<'_>, actions: Option<&[(&[i8], &[f32])]>) -> PyResult<()> {
        let b = &self.bufs;
        let cells = self.games[0].arena.grid_cells();
        // Borrowed for writing (numpy's borrow checking refuses a second writer), then handed to
        // the threads as plain slices while the GIL is released.
        let mut obs_rw = obs_fields!(&b.obs, |_, a| a.bind(py).readwrite());
        let (mut reward, mut term, mut share, mut cells_rw) = (
            b.reward.bind(py).readwrite(),
            b.terminated.bind(py).readwrite(),
            b.share.bind(py).readwrite(),
            b.cells.bind(py).readwrite(),
        );
        let slots: Vec<Slot<'_>> = {
            let obs =
                rows_of(obs_fields!(&mut obs_rw, |f, a| contiguous(a.as_slice_mut())?.chunks_mut(f.shape.len(cells))));
            let l = &mut self.last;
            let last = l.obs.rows(cells);
            let mut reward = contiguous(reward.as_slice_mut())?.iter_mut();
            let mut term = contiguous(term.as_slice_mut())?.iter_mut();
            let mut share = contiguous(share.as_slice_mut())?.iter_mut();
            let mut cells_it = contiguous(cells_rw.as_slice_mut())?.iter_mut();
            let mut last_share = l.share.iter_mut();
            let mut last_cells = l.cells.iter_mut();
            obs.zip(last)
                .map(|(out, last)| Slot {
                    out,
                    last,
                    reward: reward.next().expect("n slots"),
                    terminated: term.next().expect("n slots"),
                    share: share.next().expect("n slots"),
                    cells: cells_it.next().expect("n slots"),
                    last_share: last_share.next().expect("n slots"),
                    last_cells: last_cells.next().expect("n slots"),
                })
                .collect()
        };
        let (seat, kind) = (self.seat, self.reward);
        let acts: Vec<Option<(&[i8], &[f32])>> = match actions {
            Some(a) => a.iter().map(|&x| Some(x)).collect(),
            None => vec![None; self.games.len()],
        };
        let games = &mut self.games;
        let pool = &self.pool;
        // Workers still spinning after the last step stop now and pick up this one's matches.
        self.steps.fetch_add(1, Ordering::Relaxed);
        let result: Result<(), String> = py.allow_threads(|| {
            let work = games.iter_mut().zip(slots).zip(acts);
            match pool {
                None => work.into_iter().try_for_each(|((g, slot), act)| step_one(g, seat, kind, act, slot)),
                // The calling thread works too, beside the pool's persistent workers (no thread
                // is started per step), and every thread takes the next match from one counter,
                // so uneven matches balance out. A step is short (a match-round is tens of µs),
                // so what counts is waking few threads: one per extra thread, and no fork-join.
                Some(pool) => {
                    let items: Vec<Mutex<Option<_>>> = work.map(|w| Mutex::new(Some(w))).collect();
                    let next = AtomicUsize::new(0);
                    let drain = || -> Result<(), String> {
                        while let Some(item) = items.get(next.fetch_add(1, Ordering::Relaxed)) {
                            let taken = item.lock().unwrap_or_else(|e| e.into_inner()).take();
                            if let Some(((g, slot), act)) = taken {
                                step_one(g, seat, kind, act, slot)?;
                            }
                        }
                        Ok(())
                    };
                    let failed: Mutex<Option<String>> = Mutex::new(None);
                    let mine = pool.in_place_scope(|s| {
                        for _ in 0..pool.current_num_threads() {
                            s.spawn(|_| {
                                if let Err(e) = drain() {
                                    *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                                }
                            });
                        }
                        drain()
                    });
                    keep_warm(pool, &self.steps);
                    let theirs = failed.into_inner().unwrap_or_else(|e| e.into_inner());
                    mine.and(theirs.map_or(Ok(()), Err))
                }
            }
        });
        result.map_err(PyValueError::new_err)
    }
}

/// How long the workers stay awake after a step, waiting for the next.
const WARM: Duration = Duration::from_millis(1);

/// Keeps the pool's workers spinning for up to [`WARM`] after a step, until the next step
/// starts. A learner steps again within microseconds to milliseconds, and a worker that went
/// to sleep takes long to wake (hundreds of µs on a virtual machine whose idle CPU was halted):
/// longer than a step of a few matches, so the calling thread would do the whole step alone.
/// At most [`WARM`] of a core is spent per step and worker while the learner does other work.
fn keep_warm(pool: &rayon::ThreadPool, steps: &Arc<AtomicU64>) {
    let step = steps.load(Ordering::Relaxed);
    for _ in 0..pool.current_num_threads() {
        let steps = Arc::clone(steps);
        pool.spawn(move || {
            let start = Instant::now();
            'warm: loop {
                for _ in 0..64 {
                    if steps.load(Ordering::Relaxed) != step {
                        break 'warm;
                    }
                    std::hint::spin_loop();
                }
                if start.elapsed() >= WARM {
                    break;
                }
            }
        });
    }
}

/// One match's round: actions, resolution, reward; when the match ended, its last observation
/// and figures into the `final_` arrays and a new match; then the observation.
fn step_one(
    g: &mut Game,
    seat: u8,
    reward: Reward,
    actions: Option<(&[i8], &[f32])>,
    slot: Slot<'_>,
) -> Result<(), String> {
    let arena = &mut g.arena;
    *slot.reward = 0.0;
    *slot.terminated = false;
    if let Some((kind, fraction)) = actions {
        arena.act(seat, kind, fraction)?;
        arena.advance();
        let (share1, cells1) = (arena.share(seat), arena.cells(seat));
        let over = arena.over(seat);
        *slot.reward = arena.reward(seat, reward);
        if over {
            *slot.terminated = true;
            *slot.last_share = share1;
            *slot.last_cells = cells1 as i64;
            arena.write(seat, slot.last);
            let s = &arena.session;
            g.result = Some(serde_json::to_string(&match_result(s.state(), s.names())).expect("serializes"));
            arena.reset(g.next.take());
        }
    }
    *slot.share = arena.share(seat);
    *slot.cells = arena.cells(seat) as i64;
    arena.write_over(seat, slot.out, Some(&mut g.written));
    Ok(())
}

/// For the benchmark: the seconds the engine itself takes for the rounds a `VectorCore` plays
/// with these actions (`kind`, `fraction`: rounds × n × height × width), one thread: per round
/// and match the learner's observation, its commands (decoded beforehand, not timed), the
/// opponents' observations and decisions, production and resolution, through a plain `Session`.
#[pyfunction]
#[pyo3(signature = (map, rounds, opponents, seat, kind, fraction))]
pub(crate) fn engine_round_seconds(
    py: Python<'_>,
    map: Option<Bound<'_, PyAny>>,
    rounds: i64,
    opponents: Vec<Option<String>>,
    seat: u8,
    kind: numpy::PyReadonlyArray4<'_, i8>,
    fraction: numpy::PyReadonlyArray4<'_, f32>,
) -> PyResult<(f64, usize)> {
    let map = map_arg(map.as_ref())?;
    let rounds = check_rounds(rounds)?;
    let shape = kind.shape().to_vec();
    let cells = map.len();
    if shape.len() != 4 || shape[2] * shape[3] != cells || fraction.shape() != shape.as_slice() {
        return Err(PyValueError::new_err("actions: rounds × n × height × width"));
    }
    let (steps, n) = (shape[0], shape[1]);
    let (k, f) = (contiguous(kind.as_slice())?, contiguous(fraction.as_slice())?);
    // The learner's commands of every round, as a VectorCore plays them (a new match on the end).
    // plan[t][m]: match m's commands in round t.
    let mut plan: Vec<Vec<Vec<Command>>> = vec![Vec::with_capacity(n); steps];
    for m in 0..n {
        let mut a = Arena::new(map.clone(), rounds, opponents.clone(), None).map_err(PyValueError::new_err)?;
        for (t, round) in plan.iter_mut().enumerate() {
            let at = (t * n + m) * cells;
            a.act(seat, &k[at..at + cells], &f[at..at + cells]).map_err(PyValueError::new_err)?;
            round.push(a.cmds.clone());
            a.advance();
            if a.session.is_over() || !a.session.is_active(seat) {
                a.reset(None);
            }
        }
    }
    let seconds = py.allow_threads(|| {
        let mut arenas: Vec<Arena> =
            (0..n).map(|_| Arena::new(map.clone(), rounds, opponents.clone(), None).expect("checked above")).collect();
        let mut obs = Observation::default();
        let start = std::time::Instant::now();
        for round in &plan {
            for (a, cmds) in arenas.iter_mut().zip(round) {
                a.session.observe_into(seat, &mut obs);
                a.session.submit(seat, PlayerAnswer::Commands(cmds.clone()));
                a.advance();
                if a.session.is_over() || !a.session.is_active(seat) {
                    a.reset(None);
                }
            }
        }
        start.elapsed().as_secs_f64()
    });
    Ok((seconds, steps * n))
}
