//! A match in the browser while it is played (`--watch`, a stand's match), and the human seat.
//!
//! [`Live`] is one match's feed: the viewer page, the match's header and its rounds as they are
//! resolved, pushed to the page as server-sent events (`GET api/events`), and the human seat's
//! observation and answer. `--watch` serves one [`Live`] at the root of its own [`Server`]
//! ([`Live::serve`]); the stand serves one per match under `/m/ID/` ([`Live::respond`] is the
//! one implementation of both). The [`Server`]'s guard makes only this machine's user see or
//! drive it (see [`crate::app::web`]).
//!
//! With a human seat, the page is that seat's agent: it reads the round's observation (`GET
//! api/observation`, exactly what an agent process gets on stdin, or the `ask` event) and sends
//! the answer (`POST api/answer`, what an agent prints), and the whole match is hidden from it
//! until it is over. docs/human.md documents the calls.

use std::convert::Infallible;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, Method, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Router;
use gbely_rules::{Grid, Observation, Terrain, ViolationKind};
use gbely_world::Map;
use serde_json::{json, Value};

use super::{html, json_text, query_param, random_token, read_body, text, Server};
use crate::game::Observer;
use crate::replays::viewer::{viewer_header, viewer_page, viewer_page_in, LivePage, LiveTurns, PageMode, ViewerLang};
use crate::replays::{seat_colors, terrain_color};
use crate::runner::player::{Player, PlayerAnswer};
use crate::session::RoundRecord;
use crate::sim::{Match, RoundReport};
use crate::wire::{answer_from_value, observation_json};

pub use crate::app::runs::agent_spec::HUMAN;

/// The largest answer body taken from the page.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The most rounds one `turns` event carries (a page that connects late catches up in a few).
const TURNS_PER_EVENT: usize = 40;

/// What the server shares with the match.
#[derive(Debug, Default)]
struct State {
    /// Each resolved round as the viewer's JSON, written (as text: a `Value` of a 60×60 round
    /// takes ten times the memory).
    turns: Vec<String>,
    /// The result document once the match is over.
    result: Option<Value>,
    /// The match's result as its replay will hold it, set with the last round's turn: the page
    /// shows the end (the podium) the moment the last round arrives, before the agents are
    /// stopped and the replay is written (seconds for a final), which [`Live::finish`] waits for.
    end: Option<Value>,
    replay: Option<String>,
    /// The finished replay as the viewer's data (what `gbely replay view` embeds), when written.
    full: Option<String>,
    /// The finished replay's file, made the viewer's data when a page asks for it (a stand keeps
    /// many matches: not their data).
    full_from: Option<std::path::PathBuf>,
    /// A page has been told that the match is over.
    told_over: bool,
    /// The human seat's observation waiting for an answer: (round, JSON).
    asking: Option<(u32, String)>,
    /// The human seat's answer to `asking`.
    answer: Option<Vec<Value>>,
    stop: bool,
    /// The match waits for its start: the page's (`Start::Page`) or a watcher's.
    waiting: Option<Start>,
    /// Paused from the page: no round is resolved until it is resumed.
    paused: bool,
    /// Pages reading the rounds now.
    watchers: usize,
}

/// What a watched match waits for before its first round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Someone at the screen presses start (`POST api/start`): a projected final.
    Page,
    /// A page is watching (`--start-when-ready`, for scripts).
    Watched,
}

/// The live feed of one match.
#[derive(Debug)]
pub struct Live {
    state: Mutex<State>,
    changed: Condvar,
    /// Bumped at every change, for the pages' event streams.
    version: tokio::sync::watch::Sender<u64>,
    human: Option<u8>,
    /// The seats' names, for the end's result.
    names: Vec<String>,
    /// The page's title (the seats' names).
    title: String,
    page: String,
    header: String,
    info: String,
}

/// A running `--watch` server: the feed, the address to open and the server.
#[derive(Debug)]
pub struct Served {
    pub live: Arc<Live>,
    pub url: String,
    server: Server,
}

