//! The typed entry points of leagues and A/B tests: a [`LeagueRequest`] or an [`AbRequest`] says
//! everything a run needs, parsed once at the edge — by clap (`gbely league`, `gbely ab`) or by
//! pyo3 (`gbely.league`, `gbely.ab`) — as ripgrep turns its flags into one typed configuration;
//! no code below sees a flag. [`run_league`] and [`run_ab`] run one and give back a typed report
//! ([`LeagueReport`], [`AbReport`]), whose `to_json` is the `--json` document.
//!
//! What belongs to the program that owns its process stays with the caller: the Ctrl-C handler,
//! adopting and killing agents' orphans (the `gbely` binary only: a Python program's other
//! children are not ours), the progress bar and the printed tables.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};

use super::ab::{run_ab as run_pairs, AbRun, AbSetup, Journal};
use super::entries::{Entry, LeagueError};
use super::league::db::LeagueDb;
use super::league::report::{html_report, write_csv, write_gauntlet_csv};
use super::league::schedule::{league_maps, Schedule};
use super::league::{league_python, run_schedule, standings, Backend, LeagueConfig, LeagueMap};
use super::league::{play::replay_stem, LeagueRun, MatchRow, Progress};
use super::runs::agent_spec::AgentSpec;
use super::runs::fork::fork_points;
use super::runs::interpreter::{python, resolve_python};
use super::service::AgentLimits;
use crate::limits::{Defaults, MemoryLimit, TimeLimit};
use crate::runner::cores::CoreGate;
use crate::runner::sandbox::{isolation, SandboxMode};
use crate::tournament::ab::{EloModel, Hypotheses, Interval, Sprt, Verdict};
use crate::tournament::Standings;

/// How each match is played: the one settings type the command line (its match flags), the
/// Python package (`gbely.league`, `gbely.ab`), the stand (its page's settings) and the arena
/// (its `[judge]` configuration) all build, parsed at their edge.
///
/// In JSON (the stand's page sends it) it is `{"rounds": N, "time_limit": seconds or null,
/// "sandbox": "auto" | "require" | "off"}`, each key optional (its default) and no other key
/// accepted. The memory limit and the interpreter are not in it: they are the machine's owner's
/// to set (a flag, a keyword argument), never a page's.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatchSettings {
    /// Rounds of each match.
    pub rounds: u32,
    pub time_limit: TimeLimit,
    #[serde(skip)]
    pub memory_limit: MemoryLimit,
    pub sandbox: SandboxMode,
    /// The Python interpreter for agent files (`None`: `$GBELY_PYTHON`, else the default).
    #[serde(skip)]
    pub python: Option<String>,
}

impl MatchSettings {
    /// What every agent process of a match with these settings gets (no core gate).
    pub fn limits(&self) -> AgentLimits {
        AgentLimits { time: self.time_limit, memory: self.memory_limit, sandbox: self.sandbox, cores: None }
    }

    /// The league configuration of these settings: `jobs` matches at once, Python agents run
    /// with `python`, their logs in `runs`; one game a pairing, locally, no replays, no core gate.
    fn config(&self, python: String, jobs: usize, runs: PathBuf) -> LeagueConfig {
        LeagueConfig {
            rounds: self.rounds,
            time_limit: self.time_limit,
            memory_limit: self.memory_limit,
            sandbox: self.sandbox,
            python,
            games: 1,
            jobs,
            dir: runs,
            backend: Backend::Local,
            replays: None,
            cores: None,
        }
    }
}

impl Default for MatchSettings {
    fn default() -> MatchSettings {
        MatchSettings {
            rounds: Defaults::ROUNDS,
            time_limit: Defaults::TIME_LIMIT,
            memory_limit: Defaults::MEMORY_LIMIT,
            sandbox: SandboxMode::Auto,
            python: None,
        }
    }
}

