//! A match in the browser while it is played (`--watch`), and the human seat.
//!
//! [`Live`] serves the viewer page and the match as it is played from a small HTTP server
//! (`tiny_http`, one thread, no async runtime). Only this machine's user should see or drive the
//! match, so the server
//!
//! * listens on 127.0.0.1 only;
//! * answers only requests carrying the random token of its address (`?t=…`: 128 bits from the
//!   OS), compared in constant time, so another user of the machine or a web page cannot guess it;
//! * answers only requests whose `Host` is `127.0.0.1:PORT` or `localhost:PORT`, so a web page
//!   cannot reach it through DNS rebinding (a name of its own that resolves to 127.0.0.1);
//! * sends the page with `no-referrer` and `no-store`, so the token does not leak in headers or
//!   caches.
//!
//! With a human seat, the page is that seat's agent: it reads the round's observation (`GET
//! api/observation`, exactly what an agent process gets on stdin) and sends the answer (`POST
//! api/answer`, what an agent prints), and the whole match is hidden from it until it is over.
//! docs/human.md documents the two calls.

use std::io::Read;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use gbely_rules::{Grid, Observation, Terrain, ViolationKind};
use gbely_world::Map;
use serde_json::{json, Value};

use crate::game::Observer;
use crate::replays::viewer::{viewer_header, viewer_page, LiveTurns, PageMode};
use crate::replays::{seat_colors, terrain_color};
use crate::runner::player::{Player, PlayerAnswer};
use crate::sim::{Match, RoundReport};
use crate::wire::{answer_from_value, observation_json};

/// The agent name that makes a seat the human's.
pub const HUMAN: &str = "human";

/// The largest answer body taken from the page.
const MAX_ANSWER_BYTES: u64 = 1 << 20;

/// What the server shares with the match.
#[derive(Debug, Default)]
struct State {
    turns: Vec<Value>,
    /// The result document once the match is over.
    result: Option<Value>,
    replay: Option<String>,
    /// The finished replay as the viewer's data (what `gbely replay view` embeds), when written.
    full: Option<String>,
    /// A page has been told that the match is over.
    told_over: bool,
    /// The human seat's observation waiting for an answer: (round, JSON).
    asking: Option<(u32, String)>,
    /// The human seat's answer to `asking`.
    answer: Option<Vec<Value>>,
    stop: bool,
}

/// The live server of one match.
#[derive(Debug)]
pub struct Live {
    state: Mutex<State>,
    changed: Condvar,
    token: String,
    port: u16,
    human: Option<u8>,
    page: String,
    header: String,
    info: String,
}