impl Live {
    /// The feed of a match of `map` between `names`; `human` is the seat the page plays, if any.
    pub fn new(map: &Arc<Map>, names: &[String], human: Option<u8>) -> Arc<Live> {
        // The match's own rule for its mode (two seats: a duel).
        let mode = Match::new(map.clone(), crate::sim::MatchConfig::default()).mode();
        let roles: Vec<_> = map.seats().iter().map(|s| s.role).collect();
        let colors = seat_colors(&roles);
        let info = json!({
            "map": map.name(),
            "mode": mode,
            "human": human,
            "seats": names.iter().zip(&roles).zip(&colors).map(|((n, r), c)| json!({"name": n, "role": r, "color": c.hex, "dark": c.wants_dark_text()})).collect::<Vec<_>>(),
            "terrain_colors": Terrain::ALL.iter().map(|&t| (t.glyph().to_string(), json!(terrain_color(t).hex))).collect::<serde_json::Map<_, _>>(),
            "defence_bonus": Terrain::ALL.iter().map(|&t| (t.wire().to_string(), json!(t.defence_bonus()))).collect::<serde_json::Map<_, _>>(),
        });
        Arc::new(Live {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            version: tokio::sync::watch::Sender::new(0),
            human,
            names: names.to_vec(),
            title: names.join(" vs "),
            page: viewer_page(&names.join(" vs "), &PageMode::Live(LivePage { human, ..LivePage::default() })),
            header: viewer_header(map, names, mode).to_string(),
            info: info.to_string(),
        })
    }