/// The defaults of leagues and A/B tests, declared once: [`LeagueRequest::new`],
/// [`AbRequest::new`], the command line's flags and the Python package's keyword arguments
/// (`gbely._gbely.LEAGUE_DEFAULTS`, `AB_DEFAULTS`) all read them.
pub mod defaults {
    /// `gbely league --maps`.
    pub const LEAGUE_MAPS: &str = "gbely";
    /// `gbely league --seed`.
    pub const LEAGUE_SEED: &str = "league";
    /// `gbely league --games`.
    pub const LEAGUE_GAMES: u32 = 1;
    /// `gbely league --db`.
    pub const LEAGUE_DB: &str = "gbely-league/league.sqlite";
    /// `gbely ab --seed`.
    pub const AB_SEED: &str = "ab";
    /// `gbely ab --elo0`, `--elo1`: H0 "no better", H1 "better", in Elo.
    pub const AB_ELO0: f64 = 0.0;
    pub const AB_ELO1: f64 = 40.0;
    /// `gbely ab --share0`, `--share1`: the same in share points, against an opponent.
    pub const AB_SHARE0: f64 = 0.0;
    pub const AB_SHARE1: f64 = 1.0;
    /// `gbely ab --alpha`, `--beta`: the error rates.
    pub const AB_ALPHA: f64 = 0.05;
    pub const AB_BETA: f64 = 0.05;
    /// `gbely ab --max-pairs`.
    pub const AB_MAX_PAIRS: usize = 2000;
    /// `gbely ab --db`.
    pub const AB_DB: &str = "gbely-ab/ab.sqlite";
    /// `gbely ab --final --fill`, `--size`.
    pub const AB_FINAL_FILL: &str = "template";
    pub const AB_FINAL_SIZE: u32 = 90;
}

/// A league (`gbely league`, `gbely.league`).
#[derive(Clone, Debug, PartialEq)]
pub struct LeagueRequest {
    /// The entries' agents.
    pub agents: Vec<AgentSpec>,
    /// Add the Council as an entry.
    pub council: bool,
    /// The first agent against each of the others only.
    pub gauntlet: bool,
    /// A comma-separated list of maps, or a number N of maps generated from `seed`.
    pub maps: String,
    pub seed: String,
    /// Games per pairing and map (each in both seat orders).
    pub games: u32,
    /// Matches at once (`None`: the cores; on Ray, the cluster's CPUs).
    pub jobs: Option<usize>,
    /// Agent processes that may think at once (`None`: the cores).
    pub thinking: Option<u32>,
    /// Play on the Ray cluster at this address.
    pub ray: Option<String>,
    /// The results database.
    pub db: PathBuf,
    pub settings: MatchSettings,
    /// Record every match's replay and viewer page next to the database.
    pub replays: bool,
    /// The HTML report (`None`: next to the database).
    pub report: Option<PathBuf>,
    /// Also write every match as CSV.
    pub csv: Option<PathBuf>,
}

impl LeagueRequest {
    /// A league of `agents` with `gbely league`'s defaults.
    pub fn new(agents: Vec<AgentSpec>) -> LeagueRequest {
        LeagueRequest {
            agents,
            council: false,
            gauntlet: false,
            maps: defaults::LEAGUE_MAPS.into(),
            seed: defaults::LEAGUE_SEED.into(),
            games: defaults::LEAGUE_GAMES,
            jobs: None,
            thinking: None,
            ray: None,
            db: PathBuf::from(defaults::LEAGUE_DB),
            settings: MatchSettings::default(),
            replays: false,
            report: None,
            csv: None,
        }
    }
}

/// What a league leaves: its entries, maps, the run, the tables and every stored match.
#[derive(Clone, Debug)]
pub struct LeagueReport {
    pub title: String,
    pub entries: Vec<Entry>,
    pub maps: Vec<LeagueMap>,
    pub run: LeagueRun,
    pub table: Standings,
    pub rows: Vec<MatchRow>,
    pub db: PathBuf,
    pub report: PathBuf,
    pub sandbox: SandboxMode,
}

impl LeagueReport {
    /// The `gbely league --json` document.
    pub fn to_json(&self) -> Value {
        json!({
            "entries": self.entries,
            "maps": self.maps.iter().map(|m| json!({"spec": m.spec, "fingerprint": m.map.fingerprint()})).collect::<Vec<_>>(),
            "run": self.run,
            "standings": self.table.standings,
            "matrix": self.table.matrix,
            "los": self.table.los,
            "per_map": self.table.per_map,
            "gauntlet": self.table.gauntlet,
            "matches": self.rows,
            "db": self.db.display().to_string(),
            "report": self.report.display().to_string(),
            "isolation": isolation(self.sandbox),
        })
    }
}

