//! The stand (`gbely stand [FOLDER]`): a local web application where agents are picked from a
//! folder, a mode is chosen and games are played, watched and kept.
//!
//! * [`agents`]: the folder, looked at every second; each agent file listed as `gbely agents`
//!   lists it and checked as `gbely check` checks it, in the background; names from the page
//!   become paths in one place ([`agents::resolve`]: no `..`, no link out of the folder).
//! * [`jobs`]: what the page asks for, checked, and how each kind runs — a duel or a final
//!   through the match service with its live feed ([`crate::app::web::live`]), a league or an
//!   A/B test through [`crate::app::requests`].
//! * [`history`]: every run in SQLite, with its result, replay and the agents' versions.
//!
//! Runs wait in one queue and are played by the tournament core's scheduler
//! ([`crate::tournament::run_in_order`]) on `jobs` workers; each runs in the stop scope of its
//! own flag ([`crate::runner::interrupt::within`]), so one can be stopped and the rest go on.
//! The page is [`page.html`](stand.html): the state is pushed to it as server-sent events.

pub mod agents;
pub mod history;
pub mod jobs;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{Method, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use serde_json::{json, Value};

use self::agents::{Check, Folder};
use self::history::{History, RunStatus};
use self::jobs::{Checked, Context, Request as RunRequest};
use crate::app::check::TestMatch;
use crate::app::web::live::{parts, Live};
use crate::app::web::{html, json_text, read_body, text, Server};
use crate::runner::sandbox::SandboxMode;
use crate::tournament::{run_in_order, Flow, Workers};

/// The page.
const PAGE: &str = include_str!("stand.html");

/// How a stand is started.
#[derive(Clone, Debug)]
pub struct StandConfig {
    /// The agents' folder.
    pub folder: PathBuf,
    /// Where the history and the runs' files go.
    pub data: PathBuf,
    /// 0: a free port.
    pub port: u16,
    /// The Python interpreter of agent files (resolved).
    pub python: String,
    /// Runs at once (at least 1).
    pub jobs: usize,
    /// Rounds of each agent file's test match.
    pub check_rounds: u32,
    /// The sandbox of the checks' test matches.
    pub sandbox: SandboxMode,
}

/// Why a stand did not start.
#[derive(Debug, thiserror::Error)]
pub enum StandError {
    #[error("the agents' folder {path}: {error}")]
    Folder { path: String, error: std::io::Error },
    #[error("the stand's data folder {path}: {error}")]
    Data { path: String, error: std::io::Error },
    #[error("the stand's history {path}: {error}")]
    History { path: String, error: rusqlite::Error },
    #[error("cannot start the stand's server: {0}")]
    Server(std::io::Error),
}

/// A run as the stand knows it.
#[derive(Debug)]
struct Run {
    row: history::Row,
    summary: String,
    progress: Value,
    /// A duel's or final's live feed (this session's runs).
    live: Option<Arc<Live>>,
    stop: Arc<AtomicBool>,
}

impl Run {
    fn to_json(&self) -> Value {
        json!({
            "id": self.row.id, "kind": self.row.kind, "title": self.row.title, "created": self.row.created,
            "status": self.row.status, "summary": self.summary, "progress": self.progress,
            "live": self.live.is_some(), "replay": self.row.replay.is_some(), "versions": self.row.versions,
        })
    }
}

/// The stand's state, shared by the server, the queue's workers and the folder's watchers.
#[derive(Debug)]
pub struct Stand {
    config: StandConfig,
    ctx: Context,
    folder: Mutex<Folder>,
    runs: Mutex<BTreeMap<i64, Run>>,
    /// This session's queue: the k-th run asked for is the scheduler's task k.
    queue: Mutex<Vec<(i64, Option<Checked>)>>,
    queued: Condvar,
    history: Mutex<History>,
    version: tokio::sync::watch::Sender<u64>,
    closing: AtomicBool,
    /// The runs whose live feeds are kept after their end, oldest first.
    kept: Mutex<std::collections::VecDeque<i64>>,
}

/// How many finished matches keep their live feed in memory.
const LIVE_KEPT: usize = 3;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Stand {
    fn bump(&self) {
        self.version.send_modify(|v| *v += 1);
    }

    fn runs_dir(&self, id: i64) -> PathBuf {
        self.config.data.join("runs").join(id.to_string())
    }

    /// What the page shows: the folder's agents and maps, the built-in agents, every run.
    pub fn state(&self) -> Value {
        let folder = lock(&self.folder);
        let runs = lock(&self.runs);
        json!({
            "folder": self.config.folder.display().to_string(),
            "python": self.config.python,
            "jobs": self.config.jobs,
            "agents": folder.agents.values().map(|a| a.to_json()).collect::<Vec<_>>(),
            "maps": folder.maps,
            "builtins": jobs::built_in().collect::<Vec<_>>(),
            "runs": runs.values().rev().map(Run::to_json).collect::<Vec<_>>(),
        })
    }

    /// Asks for a run; its id.
    pub fn submit(&self, req: &RunRequest) -> Result<i64, String> {
        if self.closing.load(Ordering::Relaxed) {
            return Err("the stand is stopping".into());
        }
        let checked = self.ctx.check(req)?;
        let request = serde_json::to_value(req).map_err(|e| e.to_string())?;
        let id = lock(&self.history)
            .add(checked.kind, &checked.title, &request, &checked.versions)
            .map_err(|e| format!("the history: {e}"))?;
        let row = lock(&self.history).get(id).map_err(|e| e.to_string())?.ok_or("the run vanished")?;
        let live = match &checked.plan {
            jobs::Plan::Match { live, .. } => Some(Arc::clone(live)),
            _ => None,
        };
        let run = Run {
            row,
            summary: RunStatus::Queued.to_string(),
            progress: Value::Null,
            live,
            stop: Arc::new(AtomicBool::new(false)),
        };
        lock(&self.runs).insert(id, run);
        lock(&self.queue).push((id, Some(checked)));
        self.queued.notify_all();
        self.bump();
        Ok(id)
    }

    /// Stops a run: a queued one never starts, a running one stops as on Ctrl-C (its agents
    /// killed, its replay kept and marked interrupted).
    pub fn stop(&self, id: i64) -> Result<(), (StatusCode, String)> {
        let runs = lock(&self.runs);
        let run = runs.get(&id).ok_or((StatusCode::NOT_FOUND, format!("no run {id}")))?;
        if !run.row.status.is_active() {
            return Err((StatusCode::CONFLICT, format!("run {id} is {}", run.row.status)));
        }
        run.stop.store(true, Ordering::Relaxed);
        if let Some(live) = &run.live {
            live.stop();
        }
        drop(runs);
        self.queued.notify_all();
        Ok(())
    }

    /// Deletes a run that is over, with its files.
    pub fn delete(&self, id: i64) -> Result<(), (StatusCode, String)> {
        let mut runs = lock(&self.runs);
        let run = runs.get(&id).ok_or((StatusCode::NOT_FOUND, format!("no run {id}")))?;
        if run.row.status.is_active() {
            return Err((StatusCode::CONFLICT, format!("run {id} is {}: stop it first", run.row.status)));
        }
        lock(&self.history).delete(id).map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        runs.remove(&id);
        drop(runs);
        let _ = std::fs::remove_dir_all(self.runs_dir(id));
        self.bump();
        Ok(())
    }

    /// The scheduler's task `k`: waits for the k-th run of the session, then plays it.
    fn play(&self, k: usize) {
        let (id, checked) = {
            let mut q = lock(&self.queue);
            loop {
                if self.closing.load(Ordering::Relaxed) {
                    return;
                }
                if let Some(entry) = q.get_mut(k) {
                    break (entry.0, entry.1.take());
                }
                q = self.queued.wait_timeout(q, Duration::from_millis(500)).unwrap_or_else(|e| e.into_inner()).0;
            }
        };
        let Some(checked) = checked else { return };
        let Some(stop) = lock(&self.runs).get(&id).map(|r| Arc::clone(&r.stop)) else { return };
        if stop.load(Ordering::Relaxed) {
            self.ended(id, RunStatus::Cancelled, &Value::Null, None, "stopped before it started".into());
            return;
        }
        self.set(id, |r| {
            r.row.status = RunStatus::Running;
            r.summary = RunStatus::Running.to_string();
        });
        let _ = lock(&self.history).set_status(id, RunStatus::Running);
        let dir = self.runs_dir(id);
        let mut progress = |doc: Value| self.set(id, |r| r.progress = doc);
        let ended = jobs::run(checked, &dir, &stop, &mut progress);
        let replay = ended.replay.as_ref().map(|p| p.display().to_string());
        self.ended(id, ended.status, &ended.result, replay, ended.summary);
    }

    fn set(&self, id: i64, f: impl FnOnce(&mut Run)) {
        if let Some(r) = lock(&self.runs).get_mut(&id) {
            f(r);
        }
        self.bump();
    }

    fn ended(&self, id: i64, status: RunStatus, result: &Value, replay: Option<String>, summary: String) {
        let _ = lock(&self.history).finish(id, status, result, replay.as_deref());
        self.set(id, |r| {
            r.row.status = status;
            r.row.result = result.clone();
            r.row.replay = replay;
            r.summary = summary;
        });
        // The live feeds of the last few matches stay (pages still reading them); older ones are
        // dropped, their pages are the replays' (`/m/ID/` leads to `/r/ID`).
        if lock(&self.runs).get(&id).is_none_or(|r| r.live.is_none()) {
            return;
        }
        let mut kept = lock(&self.kept);
        kept.push_back(id);
        while kept.len() > LIVE_KEPT {
            let old = kept.pop_front();
            if let Some(r) = old.and_then(|old| lock(&self.runs).get_mut(&old).map(|r| r.live.take())) {
                drop(r);
            }
        }
    }

    /// Looks at the folder: new and changed files are read, removed ones dropped.
    fn look(&self) {
        let (files, maps) = agents::look(&self.ctx.folder);
        let stale: Vec<(String, u64, Option<std::time::SystemTime>)> = {
            let f = lock(&self.folder);
            files
                .iter()
                .filter(|(n, b, m)| f.agents.get(n).is_none_or(|a| a.bytes != *b || a.modified != *m))
                .cloned()
                .collect()
        };
        let read: Vec<agents::AgentFile> =
            stale.iter().map(|(n, b, m)| agents::read(&self.ctx.folder, &self.ctx.python, n, *b, *m)).collect();
        let mut f = lock(&self.folder);
        let mut changed = !read.is_empty() || f.maps != maps;
        let before = f.agents.len();
        f.agents.retain(|n, _| files.iter().any(|(m, _, _)| m == n));
        changed |= f.agents.len() != before;
        for a in read {
            // The same content as before (touched, not edited) keeps its check.
            let same = f
                .agents
                .get(&a.file)
                .filter(|old| old.hash == a.hash && !a.hash.is_empty())
                .map(|old| old.check.clone());
            let mut a = a;
            if let Some(check) = same {
                a.check = check;
            }
            f.agents.insert(a.file.clone(), a);
        }
        f.maps = maps;
        drop(f);
        if changed {
            self.bump();
        }
    }

    /// Checks the next file waiting for its check; whether there was one.
    fn check_next(&self) -> bool {
        let next = {
            let mut f = lock(&self.folder);
            let Some(a) = f.agents.values_mut().find(|a| matches!(a.check, Check::Waiting)) else { return false };
            a.check = Check::Running;
            (a.file.clone(), a.hash.clone())
        };
        self.bump();
        let (file, hash) = next;
        let runs = self.config.data.join("checks");
        let outcome = match agents::resolve(&self.ctx.folder, &file) {
            Err(e) => Check::Failed(e),
            Ok(path) => {
                let test = TestMatch { rounds: self.config.check_rounds, sandbox: self.config.sandbox };
                let r = crate::app::check::check_agent(&path, &self.ctx.python, test, &runs);
                match r {
                    Ok(report) => Check::Done(Box::new(report)),
                    Err(e) => Check::Failed(e.to_string()),
                }
            }
        };
        let mut f = lock(&self.folder);
        if let Some(a) = f.agents.get_mut(&file).filter(|a| a.hash == hash) {
            a.check = outcome;
        }
        drop(f);
        self.bump();
        true
    }

    /// An agent file's details: its listing and check, its check's log, the runs it played.
    fn agent(&self, file: &str) -> Result<Value, (StatusCode, String)> {
        agents::resolve(&self.ctx.folder, file).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
        let f = lock(&self.folder);
        let a = f
            .agents
            .get(file)
            .ok_or((StatusCode::NOT_FOUND, format!("`{file}` is not an agent file of the folder")))?;
        let mut doc = a.to_json();
        let log = match &a.check {
            Check::Done(r) => r.run_dir.as_ref().and_then(|d| first_log(d)),
            _ => None,
        };
        drop(f);
        doc["log"] = json!(log.and_then(|p| crate::files::read_text_bounded(&p, 64 << 10).ok()));
        let runs = lock(&self.runs);
        doc["runs"] = json!(runs
            .values()
            .rev()
            .filter(|r| r.row.versions.get(file).is_some())
            .map(|r| json!({"id": r.row.id, "title": r.row.title, "status": r.row.status, "summary": r.summary, "version": r.row.versions[file], "result": r.row.result}))
            .collect::<Vec<_>>());
        Ok(doc)
    }
}

/// The first log file in a run folder.
fn first_log(dir: &Path) -> Option<PathBuf> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    logs.into_iter().next()
}