    /// Starts a server of its own on 127.0.0.1:`port` (0: any free port) for a match of `map`
    /// between `names`, the feed at the root (`--watch`).
    pub fn serve(map: &Arc<Map>, names: &[String], human: Option<u8>, port: u16) -> std::io::Result<Served> {
        let live = Live::new(map, names, human);
        let l = Arc::clone(&live);
        let router = Router::new().fallback(move |req: Request| {
            let l = Arc::clone(&l);
            async move {
                let (method, path, query) = parts(&req);
                l.respond(method, &path, &query, req.into_body()).await
            }
        });
        let server = Server::start(port, random_token()?, router)?;
        Ok(Served { url: server.url("/"), live, server })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Something changed: wakes the human seat's wait and the pages' event streams.
    fn bump(&self) {
        self.changed.notify_all();
        self.version.send_modify(|v| *v += 1);
    }

    fn hidden(&self, st: &State) -> bool {
        self.human.is_some() && st.result.is_none()
    }

    /// The answer to a request for `path` (below where the feed is served: `/`, `/api/…`); the
    /// caller has checked the token and the host.
    pub async fn respond(self: Arc<Self>, method: Method, path: &str, query: &str, body: Body) -> Response {
        // The content type of the empty answer to `GET api/observation` once the match is over.
        const OVER: &str = "application/x-gbely-over";
        const HIDDEN: &str = "the match is hidden from the human seat until it is over";
        let param = |name: &str| query_param(query, name);
        match (method, path) {
            (Method::GET, "/") => html(self.page.clone()),
            (Method::GET, "/api/info") => json_text(self.info.clone()),
            (Method::GET, "/api/header") => {
                if self.hidden(&self.lock()) {
                    return text(StatusCode::FORBIDDEN, HIDDEN);
                }
                json_text(self.header.clone())
            }
            (Method::GET, "/api/turns") => {
                let mut st = self.lock();
                if self.hidden(&st) {
                    return text(StatusCode::FORBIDDEN, HIDDEN);
                }
                let from = param("from").and_then(|f| f.parse::<usize>().ok()).unwrap_or(0).min(st.turns.len());
                let over = st.result.is_some();
                st.told_over |= over;
                json_text(Self::turns_doc(&st, from, st.turns.len()))
            }
            (Method::GET, "/api/events") => {
                let from = param("from").and_then(|f| f.parse::<usize>().ok()).unwrap_or(0);
                self.events(from, param("seat").is_some()).into_response()
            }
            (Method::GET, "/api/data") => {
                let (full, from) = {
                    let st = self.lock();
                    (st.full.clone(), st.full_from.clone())
                };
                match (full, from) {
                    (Some(full), _) => json_text(full),
                    (None, Some(path)) => {
                        let data = tokio::task::spawn_blocking(move || {
                            crate::replays::read_replay(&path)
                                .map_err(|e| e.to_string())
                                .and_then(|r| crate::replays::viewer::viewer_data(&r))
                        })
                        .await;
                        match data {
                            Ok(Ok(v)) => json_text(v.to_string()),
                            Ok(Err(e)) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("the replay: {e}")),
                            Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
                        }
                    }
                    (None, None) => text(StatusCode::NOT_FOUND, "the match is not over, or its replay was not written"),
                }
            }
            (Method::POST, "/api/start") => {
                let mut st = self.lock();
                if st.waiting.is_none() {
                    return text(StatusCode::CONFLICT, "the match is not waiting for its start");
                }
                st.waiting = None;
                drop(st);
                self.bump();
                json_text(json!({"started": true}).to_string())
            }
            (Method::POST, "/api/pause") | (Method::POST, "/api/resume") => {
                let pause = path == "/api/pause";
                let mut st = self.lock();
                if st.result.is_some() {
                    return text(StatusCode::CONFLICT, "the match is over");
                }
                st.paused = pause;
                drop(st);
                self.bump();
                json_text(json!({"paused": pause}).to_string())
            }
            (Method::GET, "/api/observation") => {
                let st = self.lock();
                match (self.human, &st.asking) {
                    (None, _) => text(StatusCode::NOT_FOUND, "no seat of this match is played from the page"),
                    // 204 rather than an error status: browsers log every 4xx answer as an error.
                    _ if st.result.is_some() => {
                        (StatusCode::NO_CONTENT, [(header::CONTENT_TYPE, OVER)]).into_response()
                    }
                    (Some(_), Some((_, obs))) => json_text(obs.clone()),
                    (Some(_), None) => StatusCode::NO_CONTENT.into_response(),
                }
            }
            (Method::POST, "/api/answer") => {
                if self.human.is_none() {
                    return text(StatusCode::NOT_FOUND, "no seat of this match is played from the page");
                }
                let bytes = match read_body(body, MAX_ANSWER_BYTES).await {
                    Ok(b) => b,
                    Err(resp) => return resp,
                };
                let Ok(text_body) = std::str::from_utf8(&bytes) else {
                    return text(StatusCode::BAD_REQUEST, "the answer is not UTF-8 text");
                };
                let list = match serde_json::from_str::<Value>(text_body)
                    .map_err(|e| e.to_string())
                    .and_then(|v| answer_from_value(v).map_err(|e| e.to_string()))
                {
                    Ok(list) => list,
                    Err(e) => {
                        return text(
                            StatusCode::BAD_REQUEST,
                            format!("not an answer: {e} (send {{\"prikazy\": [...]}})"),
                        )
                    }
                };
                let mut st = self.lock();
                let Some(round) = st.asking.as_ref().map(|a| a.0) else {
                    return text(StatusCode::CONFLICT, "no observation is waiting for an answer");
                };
                // `?round=N` makes sure an answer meant for one round is not taken for the next.
                if let Some(meant) = param("round") {
                    if meant != round.to_string() {
                        return text(
                            StatusCode::CONFLICT,
                            format!("round {meant} is not the round waiting for an answer ({round})"),
                        );
                    }
                }
                st.asking = None;
                let n = list.len();
                st.answer = Some(list);
                drop(st);
                self.bump();
                json_text(json!({"round": round, "commands": n}).to_string())
            }
            _ => text(StatusCode::NOT_FOUND, "not found"),
        }
    }