/// The folder next to a database (where its runs, replays and report go).
fn folder_of(db: &Path) -> PathBuf {
    db.parent().filter(|d| !d.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// An entry's name: its file's AGENT_NAME and AGENT_VERSION, or its file name (a file written
/// for other rules is warned about on stderr).
fn entry_of(spec: &AgentSpec, py: &str) -> Result<Entry, LeagueError> {
    let (name, warning) = crate::app::inspect::display_name(spec, py);
    if let Some(w) = warning {
        eprintln!("gbely: warning: {w}");
    }
    Entry::from_spec(spec, name)
}

/// Plays a league: the matches the database does not hold yet, then the tables, the HTML report
/// (and the CSV). `progress` is called as each match is stored.
pub fn run_league(req: &LeagueRequest, progress: &mut Progress<'_>) -> Result<LeagueReport, LeagueError> {
    let bad = |why: &str| Err(LeagueError::Request(why.to_string()));
    let mut specs = req.agents.clone();
    if req.council && !specs.contains(&AgentSpec::COUNCIL) {
        specs.push(AgentSpec::COUNCIL);
    }
    for s in &specs {
        s.check()?;
    }
    if req.replays && req.ray.is_some() {
        return bad("--replays records on this machine; it does not go with --ray");
    }
    if req.thinking.is_some() && req.ray.is_some() {
        return bad("--thinking shares this machine's cores; on Ray each match asks the cluster for a CPU per agent");
    }
    let given = python(req.settings.python.as_deref());
    let py = match &req.ray {
        // The Ray driver is Python, whatever the entries are.
        Some(_) => resolve_python(&given)?,
        None => league_python(&specs, &given)?,
    };
    // Each file is read once for its name (and a GAME_VERSION for other rules warns).
    let entries: Vec<Entry> = specs.iter().map(|s| entry_of(s, &py)).collect::<Result<_, _>>()?;
    let maps = league_maps(&req.maps, &req.seed)?;
    if let Some(m) = maps.iter().find(|m| m.map.seats().len() != 2) {
        return Err(LeagueError::NotADuelMap { spec: m.spec.clone(), seats: m.map.seats().len() });
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = match &req.ray {
        Some(_) => req.jobs.unwrap_or(0),
        // One match per core: agent processes wait for a core of the gate, not on their clock.
        None => req.jobs.unwrap_or(cores).max(1),
    };
    let dir = folder_of(&req.db);
    let db = LeagueDb::open(&req.db)?;
    let s = &req.settings;
    let config = LeagueConfig {
        games: req.games,
        backend: match &req.ray {
            Some(address) => Backend::Ray { address: address.clone() },
            None => Backend::Local,
        },
        replays: req.replays.then(|| dir.join("replays")),
        // Agents hold a core while they think, so matches may outnumber cores.
        cores: req.ray.is_none().then(|| CoreGate::new(req.thinking.map_or(cores, |n| n as usize))),
        ..s.config(py, jobs, dir.join("runs"))
    };
    let schedule = if req.gauntlet { Schedule::Gauntlet } else { Schedule::RoundRobin };
    let (run, keys) = run_schedule(&db, &entries, &maps, &config, schedule, progress)?;
    let rows = db.rows(&keys)?;
    let table = standings(&entries, &rows, req.gauntlet);
    let report = req.report.clone().unwrap_or_else(|| dir.join("report.html"));
    let title = if req.gauntlet {
        format!(
            "gbely league --gauntlet: {} against a field of {} on {} map(s)",
            entries[0].name,
            entries.len() - 1,
            maps.len()
        )
    } else {
        format!("gbely league: {} entries on {} map(s)", entries.len(), maps.len())
    };
    // Links to the viewer pages that exist (matches played with --replays, now or before),
    // relative to the report when they are under its folder.
    let replays = dir.join("replays");
    let base = folder_of(&report);
    let viewer = |row: &MatchRow| -> Option<String> {
        let page = replays.join(replay_stem(&row.key)).with_extension("html");
        page.is_file().then(|| relative_link(&base, &page))
    };
    let io = |what: &str, path: &Path| {
        let path = format!("{what}{}", path.display());
        move |error| LeagueError::Output { path, error }
    };
    std::fs::write(&report, html_report(&title, &table, &rows, &viewer)).map_err(io("the report ", &report))?;
    if let Some(csv) = &req.csv {
        write_csv(csv, &rows).map_err(io("", csv))?;
        if let Some(g) = &table.gauntlet {
            let path = csv.with_extension("gauntlet.csv");
            write_gauntlet_csv(&path, g).map_err(io("", &path))?;
        }
    }
    Ok(LeagueReport { title, entries, maps, run, table, rows, db: req.db.clone(), report, sandbox: s.sandbox })
}

/// `page` as a link from a file in `base`: relative when it lies under `base`, else absolute.
fn relative_link(base: &Path, page: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let page = abs(page);
    match page.strip_prefix(abs(base)) {
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => format!("file://{}", page.display()),
    }
}

/// An A/B test (`gbely ab`, `gbely.ab`): is B better than A?
#[derive(Clone, Debug, PartialEq)]
pub struct AbRequest {
    /// The baseline.
    pub a: AgentSpec,
    /// The candidate.
    pub b: AgentSpec,
    /// `None`: head to head; else the opponent both play ([`Against::Both`] is two tests: see
    /// [`AbRequest::tests`]).
    pub against: Option<Against>,
    /// Maps to cycle through; empty: a fresh map per pair.
    pub maps: Vec<String>,
    pub seed: String,
    /// Head to head: how Elo is measured, and the hypotheses' Elo.
    pub elo_model: EloModel,
    pub elo0: f64,
    pub elo1: f64,
    /// Against an opponent: the hypotheses' share points.
    pub share0: f64,
    pub share1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub max_pairs: usize,
    /// Pairs at once (`None`: the cores).
    pub jobs: Option<usize>,
    /// The journal.
    pub db: PathBuf,
    pub settings: MatchSettings,
    /// The final: `(fill, map side)`.
    pub final_mode: Option<(AgentSpec, u32)>,
    /// Paired forks: the pairs start from the replays of a folder at given rounds.
    pub forks: Option<AbForks>,
}

/// Where the pairs of a paired-fork A/B test start (`--from-replays DIR --at 30,60 --seat N`):
/// every replay of `dir` at each of `rounds`, A and B in `seat` (default: the first army seat).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AbForks {
    pub dir: PathBuf,
    pub rounds: Vec<u32>,
    pub seat: Option<usize>,
}

/// Whom A and B each play, instead of each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Against {
    /// This opponent.
    Opponent(AgentSpec),
    /// `both`: head to head, then each against the Council (two tests, two verdicts).
    Both,
}

impl std::str::FromStr for Against {
    type Err = super::runs::RunError;

    /// `both`, or an agent spec.
    fn from_str(text: &str) -> Result<Against, Self::Err> {
        match text {
            "both" => Ok(Against::Both),
            spec => spec.parse().map(Against::Opponent),
        }
    }
}

impl AbRequest {
    /// A test of `b` against `a` with `gbely ab`'s defaults.
    pub fn new(a: AgentSpec, b: AgentSpec) -> AbRequest {
        AbRequest {
            a,
            b,
            against: None,
            maps: Vec::new(),
            seed: defaults::AB_SEED.into(),
            elo_model: EloModel::Logistic,
            elo0: defaults::AB_ELO0,
            elo1: defaults::AB_ELO1,
            share0: defaults::AB_SHARE0,
            share1: defaults::AB_SHARE1,
            alpha: defaults::AB_ALPHA,
            beta: defaults::AB_BETA,
            max_pairs: defaults::AB_MAX_PAIRS,
            jobs: None,
            db: PathBuf::from(defaults::AB_DB),
            settings: MatchSettings::default(),
            final_mode: None,
            forks: None,
        }
    }

    /// The tests it asks for: itself, or for `against: both` head to head and then against the
    /// Council (two tests, two verdicts).
    pub fn tests(&self) -> Vec<AbRequest> {
        match self.against {
            Some(Against::Both) => vec![
                AbRequest { against: None, ..self.clone() },
                AbRequest { against: Some(Against::Opponent(AgentSpec::COUNCIL)), ..self.clone() },
            ],
            _ => vec![self.clone()],
        }
    }

    /// Whether a pair is A against B (not both against an opponent, in a final or from forks).
    pub fn head_to_head(&self) -> bool {
        self.against.is_none() && self.final_mode.is_none() && self.forks.is_none()
    }
}

/// What an A/B test leaves.
#[derive(Clone, Debug)]
pub struct AbReport {
    pub setup: AbSetup,
    /// What a paired-fork test asked for (its points are the setup's).
    pub forks: Option<AbForks>,
    pub sprt: Sprt,
    pub run: AbRun,
    pub sandbox: SandboxMode,
}

impl AbReport {
    /// Stopped by Ctrl-C before the test decided (run again to go on).
    pub fn interrupted(&self) -> bool {
        self.run.interrupted && self.run.verdict == Verdict::Undecided && self.run.pairs < self.setup.max_pairs
    }

    /// Whether a pair was A against B.
    pub fn head_to_head(&self) -> bool {
        self.setup.design() == crate::tournament::ab::AbDesign::HeadToHead
    }

    /// Paired forks: "fork points: 12 from 4 replays in games/ at rounds 20, 40 (seat 0), 9 used".
    pub fn forks_text(&self) -> Option<String> {
        let (f, req) = (self.setup.forks.as_ref()?, self.forks.as_ref()?);
        let rounds: Vec<String> = req.rounds.iter().map(u32::to_string).collect();
        let seat = req.seat.map_or("the first army seat".to_string(), |s| format!("seat {s}"));
        Some(format!(
            "fork points: {} from {} replays in {} at rounds {} ({seat}), {} used",
            f.points.len(),
            f.files,
            req.dir.display(),
            rounds.join(", "),
            self.sprt.n()
        ))
    }

    /// The verdict in words.
    pub fn verdict_text(&self) -> String {
        if self.interrupted() {
            format!("stopped after {} pairs (run again to go on)", self.run.pairs)
        } else {
            self.run.verdict.text(self.run.pairs)
        }
    }

    /// The `gbely ab --json` document.
    pub fn to_json(&self) -> Value {
        let (setup, sprt, run) = (&self.setup, &self.sprt, &self.run);
        let head_to_head = self.head_to_head();
        let pairs: Vec<_> = sprt
            .outcomes
            .iter()
            .enumerate()
            .map(|(k, o)| json!({"k": k, "map": setup.map_of(k), "outcome": o}))
            .collect();
        let est = estimate_json(sprt, head_to_head);
        json!({
            "a": setup.a, "b": setup.b, "against": setup.against,
            "verdict": run.verdict, "verdict_text": self.verdict_text(), "interrupted": self.interrupted(),
            "hypotheses": sprt.hypotheses, "alpha": sprt.alpha, "beta": sprt.beta,
            "llr": sprt.llr(), "bounds": [sprt.lower, sprt.upper],
            "pairs": run.pairs, "max_pairs": setup.max_pairs, "from_journal": run.from_journal,
            "played": run.played,
            "estimate": est, "estimate_text": estimate_text(sprt, head_to_head),
            "expected_pairs": sprt.expected_pairs(),
            "pentanomial": head_to_head.then(|| sprt.counts()),
            "outcomes": sprt.outcomes, "pair_maps": pairs, "seconds": run.seconds,
            "isolation": isolation(self.sandbox),
            "forks": self.setup.forks.as_ref().zip(self.forks.as_ref()).map(|(f, req)| json!({
                "dir": req.dir.display().to_string(), "at": req.rounds, "seat": req.seat,
                "points": f.points.len(), "files": f.files, "used": sprt.n(), "skipped": f.notes,
            })),
        })
    }
}

/// The estimate of an A/B test as data (`gbely ab --json`'s `estimate`, the stand's figures):
/// [`Sprt::estimate`], the one estimate of the test, as pairs come and at the end alike.
pub fn estimate_json(sprt: &Sprt, head_to_head: bool) -> Value {
    let estimate = sprt.estimate();
    if head_to_head {
        json!({"elo": estimate.value.value, "low": estimate.value.low, "high": estimate.value.high,
               "score": estimate.mean_outcome, "los": estimate.los, "logistic": estimate.logistic,
               "normalized": estimate.normalized, "sweep": estimate.sweep})
    } else {
        json!({"share_points": estimate.value.value, "low": estimate.value.low, "high": estimate.value.high,
               "mean": estimate.mean_outcome, "los": estimate.los})
    }
}

/// Where an A/B test stands after the pairs read so far (the stand's progress): pairs, the LLR
/// and its bounds, the hypotheses, the estimate (as [`AbReport::to_json`] has them) and the
/// pentanomial counts head to head.
pub fn ab_progress_json(sprt: &Sprt, head_to_head: bool) -> Value {
    json!({
        "pairs": sprt.n(), "llr": sprt.llr(), "lower": sprt.lower, "upper": sprt.upper,
        "bounds": [sprt.lower, sprt.upper], "verdict": sprt.verdict(), "hypotheses": sprt.hypotheses,
        "alpha": sprt.alpha, "beta": sprt.beta,
        "estimate": estimate_json(sprt, head_to_head), "estimate_text": estimate_text(sprt, head_to_head),
        "pentanomial": head_to_head.then(|| sprt.counts()),
    })
}

/// A signed number, or ±∞ for an unbounded end.
fn signed(x: Option<f64>, high: bool, decimals: usize) -> String {
    match x {
        Some(x) if x.is_finite() => format!("{x:+.decimals$}"),
        _ if high => "+inf".into(),
        _ => "-inf".into(),
    }
}

fn unit(t: &Sprt) -> &'static str {
    match t.hypotheses {
        Hypotheses::Elo { model: EloModel::Logistic, .. } => "Elo",
        Hypotheses::Elo { model: EloModel::Normalized, .. } => "nElo",
        Hypotheses::Share { .. } => "share points",
    }
}