/// A running stand: its address; [`Running::close`] stops it.
#[derive(Debug)]
pub struct Running {
    pub stand: Arc<Stand>,
    pub url: String,
    server: Server,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Running {
    /// Stops the stand: no new run starts, the running ones are stopped (replays kept, marked
    /// interrupted), the watchers end, the server closes.
    pub fn close(mut self) {
        let s = &self.stand;
        s.closing.store(true, Ordering::Relaxed);
        for r in lock(&s.runs).values() {
            r.stop.store(true, Ordering::Relaxed);
            if let Some(l) = &r.live {
                l.stop();
            }
        }
        s.queued.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        self.server.stop();
    }
}

/// Starts a stand.
pub fn start(config: StandConfig) -> Result<Running, StandError> {
    let folder = config
        .folder
        .canonicalize()
        .map_err(|error| StandError::Folder { path: config.folder.display().to_string(), error })?;
    if !folder.is_dir() {
        let error = std::io::Error::other("not a folder");
        return Err(StandError::Folder { path: config.folder.display().to_string(), error });
    }
    let shown = config.data.display().to_string();
    let data_error = |error| StandError::Data { path: shown.clone(), error };
    std::fs::create_dir_all(&config.data).map_err(data_error)?;
    // Absolute: the history's paths (replays) hold wherever the stand is started next.
    let mut config = config;
    config.data = config.data.canonicalize().map_err(data_error)?;
    let db_path = config.data.join("stand.sqlite");
    let history =
        History::open(&db_path).map_err(|error| StandError::History { path: db_path.display().to_string(), error })?;
    let rows = history.all().map_err(|error| StandError::History { path: db_path.display().to_string(), error })?;
    let runs: BTreeMap<i64, Run> = rows
        .into_iter()
        .map(|row| {
            let summary = row.status.to_string();
            (row.id, Run { row, summary, progress: Value::Null, live: None, stop: Arc::new(AtomicBool::new(false)) })
        })
        .collect();
    let ctx = Context { folder, python: config.python.clone() };
    let stand = Arc::new(Stand {
        config: config.clone(),
        ctx,
        folder: Mutex::new(Folder::default()),
        runs: Mutex::new(runs),
        queue: Mutex::new(Vec::new()),
        queued: Condvar::new(),
        history: Mutex::new(history),
        version: tokio::sync::watch::Sender::new(0),
        closing: AtomicBool::new(false),
        kept: Mutex::new(std::collections::VecDeque::new()),
    });
    stand.look();
    let mut threads = Vec::new();
    let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| std::thread::Builder::new().name(name.into()).spawn(f);
    let s = Arc::clone(&stand);
    threads.push(
        spawn(
            "gbely-stand-queue",
            Box::new(move || {
                let closing = || s.closing.load(Ordering::Relaxed);
                run_in_order(
                    0..usize::MAX,
                    Workers::new(s.config.jobs.max(1)),
                    &closing,
                    |k| s.play(k),
                    |_, ()| Flow::Go,
                );
            }),
        )
        .map_err(StandError::Server)?,
    );
    let s = Arc::clone(&stand);
    threads.push(
        spawn(
            "gbely-stand-folder",
            Box::new(move || {
                while !s.closing.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(700));
                    s.look();
                }
            }),
        )
        .map_err(StandError::Server)?,
    );
    let s = Arc::clone(&stand);
    threads.push(
        spawn(
            "gbely-stand-checks",
            Box::new(move || {
                let closing = Arc::new(AtomicBool::new(false));
                while !s.closing.load(Ordering::Relaxed) {
                    // A check's test match stops with the stand.
                    let busy = crate::runner::interrupt::within(Some(Arc::clone(&closing)), || s.check_next());
                    if !busy {
                        std::thread::sleep(Duration::from_millis(300));
                    }
                    closing.store(s.closing.load(Ordering::Relaxed), Ordering::Relaxed);
                }
            }),
        )
        .map_err(StandError::Server)?,
    );
    let router = routes(Arc::clone(&stand));
    let token = crate::app::web::random_token().map_err(StandError::Server)?;
    let server = Server::start(config.port, token, router).map_err(StandError::Server)?;
    Ok(Running { url: server.url("/"), stand, server, threads })
}