    /// `{"turns": [...], "end", "over", "result", "replay", "full"}` of the turns `from..to`:
    /// `end` (the replay's result) once they reach the last round, `over` once the match is
    /// finished (its agents stopped, its replay written).
    fn turns_doc(st: &State, from: usize, to: usize) -> String {
        let last = to == st.turns.len();
        let over = st.result.is_some() && last;
        let end = st.end.as_ref().filter(|_| last);
        let rest = json!({"end": end, "over": over, "result": st.result, "replay": st.replay, "full": st.full.is_some() || st.full_from.is_some()}).to_string();
        format!("{{\"turns\":[{}],{}", st.turns[from..to].join(","), &rest[1..])
    }

    /// The page's event stream from the `from`-th turn on: `turns` events of what `api/turns`
    /// answers, in order, each with the count of turns sent so far as its id, the last with
    /// `"over": true` (nothing while the match is hidden from its human seat). With `seat` (`?seat`,
    /// the human seat's page): `ask` events, the observation waiting for an answer, then one
    /// `over` event with the result.
    fn events(
        self: Arc<Self>,
        from: usize,
        seat: bool,
    ) -> Sse<impl futures_util::Stream<Item = Result<Event, Infallible>>> {
        struct Feed {
            live: Arc<Live>,
            rx: tokio::sync::watch::Receiver<u64>,
            from: usize,
            /// The human seat's stream.
            seat: bool,
            asked: Option<u32>,
            done: bool,
            /// The last `control` sent: (waiting for the page's start, paused).
            control: Option<(bool, bool)>,
            /// Counted among the watchers until the stream is dropped (held for its `Drop`).
            _counted: Option<Watching>,
        }
        /// A watcher's count, given back when its stream ends.
        struct Watching(Arc<Live>);
        impl Drop for Watching {
            fn drop(&mut self) {
                let mut st = self.0.lock();
                st.watchers = st.watchers.saturating_sub(1);
            }
        }
        let rx = self.version.subscribe();
        let seat = seat && self.human.is_some();
        let counted = (!seat).then(|| {
            self.lock().watchers += 1;
            self.bump();
            Watching(Arc::clone(&self))
        });
        let feed = Feed { live: self, rx, from, seat, asked: None, done: false, control: None, _counted: counted };
        let stream = futures_util::stream::unfold(feed, |mut f| async move {
            if f.done {
                return None;
            }
            loop {
                f.rx.borrow_and_update();
                let event = {
                    let mut st = f.live.lock();
                    if f.seat {
                        if !f.live.hidden(&st) {
                            // The seat's page learns that the match is over; it then reads the
                            // whole match as any watcher does (a stream of turns, which tells it
                            // over: `told_over`).
                            f.done = true;
                            Some(Event::default().event("over").data(json!({"result": st.result}).to_string()))
                        } else {
                            match &st.asking {
                                Some((round, obs)) if f.asked != Some(*round) => {
                                    f.asked = Some(*round);
                                    Some(Event::default().event("ask").data(obs.clone()))
                                }
                                _ => None,
                            }
                        }
                    } else if f.control != Some((st.waiting == Some(Start::Page), st.paused)) && st.result.is_none() {
                        let c = (st.waiting == Some(Start::Page), st.paused);
                        f.control = Some(c);
                        Some(Event::default().event("control").data(json!({"waiting": c.0, "paused": c.1}).to_string()))
                    } else if f.live.hidden(&st) {
                        None
                    } else {
                        let from = f.from.min(st.turns.len());
                        let to = st.turns.len().min(from + TURNS_PER_EVENT);
                        let over = st.result.is_some() && to == st.turns.len();
                        if to > from || over {
                            f.from = to;
                            f.done = over;
                            st.told_over |= over;
                            let doc = Live::turns_doc(&st, from, to);
                            Some(Event::default().event("turns").id(to.to_string()).data(doc))
                        } else {
                            None
                        }
                    }
                };
                if let Some(e) = event {
                    return Some((Ok(e), f));
                }
                if f.rx.changed().await.is_err() {
                    return None;
                }
            }
        });
        Sse::new(stream).keep_alive(KeepAlive::default())
    }