/// "+35 Elo [-10, +80]": an estimate and its interval.
pub fn interval_text(i: &Interval, unit: &str, decimals: usize) -> String {
    format!(
        "{} {unit} [{}, {}]",
        signed(i.value, i.low.is_some(), decimals),
        signed(i.low, false, decimals),
        signed(i.high, true, decimals)
    )
}

/// "B−A +35 Elo [−10, +80]", or for a sweep "all 8 pairs won: B−A ≥ +137 Elo (95 %)": the one
/// estimate every place shows ([`Sprt::estimate`], corrected for the sequential stop, which for
/// a test still going is the stop "undecided after these pairs") — `gbely ab`'s progress line and
/// summary, the stand's list — so the same pairs give the same figures everywhere.
pub fn estimate_text(t: &Sprt, head_to_head: bool) -> String {
    let e = t.estimate();
    if let Some(s) = e.sweep {
        let (what, rel) = if s.won { ("won", "≥") } else { ("lost", "≤") };
        return format!("all {} pairs {what}: B−A {rel} {:+.0} Elo (95 %)", s.pairs, s.bound_elo);
    }
    let decimals = if head_to_head { 0 } else { 2 };
    let mut text = format!("B−A {}", interval_text(&e.value, unit(t), decimals));
    if let (Hypotheses::Elo { model: EloModel::Normalized, .. }, Some(l)) = (t.hypotheses, e.logistic) {
        text += &format!("; {} logistic", interval_text(&l, "Elo", 0));
    }
    text
}