type Shared = State<Arc<Stand>>;

fn refused((status, why): (StatusCode, String)) -> Response {
    text(status, why)
}

fn routes(stand: Arc<Stand>) -> Router<()> {
    Router::new()
        .route("/", get(|| async { html(PAGE.to_string()) }))
        .route("/api/state", get(|State(s): Shared| async move { json_text(s.state().to_string()) }))
        .route("/api/events", get(events))
        .route(
            "/api/agents/{file}",
            get(|State(s): Shared, UrlPath(file): UrlPath<String>| async move {
                match s.agent(&file) {
                    Ok(doc) => json_text(doc.to_string()),
                    Err(e) => refused(e),
                }
            }),
        )
        .route("/api/runs", post(submit))
        .route(
            "/api/runs/{id}",
            get(|State(s): Shared, UrlPath(id): UrlPath<i64>| async move {
                let runs = lock(&s.runs);
                match runs.get(&id) {
                    Some(r) => {
                        let mut doc = r.to_json();
                        doc["result"] = r.row.result.clone();
                        doc["request"] = r.row.request.clone();
                        json_text(doc.to_string())
                    }
                    None => text(StatusCode::NOT_FOUND, format!("no run {id}")),
                }
            })
            .delete(|State(s): Shared, UrlPath(id): UrlPath<i64>| async move {
                match s.delete(id) {
                    Ok(()) => json_text(json!({"deleted": id}).to_string()),
                    Err(e) => refused(e),
                }
            }),
        )
        .route(
            "/api/runs/{id}/stop",
            post(|State(s): Shared, UrlPath(id): UrlPath<i64>| async move {
                match s.stop(id) {
                    Ok(()) => json_text(json!({"stopping": id}).to_string()),
                    Err(e) => refused(e),
                }
            }),
        )
        .route(
            "/api/runs/{id}/again",
            post(|State(s): Shared, UrlPath(id): UrlPath<i64>| async move {
                let request = lock(&s.runs).get(&id).map(|r| r.row.request.clone());
                let Some(request) = request else { return text(StatusCode::NOT_FOUND, format!("no run {id}")) };
                let again =
                    serde_json::from_value::<RunRequest>(request).map_err(|e| e.to_string()).and_then(|r| s.submit(&r));
                match again {
                    Ok(new) => json_text(json!({"id": new}).to_string()),
                    Err(e) => text(StatusCode::BAD_REQUEST, e),
                }
            }),
        )
        .route("/r/{id}", get(replay_page))
        .route("/r/{id}/{stem}", get(league_replay_page))
        .route("/m/{id}", get(|UrlPath(id): UrlPath<i64>, req: Request| async move { to_slash(id, &req) }))
        .route("/m/{id}/", any(live_route))
        .route("/m/{id}/{*rest}", any(live_route))
        .with_state(stand)
}