    /// A round was resolved: its turn is shown; `end`, the match's result, with its last round.
    pub fn push_turn(&self, turn: Value, end: Option<Value>) {
        let text = turn.to_string();
        let mut st = self.lock();
        st.turns.push(text);
        if end.is_some() {
            st.end = end;
        }
        drop(st);
        self.bump();
    }

    /// The page for one viewer: `page` says whether it shows the start and pause controls and
    /// the layout it opens in (the arena's final: controls for organisers only, the projection).
    pub fn page(&self, page: LivePage) -> Response {
        self.page_in(page, None)
    }

    /// [`Live::page`] in `lang` (`None`: English), chosen per request (the arena's final: the
    /// viewer's language).
    pub fn page_in(&self, page: LivePage, lang: Option<&ViewerLang>) -> Response {
        html(viewer_page_in(&self.title, &PageMode::Live(LivePage { human: self.human, ..page }), lang))
    }

    /// The match is over: the result, where its replay is and the replay as the viewer's data
    /// (the page then shows exactly what the replay's page shows: commands of discards, kinds of
    /// violations).
    pub fn finish(&self, result: Value, replay: Option<String>, full: Option<Value>) {
        let mut st = self.lock();
        st.result = Some(result);
        st.replay = replay;
        st.full = full.map(|v| v.to_string());
        st.asking = None;
        drop(st);
        self.bump();
    }

    /// [`Live::finish`] with the replay's file, read when a page asks for the whole match.
    pub fn finish_from_file(&self, result: Value, replay: Option<std::path::PathBuf>) {
        let mut st = self.lock();
        st.result = Some(result);
        st.replay = replay.as_ref().map(|p| p.display().to_string());
        st.full_from = replay;
        st.asking = None;
        drop(st);
        self.bump();
    }

    /// Waits before the first round until `how` says go (or a stop): a projected final waits
    /// for the page's start, a script's for a page to watch.
    pub fn wait_for_start(&self, how: Start) {
        let mut st = self.lock();
        st.waiting = Some(how);
        drop(st);
        self.bump();
        let mut st = self.lock();
        loop {
            let go = match st.waiting {
                None => true,
                Some(Start::Watched) => st.watchers > 0,
                Some(Start::Page) => false,
            };
            if go || st.stop || crate::runner::interrupt::requested() {
                break;
            }
            st = self.changed.wait_timeout(st, crate::runner::interrupt::POLL).unwrap_or_else(|e| e.into_inner()).0;
        }
        st.waiting = None;
        drop(st);
        self.bump();
    }