/// A running server: the address to open and the thread to join.
#[derive(Debug)]
pub struct Served {
    pub live: Arc<Live>,
    pub url: String,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// 128 random bits as hex, from the OS.
fn random_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Equality that takes as long whatever the first difference: the token is a secret.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Live {
    /// Starts the server on 127.0.0.1:`port` (0: any free port) for a match of `map` between
    /// `names`; `human` is the seat the page plays, if any.
    pub fn serve(map: &Arc<Map>, names: &[String], human: Option<u8>, port: u16) -> std::io::Result<Served> {
        let server = tiny_http::Server::http(("127.0.0.1", port)).map_err(std::io::Error::other)?;
        let port = server.server_addr().to_ip().map_or(port, |a| a.port());
        let token = random_token()?;
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
        let live = Arc::new(Live {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            token,
            port,
            human,
            page: viewer_page(&names.join(" vs "), &PageMode::Live { human }),
            header: viewer_header(map, names, mode).to_string(),
            info: info.to_string(),
        });
        let url = format!("http://127.0.0.1:{port}/?t={}", live.token);
        let l = live.clone();
        let thread = std::thread::Builder::new().name("gbely-watch".into()).spawn(move || l.run(server))?;
        Ok(Served { live, url, thread: Some(thread) })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn run(&self, server: tiny_http::Server) {
        loop {
            if self.lock().stop {
                return;
            }
            match server.recv_timeout(Duration::from_millis(50)) {
                Ok(Some(req)) => self.handle(req),
                Ok(None) => {}
                Err(_) => return,
            }
        }
    }

    fn handle(&self, mut req: tiny_http::Request) {
        let (status, kind, body) = self.answer(&mut req);
        let mut resp = tiny_http::Response::from_string(body).with_status_code(status);
        for (k, v) in [
            ("Content-Type", kind),
            ("Cache-Control", "no-store"),
            ("Referrer-Policy", "no-referrer"),
            ("X-Content-Type-Options", "nosniff"),
        ] {
            if let Ok(h) = tiny_http::Header::from_bytes(k, v) {
                resp.add_header(h);
            }
        }
        let _ = req.respond(resp);
    }

    /// Status, content type and body for a request.
    fn answer(&self, req: &mut tiny_http::Request) -> (u16, &'static str, String) {
        const TEXT: &str = "text/plain; charset=utf-8";
        const JSON: &str = "application/json";
        // The content type of the empty answer to `GET api/observation` once the match is over.
        const OVER: &str = "application/x-gbely-over";
        let host = req.headers().iter().find(|h| h.field.equiv("Host")).map(|h| h.value.as_str().to_ascii_lowercase());
        let allowed = [format!("127.0.0.1:{}", self.port), format!("localhost:{}", self.port)];
        if !host.is_some_and(|h| allowed.contains(&h)) {
            return (403, TEXT, "forbidden: this server answers only to 127.0.0.1".into());
        }
        let url = req.url().to_string();
        let (path, query) = url.split_once('?').unwrap_or((&url, ""));
        let param = |name: &str| {
            query.split('&').find_map(|kv| kv.split_once('=').filter(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
        };
        if !param("t").is_some_and(|t| same_secret(&t, &self.token)) {
            return (403, TEXT, "forbidden: the address lacks the match's token".into());
        }
        let hidden = |st: &State| self.human.is_some() && st.result.is_none();
        match (req.method(), path) {
            (tiny_http::Method::Get, "/") => (200, "text/html; charset=utf-8", self.page.clone()),
            (tiny_http::Method::Get, "/api/info") => (200, JSON, self.info.clone()),
            (tiny_http::Method::Get, "/api/header") => {
                if hidden(&self.lock()) {
                    return (403, TEXT, "the match is hidden from the human seat until it is over".into());
                }
                (200, JSON, self.header.clone())
            }
            (tiny_http::Method::Get, "/api/turns") => {
                let mut st = self.lock();
                if hidden(&st) {
                    return (403, TEXT, "the match is hidden from the human seat until it is over".into());
                }
                let from = param("from").and_then(|f| f.parse::<usize>().ok()).unwrap_or(0).min(st.turns.len());
                let over = st.result.is_some();
                st.told_over |= over;
                let doc = json!({"turns": &st.turns[from..], "over": over, "result": st.result, "replay": st.replay, "full": st.full.is_some()});
                (200, JSON, doc.to_string())
            }
            (tiny_http::Method::Get, "/api/data") => match &self.lock().full {
                Some(full) => (200, JSON, full.clone()),
                None => (404, TEXT, "the match is not over, or its replay was not written".into()),
            },
            (tiny_http::Method::Get, "/api/observation") => {
                let st = self.lock();
                match (self.human, &st.asking) {
                    (None, _) => (404, TEXT, "no seat of this match is played from the page".into()),
                    // 204 rather than an error status: browsers log every 4xx answer as an error.
                    _ if st.result.is_some() => (204, OVER, String::new()),
                    (Some(_), Some((_, obs))) => (200, JSON, obs.clone()),
                    (Some(_), None) => (204, TEXT, String::new()),
                }
            }
            (tiny_http::Method::Post, "/api/answer") => {
                if self.human.is_none() {
                    return (404, TEXT, "no seat of this match is played from the page".into());
                }
                let mut text = String::new();
                if req.as_reader().take(MAX_ANSWER_BYTES).read_to_string(&mut text).is_err() {
                    return (400, TEXT, "the answer is not UTF-8 text".into());
                }
                let list = match serde_json::from_str::<Value>(&text)
                    .map_err(|e| e.to_string())
                    .and_then(|v| answer_from_value(v).map_err(|e| e.to_string()))
                {
                    Ok(list) => list,
                    Err(e) => return (400, TEXT, format!("not an answer: {e} (send {{\"prikazy\": [...]}})")),
                };
                let mut st = self.lock();
                let Some(round) = st.asking.as_ref().map(|a| a.0) else {
                    return (409, TEXT, "no observation is waiting for an answer".into());
                };
                // `?round=N` makes sure an answer meant for one round is not taken for the next.
                if let Some(meant) = param("round") {
                    if meant != round.to_string() {
                        return (409, TEXT, format!("round {meant} is not the round waiting for an answer ({round})"));
                    }
                }
                st.asking = None;
                let n = list.len();
                st.answer = Some(list);
                self.changed.notify_all();
                (200, JSON, json!({"round": round, "commands": n}).to_string())
            }
            _ => (404, TEXT, "not found".into()),
        }
    }

    /// A round was resolved: its turn is shown.
    pub fn push_turn(&self, turn: Value) {
        self.lock().turns.push(turn);
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
        self.changed.notify_all();
    }

    fn told_over(&self) -> bool {
        self.lock().told_over
    }
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
        self.live.lock().stop = true;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sends each resolved round to the page, at most `speed` rounds per second.
#[derive(Debug)]
pub struct WatchObserver {
    live: Arc<Live>,
    turns: LiveTurns,
    speed: Option<f64>,
    last: Option<Instant>,
}

impl WatchObserver {
    pub fn new(live: Arc<Live>, map: Arc<Map>, speed: Option<f64>) -> WatchObserver {
        WatchObserver { live, turns: LiveTurns::new(map), speed, last: None }
    }
}

impl Observer for WatchObserver {
    fn round_done(&mut self, m: &Match, report: &RoundReport) {
        if let (Some(speed), Some(last)) = (self.speed, self.last) {
            let gap = Duration::from_secs_f64(1.0 / speed);
            let elapsed = last.elapsed();
            if elapsed < gap && !crate::runner::interrupt::requested() {
                std::thread::sleep(gap - elapsed);
            }
        }
        self.last = Some(Instant::now());
        self.live.push_turn(self.turns.turn(m, report));
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
        self.asked = Some(Instant::now());
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

#[cfg(test)]
mod tests {
    #[test]
    fn secrets_compare_whole() {
        assert!(super::same_secret("abc", "abc"));
        assert!(!super::same_secret("abc", "abd") && !super::same_secret("abc", "ab") && !super::same_secret("", "a"));
        let t = super::random_token().unwrap();
        assert_eq!(t.len(), 32);
        assert_ne!(t, super::random_token().unwrap());
    }
}