/// `/m/ID` → `/m/ID/`: the viewer's calls are relative to its folder.
fn to_slash(id: i64, req: &Request) -> Response {
    let q = req.uri().query().map_or(String::new(), |q| format!("?{q}"));
    (StatusCode::SEE_OTHER, [(axum::http::header::LOCATION, format!("/m/{id}/{q}"))]).into_response()
}

async fn submit(State(s): Shared, body: Body) -> Response {
    let bytes = match read_body(body, 1 << 20).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let req = match serde_json::from_slice::<RunRequest>(&bytes) {
        Ok(r) => r,
        Err(e) => return text(StatusCode::BAD_REQUEST, format!("not a run the stand knows: {e}")),
    };
    match s.submit(&req) {
        Ok(id) => json_text(json!({"id": id}).to_string()),
        Err(e) => text(StatusCode::BAD_REQUEST, e),
    }
}

/// A run's match, live (this session's duels and finals): the viewer page and its calls.
async fn live_route(State(s): Shared, req: Request) -> Response {
    let (method, path, query) = parts(&req);
    let rest = path.splitn(4, '/').collect::<Vec<_>>();
    // ["", "m", ID, rest…]
    let Some(id) = rest.get(2).and_then(|i| i.parse::<i64>().ok()) else {
        return text(StatusCode::NOT_FOUND, "not found");
    };
    let sub = format!("/{}", rest.get(3).copied().unwrap_or(""));
    let live = lock(&s.runs).get(&id).map(|r| (r.live.clone(), r.row.replay.is_some()));
    match live {
        Some((Some(live), _)) => live.respond(method, &sub, &query, req.into_body()).await,
        Some((None, true)) if method == Method::GET && sub == "/" => {
            (StatusCode::SEE_OTHER, [(axum::http::header::LOCATION, format!("/r/{id}?{query}"))]).into_response()
        }
        _ => text(StatusCode::NOT_FOUND, format!("run {id} has no live match here (see its replay)")),
    }
}