    /// Waits while the page has paused the match (or until a stop).
    fn wait_while_paused(&self) {
        let mut st = self.lock();
        while st.paused && !st.stop && !crate::runner::interrupt::requested() {
            st = self.changed.wait_timeout(st, crate::runner::interrupt::POLL).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Ends the human seat's wait: the match is being stopped.
    pub fn stop(&self) {
        self.lock().stop = true;
        self.bump();
    }

    /// Whether a page has been told that the match is over.
    pub fn told_over(&self) -> bool {
        self.lock().told_over
    }

    /// The number of rounds resolved so far.
    pub fn rounds(&self) -> usize {
        self.lock().turns.len()
    }
}

/// A request's method, path and query.
pub fn parts(req: &Request) -> (Method, String, String) {
    (req.method().clone(), req.uri().path().to_string(), req.uri().query().unwrap_or("").to_string())
}

impl Served {
    /// Stops the server once a page has learnt that the match is over, or after `grace`.
    pub fn close(mut self, grace: Duration) {
        let start = Instant::now();
        while !self.live.told_over() && start.elapsed() < grace {
            std::thread::sleep(Duration::from_millis(50));
        }
        // Time for the page's last requests (the header and turns of the whole match).
        std::thread::sleep(Duration::from_millis(300).min(grace));
        self.live.stop();
        self.server.stop();
    }
}

/// Sends each resolved round to the page as its replay records it, at most `speed` rounds per
/// second.
#[derive(Debug)]
pub struct WatchObserver {
    live: Arc<Live>,
    turns: LiveTurns,
    speed: Option<f64>,
    last: Option<Instant>,
    /// Rounds before this one are sent at once, unpaced: a continued match's rounds played
    /// again from its replay (the page catches up to where it stopped).
    catch_up: u32,
}

impl WatchObserver {
    pub fn new(live: Arc<Live>, map: Arc<Map>, speed: Option<f64>) -> WatchObserver {
        WatchObserver { live, turns: LiveTurns::new(map), speed, last: None, catch_up: 0 }
    }

    /// Sends rounds before `round` at once (see [`MatchPlan::resume`]).
    ///
    /// [`MatchPlan::resume`]: crate::app::service::MatchPlan::resume
    pub fn catching_up_to(mut self, round: u32) -> WatchObserver {
        self.catch_up = round;
        self
    }
}

impl Observer for WatchObserver {
    fn wants_records(&self) -> bool {
        true
    }

    /// The round's turn as the replay's page has it: what each seat commanded, its discards' text,
    /// its violation's kind, its notes and drawings (within the replay's budget for notes).
    fn round_recorded(&mut self, m: &Match, report: &RoundReport, record: &RoundRecord<'_>) {
        // The last round carries the result, which the match alone decides (the replay's
        // result is made the same way when it is written).
        let end = || m.is_over().then(|| json!(crate::recorder::match_result(m, &self.live.names)));
        if report.round < self.catch_up {
            self.live.push_turn(self.turns.turn(report, record), end());
            return;
        }
        self.live.wait_while_paused();
        if let (Some(speed), Some(last)) = (self.speed, self.last) {
            let gap = Duration::from_secs_f64(1.0 / speed);
            let elapsed = last.elapsed();
            if elapsed < gap && !crate::runner::interrupt::requested() {
                std::thread::sleep(gap - elapsed);
            }
        }
        self.last = Some(Instant::now());
        self.live.push_turn(self.turns.turn(report, record), end());
    }
}

/// The human seat: its `decide` is the page. No time limit unless given one.
#[derive(Debug)]
pub struct HumanPlayer {
    live: Arc<Live>,
    name: String,
    limit: Option<Duration>,
    asked: Option<Instant>,
}

impl HumanPlayer {
    pub fn new(live: Arc<Live>, name: impl Into<String>, limit: Option<Duration>) -> HumanPlayer {
        HumanPlayer { live, name: name.into(), limit, asked: None }
    }
}

impl Player for HumanPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn begin(&mut self, obs: &Observation, grid: &Grid) {
        let mut st = self.live.lock();
        st.answer = None;
        st.asking = Some((obs.round, observation_json(obs, grid)));
        drop(st);
        self.asked = Some(Instant::now());
        self.live.bump();
    }

    fn finish(&mut self) -> PlayerAnswer {
        let mut st = self.live.lock();
        loop {
            if let Some(list) = st.answer.take() {
                return PlayerAnswer::Raw(list);
            }
            if crate::runner::interrupt::requested() || st.stop {
                st.asking = None;
                return PlayerAnswer::Interrupted;
            }
            if let (Some(limit), Some(asked)) = (self.limit, self.asked) {
                if asked.elapsed() >= limit {
                    st.asking = None;
                    return PlayerAnswer::Violation {
                        kind: ViolationKind::Timeout,
                        detail: format!("no answer from the page within {:.1} s", limit.as_secs_f64()),
                    };
                }
            }
            st = self.live.changed.wait_timeout(st, Duration::from_millis(100)).unwrap_or_else(|e| e.into_inner()).0;
        }
    }
}