/// Runs one A/B test (not `against: both`: run each of [`AbRequest::tests`]); `line` is called
/// after each pair the test reads.
pub fn run_ab(req: &AbRequest, line: &mut dyn FnMut(&Sprt)) -> Result<AbReport, LeagueError> {
    let bad = |why: &str| Err(LeagueError::Request(why.to_string()));
    if req.against == Some(Against::Both) {
        return bad("`both` is two tests: run each of AbRequest::tests()");
    }
    if req.final_mode.is_some() && req.against.is_some() {
        return bad("a final's A/B test plays against its field, not against an opponent");
    }
    if req.forks.is_some() && (req.against.is_some() || req.final_mode.is_some() || !req.maps.is_empty()) {
        return bad(
            "--from-replays plays the replays' maps against their own agents: not with --against, --final or --maps",
        );
    }
    if !(0.0 < req.alpha && req.alpha < 0.5 && 0.0 < req.beta && req.beta < 0.5) {
        return bad("--alpha and --beta are error rates between 0 and 0.5");
    }
    let against = match &req.against {
        Some(Against::Opponent(o)) => Some(o),
        _ => None,
    };
    let mut specs = vec![req.a.clone(), req.b.clone()];
    specs.extend(against.cloned());
    specs.extend(req.final_mode.as_ref().map(|f| f.0.clone()));
    for s in &specs {
        s.check()?;
    }
    let s = &req.settings;
    let forks = match &req.forks {
        Some(f) => {
            // A fork plays its source's rounds: another length, asked for, is refused.
            let asked = (s.rounds != Defaults::ROUNDS).then_some(s.rounds);
            let points = fork_points(&f.dir, &f.rounds, f.seat, asked)?;
            for note in &points.notes {
                eprintln!("gbely: note: {note}");
            }
            // The other seats' agents (the Council, built-ins, the examples) may need Python too.
            specs.extend(
                points
                    .points
                    .iter()
                    .flat_map(|p| p.agents.iter().flatten().cloned())
                    .collect::<std::collections::HashSet<_>>(),
            );
            Some(Arc::new(points))
        }
        None => None,
    };
    let py = league_python(&specs, &python(s.python.as_deref()))?;
    let entry = |spec: &AgentSpec| entry_of(spec, &py);
    let setup = AbSetup {
        a: entry(&req.a)?,
        b: entry(&req.b)?,
        against: against.map(entry).transpose()?,
        maps: req.maps.clone(),
        seed: req.seed.clone(),
        max_pairs: forks.as_ref().map_or(req.max_pairs, |f| req.max_pairs.min(f.points.len())).max(1),
        forks,
        final_mode: req
            .final_mode
            .as_ref()
            .map(|(fill, size)| Ok::<_, LeagueError>((entry(fill)?, *size)))
            .transpose()?,
    };
    let hypotheses = if req.head_to_head() {
        if req.elo1 <= req.elo0 {
            return bad("--elo1 must be more than --elo0");
        }
        Hypotheses::Elo { model: req.elo_model, elo0: req.elo0, elo1: req.elo1 }
    } else {
        if req.share1 <= req.share0 {
            return bad("--share1 must be more than --share0");
        }
        Hypotheses::Share { share0: req.share0, share1: req.share1 }
    };
    let mut sprt = Sprt::new(hypotheses, req.alpha, req.beta);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // One match per core; agent processes (eight in a final) take turns on the cores, so none
    // thinks without one.
    let config = LeagueConfig {
        cores: Some(CoreGate::new(cores)),
        ..s.config(py, req.jobs.unwrap_or(cores).max(1), folder_of(&req.db).join("runs"))
    };
    let mut journal = Journal::open(&req.db)?;
    let run = run_pairs(&setup, &mut sprt, &config, &mut journal, line)?;
    Ok(AbReport { setup, forks: req.forks.clone(), sprt, run, sandbox: s.sandbox })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_settings_travel_as_json_and_back_with_no_time_limit() {
        let s = MatchSettings {
            rounds: 40,
            time_limit: TimeLimit::OFF,
            sandbox: SandboxMode::Require,
            ..MatchSettings::default()
        };
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json, json!({"rounds": 40, "time_limit": null, "sandbox": "require"}));
        assert_eq!(serde_json::from_value::<MatchSettings>(json).unwrap(), s);
        let judge = serde_json::to_value(MatchSettings::default()).unwrap();
        assert_eq!(judge, json!({"rounds": Defaults::ROUNDS, "time_limit": 2.0, "sandbox": "auto"}));
        assert_eq!(serde_json::from_value::<MatchSettings>(json!({})).unwrap(), MatchSettings::default());
    }
}