/// A run's replay in the viewer (the page `gbely replay view` writes).
async fn replay_page(State(s): Shared, UrlPath(id): UrlPath<i64>) -> Response {
    let path = lock(&s.runs).get(&id).and_then(|r| r.row.replay.clone());
    let Some(path) = path else { return text(StatusCode::NOT_FOUND, format!("run {id} has no replay")) };
    match crate::app::web::replay_page(PathBuf::from(path)).await {
        Ok(page) => html(page),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("the replay of run {id}: {e}")),
    }
}

/// A league run's match in the viewer: `replays/STEM.json.gz` of the run's folder, `STEM` as the
/// run's result names it (hexadecimal: no path can be made of it).
async fn league_replay_page(State(s): Shared, UrlPath((id, stem)): UrlPath<(i64, String)>) -> Response {
    if stem.is_empty() || !stem.bytes().all(|b| b.is_ascii_hexdigit()) || !lock(&s.runs).contains_key(&id) {
        return text(StatusCode::NOT_FOUND, format!("run {id} has no match {stem}"));
    }
    let path = s.runs_dir(id).join("replays").join(format!("{stem}.json.gz"));
    if !path.is_file() {
        return text(StatusCode::NOT_FOUND, format!("run {id} has no replay of match {stem}"));
    }
    match crate::app::web::replay_page(path).await {
        Ok(page) => html(page),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("the replay of run {id}'s match {stem}: {e}")),
    }
}

/// The state, pushed at every change (at most five times a second).
async fn events(State(s): Shared) -> Sse<impl futures_util::Stream<Item = Result<Event, std::convert::Infallible>>> {
    let rx = s.version.subscribe();
    let stream = futures_util::stream::unfold((s, rx, true), |(s, mut rx, first)| async move {
        if !first {
            rx.changed().await.ok()?;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        rx.borrow_and_update();
        let doc = s.state().to_string();
        Some((Ok(Event::default().event("state").data(doc)), (s, rx, false)))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
