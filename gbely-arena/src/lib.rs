//! The competition server (`gbely arena`): the Gbely competition from sign-in to the live final,
//! on the tournament core and the stand's web stack.
//!
//! * [`config`]: the competition in one TOML file — phases in its time zone, the leaderboard's
//!   and the final's maps and opponents, the judge's and users' limits, mail.
//! * [`store`]: the data layer (sqlx over SQLite or PostgreSQL, with migrations) and the judges'
//!   job queue in the database.
//! * [`judge`]: a submission checked as `gbely check` checks it and played against the
//!   leaderboard's opponent in the sandbox; in the server and in `gbely arena worker` processes.
//! * [`mail`]: sign-in links and results by SMTP (lettre).
//! * [`i18n`]: the site's languages (Slovak, English): Project Fluent catalogues, the request's
//!   language, dates as each language writes them.
//! * [`pages`]: the site's HTML, maud templates that escape every value.
//! * [`similarity`]: the similarity review of the last uploads (code fingerprints, behaviour).
//! * [`export`]: the public results (the board, the final, every replay and their manifest) and
//!   how anyone checks them; [`api`]: the read-only JSON API.
//!
//! Identity is a verified e-mail address: a sign-in link (a random code, stored hashed, used
//! once, valid for minutes) is mailed; opening it and confirming sets a session cookie
//! (`HttpOnly`, `SameSite=Lax`, `Secure` behind https; stored hashed). Forms carry the session's
//! token, and a request that changes something is refused when the browser says it comes from
//! another site. Uploaded files are stored under names the server draws; a user's file name is
//! only ever shown, as text.

// First: its `tr!` is used by the modules after it.
#[macro_use]
pub mod i18n;
pub mod api;
pub mod audit;
pub mod config;
pub mod export;
pub mod judge;
pub mod mail;
pub mod pages;
pub mod remote;
pub mod similarity;
pub mod speed;
pub mod store;
pub mod workers;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Multipart, Path as UrlPath, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Form, Router};
use jiff::Timestamp;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use self::audit::Act;
use self::config::{normal_email_in, Config, Phase};
use self::i18n::Lang;
use self::judge::{unix_now, Judging};
use self::mail::Mailer;
use self::store::{Store, Submission};
use gbely_engine::app::inspect::AgentMeta;
use gbely_engine::app::runs::agent_spec::AgentSpec;
use gbely_engine::app::web::live::{parts, Live, Start, WatchObserver};
use gbely_engine::app::web::{random_token, same_secret, text, with_safe_headers, Server};
use gbely_engine::replays::viewer::LivePage;

/// The session cookie's name.
const COOKIE: &str = "gbely_arena";

/// Why the arena did not start.
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    #[error("the data folder {path}: {error}")]
    Data { path: String, error: std::io::Error },
    #[error("the database ({what}): {error}")]
    Database { what: String, error: sqlx::Error },
    #[error("mail: {0}")]
    Mail(String),
    #[error("cannot listen on {addr}: {error}")]
    Listen { addr: String, error: std::io::Error },
    #[error("{0}")]
    Other(String),
}

/// The competition's clock: the machine's, or (rehearsals and tests) the instant written in the
/// file `$GBELY_ARENA_CLOCK` names, read at every look.
#[derive(Clone, Debug)]
pub struct Clock {
    file: Option<PathBuf>,
}

impl Clock {
    pub fn from_env() -> Clock {
        Clock { file: std::env::var_os("GBELY_ARENA_CLOCK").map(PathBuf::from) }
    }

    /// Where the clock comes from, when not from the machine: a line for the server's start.
    pub fn source(&self) -> Option<String> {
        self.file.as_ref().map(|f| format!("the clock is read from $GBELY_ARENA_CLOCK ({})", f.display()))
    }

    pub fn now(&self) -> Timestamp {
        let Some(file) = &self.file else { return Timestamp::now() };
        match std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse::<Timestamp>().ok()) {
            Some(t) => t,
            None => {
                eprintln!(
                    "gbely arena: $GBELY_ARENA_CLOCK {}: no RFC 3339 instant in it; the machine's clock",
                    file.display()
                );
                Timestamp::now()
            }
        }
    }
}

/// The live final, while this process has it.
#[derive(Debug)]
struct Final {
    id: i64,
    live: Arc<Live>,
}

/// The leaderboard and the flash table as of the database's change counter ([`Store::version`]).
#[derive(Clone, Debug)]
struct Standings {
    version: i64,
    board: Arc<Vec<store::BoardRow>>,
    flash: Arc<Vec<(Submission, store::Outcome)>>,
}

/// The site's state, shared by the handlers.
#[derive(Debug)]
pub struct Arena {
    pub config: Arc<Config>,
    pub store: Store,
    mailer: Mailer,
    clock: Clock,
    python: String,
    version: tokio::sync::watch::Sender<i64>,
    /// The standings of the last change counter read: made again only when it moved.
    standings: tokio::sync::Mutex<Option<Standings>>,
    final_: Mutex<Option<Final>>,
    /// The final's map, made at its first use (the organisers' page shows the seating).
    final_map: std::sync::OnceLock<Result<Arc<gbely_world::Map>, String>>,
    /// The name of `final.fill`, read once.
    fill_name: std::sync::OnceLock<String>,
    closing: Arc<AtomicBool>,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    /// The authority (`host:port`) of `public_url`: requests for another are refused.
    authority: String,
    origin: String,
    secure: bool,
    /// The similarity review's profile of each last upload, by submission, with the result's
    /// judging time it was made for (a re-judging makes it again).
    profiles: Mutex<std::collections::HashMap<i64, (i64, Arc<similarity::Profile>)>>,
    /// The fingerprints of the configuration's `review_base`, read at their first use.
    review_base: std::sync::OnceLock<similarity::Fingerprints>,
    /// The last review, with the uploads it ranked.
    review: Mutex<Option<(ReviewKey, pages::Review)>>,
    /// The public results, as last made.
    export: export::Cache,
    /// What ends a job (its result kept, the participant e-mailed), also one judged over HTTP.
    judging: Judging,
    /// The judges' speed workload on this machine, measured at the start: the reference of the
    /// workers' figures.
    reference: Arc<std::sync::OnceLock<Result<speed::Speed, String>>>,
}

/// The uploads a similarity review ranked: (submission, its result's judging time or 0).
type ReviewKey = Vec<(i64, i64)>;

/// A signed-in user.
#[derive(Clone, Debug)]
pub struct User {
    pub email: String,
    pub csrf: String,
    pub organiser: bool,
    session: String,
}

fn hashed(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Opens what the site and its workers share: the configuration's data folder and database.
pub fn open(config: &Config, rt: &tokio::runtime::Runtime) -> Result<Store, ArenaError> {
    let data_error = |error| ArenaError::Data { path: config.data.display().to_string(), error };
    for sub in ["", "submissions", "judging", "finals"] {
        std::fs::create_dir_all(config.data.join(sub)).map_err(data_error)?;
    }
    let what = if config.database == "sqlite" {
        config.data.join("arena.sqlite").display().to_string()
    } else {
        // The URL without its password.
        redact(&config.database)
    };
    rt.block_on(Store::open(&config.database, &config.data)).map_err(|error| ArenaError::Database { what, error })
}

fn redact(url: &str) -> String {
    match url.split_once("://").and_then(|(scheme, rest)| Some((scheme, rest.rsplit_once('@')?))) {
        Some((scheme, (cred, host))) => format!("{scheme}://{}:…@{host}", cred.split(':').next().unwrap_or("")),
        None => url.to_string(),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, ArenaError> {
    gbely_engine::app::web::runtime("gbely-arena")
        .map_err(|e| ArenaError::Other(format!("cannot start the server's runtime: {e}")))
}

/// A running site.
#[derive(Debug)]
pub struct Running {
    pub url: String,
    pub arena: Arc<Arena>,
    server: Server,
}

impl Running {
    /// Stops the judges (their jobs go back to the queue), the database's connections and the
    /// server.
    pub fn close(mut self) {
        self.arena.closing.store(true, Ordering::Relaxed);
        if let Some(f) = self.arena.final_.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            f.live.stop();
        }
        let threads: Vec<_> = std::mem::take(&mut *self.arena.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
        self.server.handle().block_on(self.arena.store.close());
        self.server.stop();
    }
}

/// Starts the site: the server on `config.listen`, `judge.workers` judges beside it.
pub fn serve(config: Config, python: String, listen: SocketAddr) -> Result<Running, ArenaError> {
    let rt = runtime()?;
    let store = open(&config, &rt)?;
    let mailer = Mailer::new(&config.mail).map_err(ArenaError::Mail)?;
    let authority =
        config.public_url.split_once("://").map_or("", |(_, r)| r).split('/').next().unwrap_or("").to_string();
    let origin = config.public_url.split('/').take(3).collect::<Vec<_>>().join("/");
    let secure = config.public_url.starts_with("https://");
    let config = Arc::new(config);
    let closing = Arc::new(AtomicBool::new(false));
    let judging = Judging {
        config: Arc::clone(&config),
        store: store.clone(),
        mailer: mailer.clone(),
        rt: rt.handle().clone(),
        python: python.clone(),
        closing: Arc::clone(&closing),
        worker: String::new(),
        leaderboard_map: Arc::default(),
    };
    let arena = Arc::new(Arena {
        config: Arc::clone(&config),
        store: store.clone(),
        mailer: mailer.clone(),
        clock: Clock::from_env(),
        python: python.clone(),
        version: tokio::sync::watch::Sender::new(0),
        standings: tokio::sync::Mutex::new(None),
        final_: Mutex::new(None),
        final_map: std::sync::OnceLock::new(),
        fill_name: std::sync::OnceLock::new(),
        closing,
        threads: Mutex::new(Vec::new()),
        authority,
        origin,
        secure,
        profiles: Mutex::new(std::collections::HashMap::new()),
        review_base: std::sync::OnceLock::new(),
        review: Mutex::new(None),
        export: export::Cache::default(),
        judging: judging.clone(),
        reference: Arc::default(),
    });
    {
        // Measured beside the start (a few seconds at most), once.
        let (reference, python) = (Arc::clone(&arena.reference), python.clone());
        std::thread::Builder::new()
            .name("gbely-arena-speed".into())
            .spawn(move || {
                let _ = reference.set(speed::measure(&python));
            })
            .map_err(|e| ArenaError::Other(format!("cannot start the speed measurement: {e}")))?;
    }
    let listener = rt
        .block_on(tokio::net::TcpListener::bind(listen))
        .map_err(|error| ArenaError::Listen { addr: listen.to_string(), error })?;
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(listen.port());
    let judges = judging.spawn(config.judge.workers, "server").map_err(|e| ArenaError::Other(e.to_string()))?;
    arena.threads.lock().unwrap_or_else(|e| e.into_inner()).extend(judges);
    // Pages hear of every change, also those of workers in other processes: the database's
    // change counter, looked at three times a second.
    {
        let a = Arc::clone(&arena);
        rt.spawn(async move {
            while !a.closing.load(Ordering::Relaxed) {
                if let Ok(v) = a.store.version().await {
                    a.version.send_if_modified(|old| std::mem::replace(old, v) != v);
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        });
    }
    let app = routes(Arc::clone(&arena)).layer(axum::middleware::from_fn_with_state(Arc::clone(&arena), site_guard));
    let server = Server::serve_with(rt, listener, app, "".into(), config.limits.connection_limits())
        .map_err(|e| ArenaError::Other(e.to_string()))?;
    let url = format!("http://{}:{port}/", listen.ip());
    Ok(Running { url, arena, server })
}

/// Judges jobs of the shared queue until Ctrl-C (`gbely arena worker`): `jobs` at once.
pub fn work(config: Config, python: String, jobs: usize) -> Result<(), ArenaError> {
    let rt = runtime()?;
    let store = open(&config, &rt)?;
    let mailer = Mailer::new(&config.mail).map_err(ArenaError::Mail)?;
    let config = Arc::new(config);
    let closing = Arc::new(AtomicBool::new(false));
    let judging = Judging {
        config: Arc::clone(&config),
        store: store.clone(),
        mailer,
        rt: rt.handle().clone(),
        python,
        closing: Arc::clone(&closing),
        worker: String::new(),
        leaderboard_map: Arc::default(),
    };
    let threads = judging.spawn(jobs.max(1), "worker").map_err(|e| ArenaError::Other(e.to_string()))?;
    while !gbely_engine::runner::interrupt::requested() {
        std::thread::sleep(gbely_engine::runner::interrupt::POLL);
    }
    closing.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    rt.block_on(store.close());
    Ok(())
}

// — Requests —

/// Refuses requests for another host and cross-site requests that change something; adds the
/// safe headers.
async fn site_guard(State(a): State<Arc<Arena>>, mut req: Request, next: Next) -> Response {
    let lang = a.ui(req.method(), req.uri(), req.headers()).lang;
    if let Some(refused) = a.refusal(lang, req.method(), req.headers()) {
        return with_safe_headers(refused);
    }
    let requester = a.requester(&req);
    req.extensions_mut().insert(requester);
    let mut resp = next.run(req).await;
    // Links to other sites carry no address of ours; the site's own forms keep their `Origin`
    // (under `no-referrer` a browser sends `Origin: null`, which the check above refuses).
    resp.headers_mut().insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    with_safe_headers(resp)
}

impl Arena {
    fn refusal(&self, lang: Lang, method: &Method, headers: &HeaderMap) -> Option<Response> {
        let value = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_ascii_lowercase);
        if let Some(why) = gbely_engine::app::web::host_fields_refusal(headers) {
            return Some(text(StatusCode::BAD_REQUEST, why));
        }
        if value(header::HOST.as_str()).as_deref() != Some(self.authority.to_ascii_lowercase().as_str()) {
            let why = tr!(lang, "err-misdirected", url = self.config.public_url.as_str());
            return Some(text(StatusCode::MISDIRECTED_REQUEST, why));
        }
        if method != Method::GET && method != Method::HEAD {
            let cross_origin = value(header::ORIGIN.as_str()).is_some_and(|o| o != self.origin.to_ascii_lowercase());
            let cross_site = value("sec-fetch-site").is_some_and(|s| s != "same-origin" && s != "none");
            if cross_origin || cross_site {
                return Some(text(StatusCode::FORBIDDEN, tr!(lang, "err-cross-site")));
            }
        }
        None
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// Records an organiser's action in the audit log (a failure to is logged, and does not
    /// stop the action).
    async fn audit(&self, user: &User, act: Act) {
        if let Err(e) = self.store.audit(unix_now(), &user.email, &act).await {
            eprintln!("gbely arena: the audit log ({act:?} by {}): {e}", user.email);
        }
    }

    fn phase(&self) -> Phase {
        self.config.schedule.phase(self.now())
    }

    async fn user(&self, headers: &HeaderMap) -> Option<User> {
        let cookie = cookie_value(headers, COOKIE)?;
        let (email, csrf) = self.store.session(&hashed(&cookie), unix_now()).await.ok()??;
        let organiser = self.config.is_organiser(&email);
        Some(User { email, csrf, organiser, session: cookie })
    }

    fn cookie(&self, value: &str, max_age: i64) -> HeaderValue {
        let secure = if self.secure { "; Secure" } else { "" };
        HeaderValue::from_str(&format!("{COOKIE}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}"))
            .expect("a cookie of hex digits")
    }

    /// The leaderboard and the flash table, made once per change of the database (its change
    /// counter, bumped in the transaction of every change): while nothing changes, a read of
    /// the board costs one one-row query however many uploads there are. The counter is read
    /// before the rows, so the rows kept are never older than the counter they are kept under;
    /// one request makes them while the others wait for it.
    async fn standings(&self) -> Result<Standings, sqlx::Error> {
        let mut kept = self.standings.lock().await;
        let version = self.store.version().await?;
        if let Some(s) = kept.as_ref().filter(|s| s.version == version) {
            return Ok(s.clone());
        }
        let made = Standings {
            version,
            board: Arc::new(self.store.board().await?),
            flash: Arc::new(self.store.flash().await?),
        };
        *kept = Some(made.clone());
        Ok(made)
    }

    /// Where the competition's clock comes from when not from the machine, and what it says:
    /// the server says so at its start (a rehearsal's clock left set would move every phase).
    pub fn clock_note(&self) -> Option<String> {
        let source = self.clock.source()?;
        Some(format!(
            "{source}: it is {} for this server, and the phases follow it; unset it to run on the machine's clock",
            self.config.local(self.now())
        ))
    }

    fn page(&self, ui: &Ui, user: Option<&User>, title: &str, body: maud::Markup) -> Response {
        gbely_engine::app::web::html(pages::layout(self, ui, user, title, body))
    }

    /// A failure of the server's own (the database, the disk): logged in full, answered 500
    /// with what was being done and no internals.
    /// `doing` says what was being done in a language (the log's is English).
    fn internal(
        &self,
        ui: &Ui,
        user: Option<&User>,
        doing: impl Fn(Lang) -> String,
        error: &dyn std::fmt::Display,
    ) -> Response {
        eprintln!("gbely arena: {}: {error}", doing(Lang::En));
        let why = tr!(ui.lang, "err-internal", doing = doing(ui.lang));
        self.refuse(ui, user, StatusCode::INTERNAL_SERVER_ERROR, &why)
    }

    /// A refusal: what was refused and why, and a way back (to one's submission, or to sign in).
    fn refuse(&self, ui: &Ui, user: Option<&User>, status: StatusCode, why: &str) -> Response {
        self.refuse_with(ui, user, status, why, maud::html! {})
    }

    /// A refused upload: the reason, and the upload form again (while uploads are open).
    fn refuse_upload(&self, ui: &Ui, user: &User, status: StatusCode, why: &str) -> Response {
        self.refuse_with(ui, Some(user), status, why, pages::upload_form(self, ui.lang, user, self.phase()))
    }

    fn refuse_with(&self, ui: &Ui, user: Option<&User>, status: StatusCode, why: &str, form: maud::Markup) -> Response {
        let body = pages::refusal(ui.lang, user, status.as_u16(), why, form);
        let mut r = self.page(ui, user, &tr!(ui.lang, "refused-title"), body);
        *r.status_mut() = status;
        r
    }
}

type Shared = State<Arc<Arena>>;

/// What a page needs to know of its request: the language it is answered in, and where the
/// language switch comes back to.
#[derive(Clone, Debug)]
pub struct Ui {
    pub lang: Lang,
    path: String,
}

impl Ui {
    /// The page the language switch returns to: this one (a form's answer: the home page).
    pub fn back(&self) -> &str {
        &self.path
    }
}

impl axum::extract::FromRequestParts<Arc<Arena>> for Ui {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        a: &Arc<Arena>,
    ) -> Result<Ui, std::convert::Infallible> {
        Ok(a.ui(&parts.method, &parts.uri, &parts.headers))
    }
}

impl Arena {
    /// The request's language: the `lang` cookie (the switch), else the browser's
    /// `Accept-Language`, else the configuration's `language`.
    fn ui(&self, method: &Method, uri: &axum::http::Uri, headers: &HeaderMap) -> Ui {
        let chosen = cookie_value(headers, i18n::COOKIE).and_then(|c| Lang::parse(&c));
        let browser = || {
            let accept = headers.get(header::ACCEPT_LANGUAGE)?.to_str().ok()?;
            Lang::from_accept_language(accept)
        };
        let lang = chosen.or_else(browser).unwrap_or(self.config.language);
        let path = if method == Method::GET { uri.path().to_string() } else { "/".to_string() };
        Ui { lang, path }
    }

    /// Keeps the language a participant last used: their e-mails are written in it.
    async fn remember_language(&self, email: &str, lang: Lang) {
        if let Err(e) = self.store.set_language(email, lang.code()).await {
            eprintln!("gbely arena: the language of {email}: {e}");
        }
    }

    /// Whether the configuration names a rules file that is there.
    pub fn has_rules(&self) -> bool {
        self.config.rules.as_deref().is_some_and(std::path::Path::is_file)
    }
}

/// A cookie's value in the request's `Cookie` headers.
fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).find_map(|c| {
        c.split(';').find_map(|kv| kv.trim().strip_prefix(name).and_then(|r| r.strip_prefix('=')).map(str::to_string))
    })
}

/// A path of this site to send a browser back to: one `/` and no second one after it, no
/// backslash, no control character (`//host` and `/\\host` would be another site); anything
/// else is the home page.
fn same_site_path(back: &str) -> &str {
    let ours = back.starts_with('/') && !back.starts_with("//") && !back.chars().any(|c| c.is_control() || c == '\\');
    if ours {
        back
    } else {
        "/"
    }
}

#[derive(Deserialize)]
struct LanguageQuery {
    to: String,
    #[serde(default)]
    back: String,
}

/// The language switch: the `lang` cookie set (for a year), and back to the page it was on.
async fn switch_language(State(a): Shared, headers: HeaderMap, Query(q): Query<LanguageQuery>) -> Response {
    let mut r = redirect(same_site_path(&q.back));
    if let Some(lang) = Lang::parse(&q.to) {
        if let Some(user) = a.user(&headers).await {
            a.remember_language(&user.email, lang).await;
        }
        let secure = if a.secure { "; Secure" } else { "" };
        let cookie = format!("{}={}; Path=/; SameSite=Lax; Max-Age=31536000{secure}", i18n::COOKIE, lang.code());
        r.headers_mut().insert(header::SET_COOKIE, HeaderValue::from_str(&cookie).expect("a cookie of letters"));
    }
    r
}

/// The organisers' rules, from their Markdown file (`rules` in the configuration).
async fn rules(State(a): Shared, ui: Ui, headers: HeaderMap) -> Response {
    let user = a.user(&headers).await;
    let markdown = match &a.config.rules {
        Some(path) => tokio::fs::read_to_string(path).await.ok(),
        None => None,
    };
    let Some(markdown) = markdown else {
        return a.refuse(&ui, user.as_ref(), StatusCode::NOT_FOUND, &tr!(ui.lang, "rules-none"));
    };
    let body = pages::rules(ui.lang, &markdown_html(&markdown));
    a.page(&ui, user.as_ref(), &tr!(ui.lang, "rules-title"), body)
}

/// Markdown as HTML (pulldown-cmark, CommonMark with tables): raw HTML in it is shown as text,
/// and a link or image to a `javascript:` address goes nowhere.
fn markdown_html(markdown: &str) -> String {
    use pulldown_cmark::{CowStr, Event, Options, Parser, Tag};
    fn safe(url: CowStr<'_>) -> CowStr<'_> {
        if url.trim_start().to_ascii_lowercase().starts_with("javascript:") {
            CowStr::Borrowed("#")
        } else {
            url
        }
    }
    let events = Parser::new_ext(markdown, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(|e| match e {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Link { link_type, dest_url: safe(dest_url), title, id })
        }
        Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Image { link_type, dest_url: safe(dest_url), title, id })
        }
        e => e,
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

fn redirect(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, to.to_string())]).into_response()
}

fn routes(arena: Arc<Arena>) -> Router<()> {
    let upload_limit = arena.config.limits.upload_bytes as usize + 64 * 1024;
    Router::new()
        .route("/", get(home))
        .route("/signin", get(signin_form).post(signin_send))
        .route("/signin/{code}", get(signin_confirm).post(signin_done))
        .route("/signout", post(signout))
        .route("/me", get(me))
        .route("/me/{id}", get(status))
        .route("/me/{id}/log", get(own_log))
        .route("/upload", post(upload).layer(DefaultBodyLimit::max(upload_limit)))
        .route("/board", get(board))
        .route("/replay/{id}", get(replay))
        .route("/events", get(events))
        .route("/org", get(organiser))
        .route("/org/rejudge", post(rejudge))
        .route("/org/file/{id}", get(download))
        .route("/org/similar/{a}/{b}", get(compare))
        .route("/org/final", post(run_final))
        .route("/org/final/resume", post(resume_final))
        .route("/final", get(final_page))
        .route("/final/replay", get(final_replay))
        .route("/final/live", get(|| async { redirect("/final/live/") }))
        .route("/final/live/", any(final_live))
        .route("/final/live/{*rest}", any(final_live))
        .route("/export", get(export::page))
        .route("/export/{file}", get(export::file))
        .route("/org/export", post(export::open))
        .route("/api/board", get(api::board).fallback(api::read_only))
        .route("/api/me/submissions", get(api::submissions).fallback(api::read_only))
        .route("/api/me/submissions/{id}", get(api::submission).fallback(api::read_only))
        .route("/api/me/submissions/{id}/replay", get(api::replay).fallback(api::read_only))
        .route("/api/{*rest}", any(api::not_found))
        .route("/lang", get(switch_language))
        .route("/rules", get(rules))
        .route("/health", get(|| async { "ok" }))
        .route("/favicon.ico", get(|| async { ([(header::CONTENT_TYPE, "image/svg+xml")], pages::ICON) }))
        .merge(workers::routes())
        .with_state(arena)
}

#[derive(Deserialize)]
struct PartQuery {
    #[serde(default)]
    part: Option<String>,
}

async fn home(State(a): Shared, ui: Ui, headers: HeaderMap) -> Response {
    let user = a.user(&headers).await;
    let body = pages::home(&a, ui.lang, user.as_ref(), a.phase());
    a.page(&ui, user.as_ref(), &a.config.name, body)
}

async fn signin_form(State(a): Shared, ui: Ui, headers: HeaderMap) -> Response {
    let user = a.user(&headers).await;
    a.page(&ui, user.as_ref(), &tr!(ui.lang, "signin-title"), pages::signin_form(ui.lang, None))
}

#[derive(Deserialize)]
struct SigninForm {
    email: String,
}

/// Who sent a request: the network address the limits per requester count (set by
/// [`site_guard`] for every request).
#[derive(Clone, Debug)]
struct Requester(String);

impl Arena {
    fn requester(&self, req: &Request) -> Requester {
        let header = &self.config.limits.requester_header;
        let from_proxy = (!header.is_empty())
            .then(|| {
                req.headers()
                    .get_all(header.as_str())
                    .iter()
                    .next_back()?
                    .to_str()
                    .ok()?
                    .rsplit(',')
                    .next()
                    .map(str::trim)
            })
            .flatten()
            .filter(|a| !a.is_empty());
        let peer = req.extensions().get::<axum::extract::ConnectInfo<SocketAddr>>().map(|c| c.0.ip().to_string());
        Requester(from_proxy.map(str::to_string).or(peer).unwrap_or_else(|| "unknown".into()))
    }
}

async fn signin_send(
    State(a): Shared,
    ui: Ui,
    axum::Extension(requester): axum::Extension<Requester>,
    Form(f): Form<SigninForm>,
) -> Response {
    let email = match normal_email_in(&f.email, ui.lang) {
        Ok(e) => e,
        Err(why) => {
            let mut form = a.page(&ui, None, &tr!(ui.lang, "signin-title"), pages::signin_form(ui.lang, Some(&why)));
            *form.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
            return form;
        }
    };
    if a.phase() == Phase::BeforeRegistration {
        let why = tr!(ui.lang, "err-signin-closed", at = a.config.local_in(a.config.schedule.registration, ui.lang));
        return a.refuse(&ui, None, StatusCode::FORBIDDEN, &why);
    }
    let now = unix_now();
    let limits = &a.config.limits;
    let code = match random_token() {
        Ok(c) => c,
        Err(e) => return a.internal(&ui, None, |l| tr!(l, "doing-signin-code"), &e),
    };
    let minutes = limits.signin_minutes as i64;
    let code_hash = hashed(&code);
    let signin = store::NewSignin {
        code_hash: &code_hash,
        email: &email,
        requester: &requester.0,
        now,
        expires: now + minutes * 60,
    };
    let caps = store::SigninLimits {
        per_address: limits.signin_emails_per_hour.into(),
        per_requester: limits.signin_emails_per_hour_requester.into(),
        total_new: limits.signin_emails_per_hour_total.into(),
    };
    match a.store.add_signin_limited(&signin, &caps).await {
        Ok(Ok(())) => {}
        Ok(Err(refusal)) => {
            let why = match refusal {
                store::SigninRefusal::Address => tr!(ui.lang, "err-signins-address"),
                store::SigninRefusal::Requester => tr!(ui.lang, "err-signins-requester"),
                store::SigninRefusal::Site => tr!(ui.lang, "err-signins-site"),
            };
            return a.refuse(&ui, None, StatusCode::TOO_MANY_REQUESTS, &why);
        }
        Err(e) => return a.internal(&ui, None, |l| tr!(l, "doing-signin-record"), &e),
    }
    let link = format!("{}/signin/{code}", a.config.public_url);
    // In the language the sign-in was asked in.
    let name = a.config.name.as_str();
    let body = tr!(ui.lang, "mail-signin-body", name = name, email = email.as_str(), minutes = minutes, link = link);
    let subject = tr!(ui.lang, "mail-signin-subject", name = name);
    let (mailer, to) = (a.mailer.clone(), email.clone());
    let sent = tokio::task::spawn_blocking(move || mailer.send(&to, &subject, &body)).await;
    match sent {
        Ok(Ok(())) => a.page(&ui, None, &tr!(ui.lang, "signin-title"), pages::signin_sent(ui.lang, &email)),
        Ok(Err(e)) => {
            eprintln!("gbely arena: the sign-in e-mail to {email}: {e}");
            a.refuse(&ui, None, StatusCode::BAD_GATEWAY, &tr!(ui.lang, "err-mail"))
        }
        Err(e) => a.internal(&ui, None, |l| tr!(l, "doing-mail"), &e),
    }
}

fn plausible_code(code: &str) -> bool {
    code.len() == 32 && code.bytes().all(|b| b.is_ascii_hexdigit())
}

async fn signin_confirm(State(a): Shared, ui: Ui, UrlPath(code): UrlPath<String>) -> Response {
    // Opening the link signs nobody in (mail scanners open links): a button does.
    let email =
        if plausible_code(&code) { a.store.peek_signin(&hashed(&code), unix_now()).await.ok().flatten() } else { None };
    match email {
        Some(email) => a.page(&ui, None, &tr!(ui.lang, "signin-title"), pages::signin_confirm(ui.lang, &code, &email)),
        None => a.refuse(&ui, None, StatusCode::NOT_FOUND, &tr!(ui.lang, "err-link")),
    }
}

async fn signin_done(State(a): Shared, ui: Ui, UrlPath(code): UrlPath<String>) -> Response {
    let now = unix_now();
    let email =
        if plausible_code(&code) { a.store.take_signin(&hashed(&code), now).await.ok().flatten() } else { None };
    let Some(email) = email else {
        return a.refuse(&ui, None, StatusCode::NOT_FOUND, &tr!(ui.lang, "err-link"));
    };
    let (Ok(session), Ok(csrf)) = (random_token(), random_token()) else {
        return a.refuse(&ui, None, StatusCode::INTERNAL_SERVER_ERROR, &tr!(ui.lang, "err-randomness"));
    };
    let age = a.config.limits.session_days as i64 * 86_400;
    if let Err(e) = a.store.add_session(&hashed(&session), &email, &csrf, now, now + age).await {
        return a.internal(&ui, None, |l| tr!(l, "doing-session"), &e);
    }
    a.remember_language(&email, ui.lang).await;
    let mut r = redirect(if a.config.is_organiser(&email) { "/org" } else { "/me" });
    r.headers_mut().insert(header::SET_COOKIE, a.cookie(&session, age));
    r
}

#[derive(Deserialize)]
struct CsrfForm {
    csrf: String,
}

impl WithCsrf for CsrfForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

fn csrf_ok(user: &User, given: &str) -> bool {
    same_secret(&user.csrf, given)
}

async fn signout(State(a): Shared, headers: HeaderMap, Form(f): Form<CsrfForm>) -> Response {
    if let Some(user) = a.user(&headers).await {
        if csrf_ok(&user, &f.csrf) {
            let _ = a.store.end_session(&hashed(&user.session)).await;
        }
    }
    let mut r = redirect("/");
    r.headers_mut().insert(header::SET_COOKIE, a.cookie("", 0));
    r
}

async fn me(State(a): Shared, ui: Ui, headers: HeaderMap, Query(q): Query<PartQuery>) -> Response {
    let Some(user) = a.user(&headers).await else { return redirect("/signin") };
    let subs = a.store.submissions_of(&user.email).await.unwrap_or_default();
    let current = match subs.first() {
        Some(s) => Some((s.clone(), a.store.outcome(s.id).await.ok().flatten())),
        None => None,
    };
    let (head, inner) = pages::me(&a, ui.lang, &user, a.phase(), current.as_ref(), &subs);
    if q.part.is_some() {
        return gbely_engine::app::web::html(inner.into_string());
    }
    a.page(&ui, Some(&user), &tr!(ui.lang, "me-title"), maud::html! { (head) (pages::live("/me?part=1", inner)) })
}

/// A submission of the signed-in user (`None`: not theirs, or none).
async fn own(a: &Arena, user: &User, id: i64) -> Option<Submission> {
    a.store.submission(id).await.ok().flatten().filter(|s| s.email == user.email)
}

async fn status(
    State(a): Shared,
    ui: Ui,
    headers: HeaderMap,
    UrlPath(id): UrlPath<i64>,
    Query(q): Query<PartQuery>,
) -> Response {
    let Some(user) = a.user(&headers).await else { return redirect("/signin") };
    let Some(sub) = own(&a, &user, id).await else {
        return a.refuse(&ui, Some(&user), StatusCode::NOT_FOUND, &tr!(ui.lang, "err-not-yours"));
    };
    let outcome = a.store.outcome(id).await.ok().flatten();
    let body = pages::status(&a, ui.lang, &sub, outcome.as_ref());
    if q.part.is_some() {
        return gbely_engine::app::web::html(body.into_string());
    }
    a.page(&ui, Some(&user), &tr!(ui.lang, "title-submission", id = id), pages::live(&format!("/me/{id}?part=1"), body))
}

async fn own_log(State(a): Shared, ui: Ui, headers: HeaderMap, UrlPath(id): UrlPath<i64>) -> Response {
    let Some(user) = a.user(&headers).await else { return redirect("/signin") };
    let Some(sub) = own(&a, &user, id).await else {
        return a.refuse(&ui, Some(&user), StatusCode::NOT_FOUND, &tr!(ui.lang, "err-not-yours"));
    };
    // The judged match's log, else a failed check's (its agent's log in the test match).
    let check_log = || serde_json::from_str::<serde_json::Value>(&sub.check).ok()?["log"].as_str().map(str::to_string);
    let log = a.store.outcome(sub.id).await.ok().flatten().map(|o| o.log).filter(|l| !l.is_empty()).or_else(check_log);
    let Some(log) = log else { return text(StatusCode::NOT_FOUND, tr!(ui.lang, "err-no-log")) };
    match tokio::fs::read(a.config.data.join(log)).await {
        Ok(bytes) => text(StatusCode::OK, String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) => text(StatusCode::NOT_FOUND, tr!(ui.lang, "err-log", error = e.to_string())),
    }
}

/// Why the upload phase refuses an upload at `now`, if it does.
fn upload_closed(a: &Arena, l: Lang, now: Timestamp) -> Option<String> {
    let s = &a.config.schedule;
    match s.phase(now) {
        Phase::Testing => None,
        Phase::BeforeRegistration | Phase::Registration => {
            Some(tr!(l, "err-uploads-open", at = a.config.local_in(s.testing, l)))
        }
        Phase::Closed | Phase::Final => Some(tr!(l, "err-deadline-passed", at = a.config.local_in(s.deadline, l))),
    }
}

/// The upload form's fields: its token and its file (name, bytes), read within `limit` bytes.
async fn upload_fields(
    form: &mut Multipart,
    limit: usize,
    l: Lang,
) -> Result<(Option<String>, Option<(String, Vec<u8>)>), (StatusCode, String)> {
    let mut csrf = None;
    let mut file: Option<(String, Vec<u8>)> = None;
    let bad = |e: axum::extract::multipart::MultipartError| {
        (StatusCode::BAD_REQUEST, tr!(l, "err-upload-broken", error = e.to_string()))
    };
    while let Some(mut field) = form.next_field().await.map_err(bad)? {
        match field.name() {
            Some("csrf") => csrf = field.text().await.ok(),
            Some("file") => {
                let name = field.file_name().unwrap_or("").to_string();
                let mut bytes = Vec::new();
                while let Some(c) = field.chunk().await.map_err(bad)? {
                    bytes.extend_from_slice(&c);
                    if bytes.len() > limit {
                        let why = tr!(l, "err-too-big", bytes = limit, kib = limit / 1024);
                        return Err((StatusCode::PAYLOAD_TOO_LARGE, why));
                    }
                }
                file = Some((name, bytes));
            }
            _ => {}
        }
    }
    Ok((csrf, file))
}

async fn upload(State(a): Shared, ui: Ui, headers: HeaderMap, mut form: Multipart) -> Response {
    let Some(user) = a.user(&headers).await else { return redirect("/signin") };
    // Refused at once when the phase is over; decided again once the body has arrived.
    if let Some(why) = upload_closed(&a, ui.lang, a.now()) {
        return a.refuse_upload(&ui, &user, StatusCode::FORBIDDEN, &why);
    }
    let limit = a.config.limits.upload_bytes as usize;
    let within = Duration::from_secs(a.config.limits.upload_seconds.into());
    let (csrf, file) = match tokio::time::timeout(within, upload_fields(&mut form, limit, ui.lang)).await {
        Ok(Ok(fields)) => fields,
        Ok(Err((status, why))) => return a.refuse_upload(&ui, &user, status, &why),
        Err(_) => {
            let why = tr!(ui.lang, "err-upload-slow", seconds = a.config.limits.upload_seconds);
            return a.refuse_upload(&ui, &user, StatusCode::REQUEST_TIMEOUT, &why);
        }
    };
    // The upload's instant: when its file has arrived whole, not when it began.
    let now = a.now();
    if let Some(why) = upload_closed(&a, ui.lang, now) {
        return a.refuse_upload(&ui, &user, StatusCode::FORBIDDEN, &why);
    }
    if !csrf.as_deref().is_some_and(|c| csrf_ok(&user, c)) {
        return a.refuse(&ui, Some(&user), StatusCode::FORBIDDEN, &tr!(ui.lang, "err-stale-upload"));
    }
    let Some((name, bytes)) = file else {
        return a.refuse_upload(&ui, &user, StatusCode::BAD_REQUEST, &tr!(ui.lang, "err-no-file"));
    };
    // Shown only, as text: the last component, printable, at most 100 characters.
    let shown: String =
        name.rsplit(['/', '\\']).next().unwrap_or("").chars().filter(|c| !c.is_control()).take(100).collect();
    if !shown.to_ascii_lowercase().ends_with(".py") {
        return a.refuse_upload(&ui, &user, StatusCode::BAD_REQUEST, &tr!(ui.lang, "err-not-python"));
    }
    if bytes.is_empty() {
        return a.refuse_upload(&ui, &user, StatusCode::BAD_REQUEST, &tr!(ui.lang, "err-empty"));
    }
    let per_hour = a.config.limits.uploads_per_hour;
    // A quick refusal before the file is written; the limit itself holds in `add_submission`.
    match a.store.uploads_since(&user.email, now.as_second() - 3600).await {
        Ok(n) if n >= per_hour as i64 => return too_many_uploads(&a, &ui, &user),
        Ok(_) => {}
        Err(e) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-count-uploads"), &e),
    }
    let Ok(token) = random_token() else {
        return a.refuse_upload(&ui, &user, StatusCode::INTERNAL_SERVER_ERROR, &tr!(ui.lang, "err-randomness"));
    };
    let stored = format!("{token}.py");
    let path = a.config.data.join("submissions").join(&stored);
    let size = bytes.len() as i64;
    let python = a.python.clone();
    let written = tokio::task::spawn_blocking(move || -> std::io::Result<AgentMeta> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&path)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        Ok(gbely_engine::app::inspect::file_meta(&path, &python).unwrap_or_default())
    })
    .await;
    let meta = match written {
        Ok(Ok(meta)) => meta,
        Ok(Err(e)) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-store-file"), &e),
        Err(e) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-store-file"), &e),
    };
    // A file without AGENT_NAME is named by its stem: the one the participant gave, not ours,
    // its bidi and invisible characters escaped as an AGENT_NAME's are.
    let agent_name = meta.display_name(shown.trim_end_matches(".py"));
    let version: String = meta
        .version
        .as_deref()
        .map(|v| gbely_engine::text::printable(v).chars().take(40).collect())
        .unwrap_or_default();
    let sub = Submission {
        id: 0,
        email: user.email.clone(),
        uploaded: now.as_second(),
        file_name: shown,
        bytes: size,
        version,
        agent_name: agent_name.chars().take(80).collect(),
        state: store::SubmissionState::Queued,
        reason: String::new(),
        check: String::new(),
        stored,
    };
    let stored_path = judge::submission_file(&a.config.data, &sub);
    let added = a.store.add_submission(&sub, per_hour as i64).await;
    if !matches!(added, Ok(Some(_))) {
        // Not recorded: its file goes too.
        let _ = tokio::fs::remove_file(&stored_path).await;
    }
    match added {
        Ok(Some(id)) => {
            a.remember_language(&user.email, ui.lang).await;
            redirect(&format!("/me/{id}"))
        }
        Ok(None) => too_many_uploads(&a, &ui, &user),
        Err(e) => a.internal(&ui, Some(&user), |l| tr!(l, "doing-record-upload"), &e),
    }
}

fn too_many_uploads(a: &Arena, ui: &Ui, user: &User) -> Response {
    let why = tr!(ui.lang, "err-too-many-uploads", limit = a.config.limits.uploads_per_hour);
    a.refuse_upload(ui, user, StatusCode::TOO_MANY_REQUESTS, &why)
}

async fn board(State(a): Shared, ui: Ui, headers: HeaderMap, Query(q): Query<PartQuery>) -> Response {
    let standings = match a.standings().await {
        Ok(s) => s,
        Err(e) => return a.internal(&ui, a.user(&headers).await.as_ref(), |l| tr!(l, "doing-board"), &e),
    };
    let body = pages::board(&a, ui.lang, &standings.board, &standings.flash);
    if q.part.is_some() {
        return gbely_engine::app::web::html(body.into_string());
    }
    let user = a.user(&headers).await;
    a.page(&ui, user.as_ref(), &tr!(ui.lang, "board-title"), pages::live("/board?part=1", body))
}

/// A replay in the viewer: public for what the leaderboard and the flash table show, else its
/// owner's and the organisers'.
async fn replay(State(a): Shared, ui: Ui, headers: HeaderMap, UrlPath(id): UrlPath<i64>) -> Response {
    let user = a.user(&headers).await;
    let Ok(Some(sub)) = a.store.submission(id).await else {
        return text(StatusCode::NOT_FOUND, tr!(ui.lang, "err-no-such-submission"));
    };
    // The board is computed only for others than the owner and the organisers.
    let allowed = user.as_ref().is_some_and(|u| u.email == sub.email || u.organiser)
        || a.standings()
            .await
            .is_ok_and(|s| s.board.iter().any(|r| r.submission.id == id) || s.flash.iter().any(|(s, _)| s.id == id));
    let outcome = a.store.outcome(id).await.ok().flatten().filter(|o| !o.replay.is_empty());
    match (allowed, outcome) {
        (true, Some(o)) => viewer(ui.lang, a.config.data.join(o.replay)).await,
        (true, None) => text(StatusCode::NOT_FOUND, tr!(ui.lang, "err-no-replay")),
        (false, _) => text(StatusCode::FORBIDDEN, tr!(ui.lang, "err-replay-private")),
    }
}

async fn viewer(l: Lang, path: PathBuf) -> Response {
    match gbely_engine::app::web::replay_page_in(path, i18n::viewer_lang(l)).await {
        Ok(page) => gbely_engine::app::web::html(page),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, tr!(l, "err-replay", error = e.to_string())),
    }
}

/// `changed` at every change of what the pages show.
async fn events(State(a): Shared) -> Sse<impl futures_util::Stream<Item = Result<Event, std::convert::Infallible>>> {
    let rx = a.version.subscribe();
    let stream = futures_util::stream::unfold((rx, true), |(mut rx, first)| async move {
        if !first {
            rx.changed().await.ok()?;
        }
        let v = *rx.borrow_and_update();
        Some((Ok(Event::default().event("changed").data(v.to_string())), (rx, false)))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

async fn organiser_of(a: &Arena, ui: &Ui, headers: &HeaderMap) -> Result<User, Response> {
    match a.user(headers).await {
        Some(u) if u.organiser => Ok(u),
        Some(u) => Err(a.refuse(ui, Some(&u), StatusCode::FORBIDDEN, &tr!(ui.lang, "err-not-organiser"))),
        None => Err(redirect("/signin")),
    }
}

/// An organiser signed in, as a handler's argument: anyone else is answered as
/// [`organiser_of`] answers (sent to sign in, or refused).
struct Organiser(User);

impl axum::extract::FromRequestParts<Arc<Arena>> for Organiser {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, a: &Arc<Arena>) -> Result<Organiser, Response> {
        let ui = a.ui(&parts.method, &parts.uri, &parts.headers);
        organiser_of(a, &ui, &parts.headers).await.map(Organiser)
    }
}

/// A form that carries the page's CSRF token.
trait WithCsrf {
    fn csrf(&self) -> &str;
}

/// A form an organiser posted, as a handler's argument: who (checked before its body is read)
/// and the form, its CSRF token checked (a stale page is refused).
struct OrganiserForm<T>(User, T);

impl<T: serde::de::DeserializeOwned + WithCsrf + Send> axum::extract::FromRequest<Arc<Arena>> for OrganiserForm<T> {
    type Rejection = Response;

    async fn from_request(req: Request, a: &Arc<Arena>) -> Result<OrganiserForm<T>, Response> {
        let (parts, body) = req.into_parts();
        let ui = a.ui(&parts.method, &parts.uri, &parts.headers);
        let user = organiser_of(a, &ui, &parts.headers).await?;
        let Form(form) = Form::<T>::from_request(Request::from_parts(parts, body), a).await.map_err(|e| {
            // A form its page would not send (a field missing, or not what it is): a page.
            let why = tr!(ui.lang, "err-form", error = e.body_text());
            a.refuse(&ui, Some(&user), StatusCode::BAD_REQUEST, &why)
        })?;
        if !csrf_ok(&user, form.csrf()) {
            return Err(a.refuse(&ui, Some(&user), StatusCode::FORBIDDEN, &tr!(ui.lang, "err-stale")));
        }
        Ok(OrganiserForm(user, form))
    }
}

async fn organiser(State(a): Shared, ui: Ui, Organiser(user): Organiser, Query(q): Query<PartQuery>) -> Response {
    let board = a.store.board().await.unwrap_or_default();
    let seating = {
        let (a, board) = (Arc::clone(&a), board.clone());
        tokio::task::spawn_blocking(move || a.seating(&board)).await.unwrap_or_else(|e| Err(e.to_string()))
    };
    let here = a.final_.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|f| f.id);
    let fin = a.store.last_final().await.ok().flatten();
    let final_here = fin.as_ref().is_some_and(|f| here == Some(f.id));
    let subs = a.store.all_submissions().await.unwrap_or_default();
    let outcomes = a.store.all_outcomes().await.unwrap_or_default();
    let review = {
        let (a, current) = (Arc::clone(&a), last_uploads(&subs, &outcomes));
        tokio::task::spawn_blocking(move || a.review(current)).await.unwrap_or_default()
    };
    let view = pages::OrgView {
        subs,
        outcomes,
        review,
        board,
        jobs: a.store.job_counts().await.unwrap_or_default(),
        pending: a.store.pending_jobs().await.unwrap_or_default(),
        seating,
        fin,
        final_here,
        audit: a.store.audit_log(200).await.unwrap_or_default(),
    };
    let body = maud::html! {
        (pages::organiser(&a, ui.lang, &user, a.phase(), &view))
        (workers::org_section(&a, ui.lang, &user).await)
        (export::org_section(&a, ui.lang, &user).await)
    };
    if q.part.is_some() {
        return gbely_engine::app::web::html(body.into_string());
    }
    a.page(&ui, Some(&user), &tr!(ui.lang, "org-title"), pages::live("/org?part=1", body))
}

#[derive(Deserialize)]
struct RejudgeForm {
    csrf: String,
    /// A submission's number, or `all`.
    what: String,
}

impl WithCsrf for RejudgeForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

async fn rejudge(State(a): Shared, ui: Ui, OrganiserForm(user, f): OrganiserForm<RejudgeForm>) -> Response {
    let ids: Option<Vec<i64>> = match f.what.trim() {
        "all" => None,
        n => match n.parse::<i64>() {
            Ok(id) => match a.store.submission(id).await {
                Ok(Some(_)) => Some(vec![id]),
                Ok(None) => {
                    return a.refuse(
                        &ui,
                        Some(&user),
                        StatusCode::NOT_FOUND,
                        &tr!(ui.lang, "err-no-submission", id = id),
                    )
                }
                Err(e) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-find-submission"), &e),
            },
            Err(_) => return a.refuse(&ui, Some(&user), StatusCode::BAD_REQUEST, &tr!(ui.lang, "err-rejudge-what")),
        },
    };
    match a.store.rejudge(ids.as_deref(), unix_now()).await {
        Ok(n) => {
            a.audit(&user, Act::Rejudge { submission: ids.map(|i| i[0]), count: n as u64 }).await;
            redirect("/org")
        }
        Err(e) => a.internal(&ui, Some(&user), |l| tr!(l, "doing-queue-rejudge"), &e),
    }
}

async fn download(State(a): Shared, ui: Ui, Organiser(user): Organiser, UrlPath(id): UrlPath<i64>) -> Response {
    let Ok(Some(sub)) = a.store.submission(id).await else {
        return text(StatusCode::NOT_FOUND, tr!(ui.lang, "err-no-such-submission"));
    };
    match tokio::fs::read(judge::submission_file(&a.config.data, &sub)).await {
        Ok(bytes) => {
            a.audit(&user, Act::Download { submission: id, email: sub.email.clone() }).await;
            // The name the server gives the download: the number and the address, no user text.
            let name = format!("submission-{id}-{}.py", sub.email.replace(['@', '.'], "_"));
            (
                StatusCode::OK,
                [
                    (header::CONTENT_TYPE, "text/x-python; charset=utf-8".to_string()),
                    (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
                ],
                bytes,
            )
                .into_response()
        }
        Err(e) => text(StatusCode::NOT_FOUND, tr!(ui.lang, "err-file", error = e.to_string())),
    }
}

/// Each participant's last upload with its result, if any (`subs` newest first).
fn last_uploads(subs: &[Submission], outcomes: &[store::Outcome]) -> Vec<(Submission, Option<store::Outcome>)> {
    let mut seen = std::collections::HashSet::new();
    subs.iter()
        .filter(|s| seen.insert(s.email.as_str()))
        .map(|s| (s.clone(), outcomes.iter().find(|o| o.submission == s.id).cloned()))
        .collect()
}

/// How many pairs each of the review's rankings shows.
const REVIEW_PAIRS: usize = 20;

impl Arena {
    /// An upload's profile for the similarity review: its file's fingerprints and, once judged,
    /// its play in the judged match's replay (seat 0). Made once per upload and result (reading
    /// the replay re-simulates it). A file or replay that cannot be read profiles as empty (it
    /// is then like nothing), and says why on the server's output.
    fn profile(&self, sub: &Submission, outcome: Option<&store::Outcome>) -> Arc<similarity::Profile> {
        let judged = outcome.map_or(0, |o| o.judged);
        let cached = self.profiles.lock().unwrap_or_else(|e| e.into_inner()).get(&sub.id).cloned();
        if let Some((_, p)) = cached.filter(|(at, _)| *at == judged) {
            return p;
        }
        let code = match std::fs::read(judge::submission_file(&self.config.data, sub)) {
            Ok(bytes) => similarity::Fingerprints::of(&String::from_utf8_lossy(&bytes)).without(self.review_base()),
            Err(e) => {
                eprintln!("gbely arena: the similarity review: the file of submission {}: {e}", sub.id);
                similarity::Fingerprints::default()
            }
        };
        let behaviour = outcome.filter(|o| !o.replay.is_empty()).and_then(|o| {
            let read = gbely_engine::replays::read_replay(&self.config.data.join(&o.replay)).map_err(|e| e.to_string());
            match read.and_then(|r| similarity::Behaviour::of(&r, 0)) {
                Ok(b) => Some(b),
                Err(e) => {
                    eprintln!("gbely arena: the similarity review: the replay of submission {}: {e}", sub.id);
                    None
                }
            }
        });
        let p = Arc::new(similarity::Profile { code, behaviour });
        self.profiles.lock().unwrap_or_else(|e| e.into_inner()).insert(sub.id, (judged, Arc::clone(&p)));
        p
    }

    /// The fingerprints of `review_base` (read once; none without it, or when it cannot be read).
    fn review_base(&self) -> &similarity::Fingerprints {
        self.review_base.get_or_init(|| match &self.config.review_base {
            Some(path) => match std::fs::read(path) {
                Ok(bytes) => similarity::Fingerprints::of(&String::from_utf8_lossy(&bytes)),
                Err(e) => {
                    eprintln!("gbely arena: the similarity review's base file {}: {e}", path.display());
                    similarity::Fingerprints::default()
                }
            },
            None => similarity::Fingerprints::default(),
        })
    }

    /// The similarity review of the last uploads (blocking: files and replays are read), made
    /// again only when an upload or a result changed.
    fn review(&self, current: Vec<(Submission, Option<store::Outcome>)>) -> pages::Review {
        let key: ReviewKey = current.iter().map(|(s, o)| (s.id, o.as_ref().map_or(0, |o| o.judged))).collect();
        if let Some((k, r)) = self.review.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            if *k == key {
                return r.clone();
            }
        }
        let profiles: Vec<Arc<similarity::Profile>> =
            current.iter().map(|(s, o)| self.profile(s, o.as_ref())).collect();
        // An upload that is no longer anyone's last is not reviewed again: its profile goes.
        let last: std::collections::HashSet<i64> = key.iter().map(|(id, _)| *id).collect();
        self.profiles.lock().unwrap_or_else(|e| e.into_inner()).retain(|id, _| last.contains(id));
        let (by_code, by_behaviour) = similarity::ranked_pairs(&profiles, REVIEW_PAIRS);
        // The earlier upload first: one pair, one address of its side-by-side page.
        let row = |p: &similarity::Pair| {
            let (a, b) = (&current[p.a].0, &current[p.b].0);
            let (a, b) = if a.id < b.id { (a, b) } else { (b, a) };
            pages::ReviewRow { a: a.clone(), b: b.clone(), code: p.code, behaviour: p.behaviour }
        };
        let review = pages::Review {
            uploads: current.len(),
            by_code: by_code.iter().map(row).collect(),
            by_behaviour: by_behaviour.iter().map(row).collect(),
        };
        *self.review.lock().unwrap_or_else(|e| e.into_inner()) = Some((key, review.clone()));
        review
    }
}

/// Two uploads' files side by side, the lines they share marked (the organisers' review).
async fn compare(
    State(a): Shared,
    ui: Ui,
    Organiser(user): Organiser,
    UrlPath((x, y)): UrlPath<(i64, i64)>,
) -> Response {
    let mut both = Vec::new();
    for id in [x, y] {
        let sub = match a.store.submission(id).await {
            Ok(Some(s)) => s,
            Ok(None) => {
                return a.refuse(&ui, Some(&user), StatusCode::NOT_FOUND, &tr!(ui.lang, "err-no-submission", id = id))
            }
            Err(e) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-find-submission"), &e),
        };
        let outcome = a.store.outcome(id).await.ok().flatten();
        let text = match tokio::fs::read(judge::submission_file(&a.config.data, &sub)).await {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-read-file"), &e),
        };
        both.push((sub, outcome, text));
    }
    let profiles = {
        let a = Arc::clone(&a);
        let pair: Vec<(Submission, Option<store::Outcome>)> =
            both.iter().map(|(s, o, _)| (s.clone(), o.clone())).collect();
        tokio::task::spawn_blocking(move || pair.iter().map(|(s, o)| a.profile(s, o.as_ref())).collect::<Vec<_>>())
            .await
    };
    let Ok(profiles) = profiles else { return a.internal(&ui, Some(&user), |l| tr!(l, "doing-compare"), &"a panic") };
    let (pa, pb) = (&profiles[0], &profiles[1]);
    let behaviour = match (&pa.behaviour, &pb.behaviour) {
        (Some(x), Some(y)) => similarity::behaviour_similarity(x, y),
        _ => None,
    };
    let act = Act::Compare {
        first: x,
        first_email: both[0].0.email.clone(),
        second: y,
        second_email: both[1].0.email.clone(),
    };
    a.audit(&user, act).await;
    let side = |k: usize, other: usize| pages::Side {
        sub: &both[k].0,
        text: &both[k].2,
        shared: profiles[k].code.shared_lines(&profiles[other].code),
    };
    let body = pages::compare(
        &a,
        ui.lang,
        [side(0, 1), side(1, 0)],
        similarity::code_similarity(&pa.code, &pb.code),
        behaviour,
    );
    a.page(&ui, Some(&user), &tr!(ui.lang, "compare-title"), body)
}

/// Whether final `f` was cut off: stopped (`interrupted`), or still `running` in the database
/// while this process is not playing it (the server died during it).
pub(crate) fn cut_off(f: &store::FinalRecord, playing_here: bool) -> bool {
    f.state == store::FinalState::Interrupted || (f.state == store::FinalState::Running && !playing_here)
}

#[derive(Deserialize)]
struct FinalForm {
    csrf: String,
    /// `1`: run it again from its start although the last final was cut off.
    #[serde(default)]
    again: String,
}

impl WithCsrf for FinalForm {
    fn csrf(&self) -> &str {
        &self.csrf
    }
}

async fn run_final(State(a): Shared, ui: Ui, OrganiserForm(user, f): OrganiserForm<FinalForm>) -> Response {
    if matches!(a.phase(), Phase::BeforeRegistration | Phase::Registration | Phase::Testing) {
        let why = tr!(ui.lang, "err-final-early", deadline = a.config.local_in(a.config.schedule.deadline, ui.lang));
        return a.refuse(&ui, Some(&user), StatusCode::FORBIDDEN, &why);
    }
    // A final this process is playing is shown, not played again.
    let here = a.final_.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|f| f.id);
    if matches!(a.store.last_final().await, Ok(Some(ref f)) if f.state == store::FinalState::Running && here == Some(f.id))
    {
        return redirect("/final/live/");
    }
    // A final cut off by a crash is continued, not run again by mistake: running it again from
    // its start is asked for in words.
    let cut = match a.store.last_final().await {
        Ok(Some(f)) if cut_off(&f, here == Some(f.id)) => Some(f.id),
        Ok(_) => None,
        Err(e) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-read-final"), &e),
    };
    if let Some(id) = cut {
        if f.again != "1" {
            let why = tr!(ui.lang, "err-final-cut", run = id);
            return a.refuse(&ui, Some(&user), StatusCode::CONFLICT, &why);
        }
    }
    let board = match a.store.board().await {
        Ok(b) => b,
        Err(e) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-read-board"), &e),
    };
    let started = start_final(&a, &board).await;
    if let (Some(old), Ok(_)) = (cut, &started) {
        // Set aside: its replay stays in its folder, the results are the new final's.
        if let Err(e) = a.store.end_final(old, store::FinalState::Abandoned, "", "").await {
            eprintln!("gbely arena: setting aside final {old}: {e}");
        }
        a.audit(&user, Act::SetAsideFinal { run: old }).await;
    }
    match started {
        Ok(id) => {
            a.audit(&user, Act::RunFinal { run: id }).await;
            redirect("/final/live/")
        }
        Err(FinalRefusal::Pending(n)) => {
            let why = tr!(ui.lang, "err-final-pending", pending = n);
            a.refuse(&ui, Some(&user), StatusCode::CONFLICT, &why)
        }
        Err(FinalRefusal::Failed(e)) => a.internal(&ui, Some(&user), |l| tr!(l, "doing-start-final"), &e),
    }
}

/// One seat of the final (rules §9, docs/arena.md): who plays it and why.
#[derive(Clone, Debug)]
pub struct FinalSeat {
    pub seat: usize,
    /// The agent: a submission's file, or `final.fill`.
    pub spec: AgentSpec,
    pub name: String,
    /// The leaderboard's place and submission of the finalist; `None`: a fill.
    pub board: Option<(usize, Submission)>,
}

impl Arena {
    /// The final's map, made once.
    fn final_map(&self) -> Result<Arc<gbely_world::Map>, String> {
        self.final_map
            .get_or_init(|| {
                let fc = &self.config.final_;
                gbely_engine::app::runs::maps::load_final_map(&fc.map, fc.size)
                    .map(Arc::new)
                    .map_err(|e| format!("the final's map: {e}"))
            })
            .clone()
    }

    /// Who sits where in the final, seat by seat: the board's first N in the board's order
    /// (its ranks, then the earlier upload), then `final.fill`, each placed by the fixed
    /// permutation that the final map's fingerprint draws ([`final_seating`]): the `k`-th
    /// finalist sits where it sends entry `k`, whatever the agents.
    ///
    /// [`final_seating`]: gbely_engine::app::runs::final_match::final_seating
    pub fn seating(&self, board: &[store::BoardRow]) -> Result<Vec<FinalSeat>, String> {
        let map = self.final_map()?;
        let finalists = map.seats().len() - 1;
        let fc = &self.config.final_;
        let fill_name =
            self.fill_name.get_or_init(|| gbely_engine::app::inspect::display_name(&fc.fill, &self.python).0).clone();
        // (agent, name, board place and submission)
        type Entry = (AgentSpec, String, Option<(usize, Submission)>);
        let mut entries: Vec<Entry> = board
            .iter()
            .take(finalists)
            .map(|r| {
                let file = AgentSpec::File(judge::submission_file(&self.config.data, &r.submission));
                (file, r.submission.agent_name.clone(), Some((r.rank, r.submission.clone())))
            })
            .collect();
        while entries.len() < finalists {
            entries.push((fc.fill.clone(), fill_name.clone(), None));
        }
        let entry_of = gbely_engine::app::runs::final_match::final_seating(&map, &[]).map_err(|e| e.to_string())?;
        Ok((0..finalists)
            .map(|seat| {
                let (spec, name, board) = entries[entry_of[seat]].clone();
                FinalSeat { seat, spec, name, board }
            })
            .collect())
    }
}

/// The names the final shows: each finalist's own name without its `AGENT_VERSION` (on the
/// hall's screen a bare "1" after every name said nothing), the full name (`own` `None`: no
/// AGENT_NAME) where the file gives none, and the version kept where it alone tells two seats apart.
fn final_names(full: &[String], own: &[Option<String>]) -> Vec<String> {
    let short: Vec<String> = full
        .iter()
        .enumerate()
        .map(|(k, f)| {
            match own
                .get(k)
                .cloned()
                .flatten()
                .map(|n| gbely_engine::text::printable(&n).chars().take(80).collect::<String>())
            {
                Some(n) if f.starts_with(n.as_str()) => n,
                _ => f.clone(),
            }
        })
        .collect();
    (0..full.len())
        .map(|k| if short.iter().filter(|n| **n == short[k]).count() > 1 { full[k].clone() } else { short[k].clone() })
        .collect()
}

/// Why the final did not start.
#[derive(Debug)]
enum FinalRefusal {
    /// Jobs still pending.
    Pending(i64),
    Failed(String),
}

/// A final's seats as the database keeps them, so that a final cut off by a crash is continued
/// with the same: each seat's agent and name (the Council's last) and the finalists' board
/// places (exact ties in the final go to the better one).
#[derive(Clone, Debug, serde::Serialize, Deserialize)]
struct FinalSeats {
    specs: Vec<AgentSpec>,
    names: Vec<String>,
    places: Vec<usize>,
}

/// Seats the top eight (filled up by `final.fill`) on the final map, the final opponent in the
/// Council's seat, and plays it in a thread once the projection page starts it; refused while
/// any upload or re-judging is still pending.
async fn start_final(a: &Arc<Arena>, board: &[store::BoardRow]) -> Result<i64, FinalRefusal> {
    let fc = a.config.final_.clone();
    let seating = a.seating(board).map_err(FinalRefusal::Failed)?;
    let mut specs: Vec<AgentSpec> = seating.iter().map(|s| s.spec.clone()).collect();
    // The finalists' own AGENT_NAMEs, read from their files (the board's names carry the version).
    let (files, py) = (specs.clone(), a.python.clone());
    let own = tokio::task::spawn_blocking(move || {
        (files.iter())
            .map(|f| f.file().and_then(|f| gbely_engine::app::inspect::file_meta(f, &py)).and_then(|m| m.name))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    let full: Vec<String> = seating.iter().map(|s| s.name.clone()).collect();
    let mut names = final_names(&full, &own);
    // An exact tie goes to the better leaderboard place (fills after every finalist).
    let places: Vec<usize> = seating.iter().map(|s| s.board.as_ref().map_or(usize::MAX - 1, |b| b.0)).collect();
    specs.push(fc.opponent.clone());
    names.push("council".into());
    gbely_engine::app::service::unique_names(&mut names);
    let seats = FinalSeats { specs, names, places };
    let stored = serde_json::to_string(&seats).map_err(|e| FinalRefusal::Failed(e.to_string()))?;
    let id = match a.store.start_final(unix_now(), &stored).await {
        Ok(Ok(id)) => id,
        Ok(Err(pending)) => return Err(FinalRefusal::Pending(pending)),
        Err(e) => return Err(FinalRefusal::Failed(e.to_string())),
    };
    launch_final(a, id, seats, None).map_err(FinalRefusal::Failed)?;
    Ok(id)
}

/// Plays final `id` in a thread of its own once the projection page starts it: from its start,
/// or continuing `resume` (the rounds a crash left of it).
fn launch_final(
    a: &Arc<Arena>,
    id: i64,
    seats: FinalSeats,
    resume: Option<Arc<gbely_world::Replay>>,
) -> Result<(), String> {
    let map = a.final_map()?;
    let live = Live::new(&map, &seats.names, None);
    *a.final_.lock().unwrap_or_else(|e| e.into_inner()) = Some(Final { id, live: Arc::clone(&live) });
    let arena = Arc::clone(a);
    let rt = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("gbely-final".into())
        .spawn(move || {
            let stop = Arc::clone(&arena.closing);
            gbely_engine::runner::interrupt::within(Some(stop), || {
                play_final(&arena, &rt, id, map, seats, resume, live)
            });
        })
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Continues the last final, cut off by a crash or a stop, from its last complete round: the
/// engine's state rebuilt from its replay, every finalist's agent started again (its memory
/// lost, no violation counted), the projection picking up where it stopped, one replay of the
/// whole final.
async fn resume_final(State(a): Shared, ui: Ui, OrganiserForm(user, _): OrganiserForm<CsrfForm>) -> Response {
    let here = a.final_.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|f| f.id);
    let fin = match a.store.last_final().await {
        Ok(Some(f)) if here == Some(f.id) => return redirect("/final/live/"),
        Ok(Some(f)) if cut_off(&f, false) => f,
        Ok(_) => return a.refuse(&ui, Some(&user), StatusCode::CONFLICT, &tr!(ui.lang, "err-no-cut-final")),
        Err(e) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-read-final"), &e),
    };
    let Ok(seats) = serde_json::from_str::<FinalSeats>(&fin.seating) else {
        let why = tr!(ui.lang, "err-no-seats");
        return a.refuse(&ui, Some(&user), StatusCode::CONFLICT, &why);
    };
    let dir = a.config.data.join("finals").join(fin.id.to_string());
    let source = match tokio::task::spawn_blocking(move || continued_replay(&dir)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-read-final-replay"), &e),
        Err(e) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-read-final-replay"), &e),
    };
    let rounds = source.as_ref().map_or(0, |r| r.turns.len());
    match a.store.resume_final(fin.id).await {
        Ok(true) => {}
        Ok(false) => return a.refuse(&ui, Some(&user), StatusCode::CONFLICT, &tr!(ui.lang, "err-final-not-cut")),
        Err(e) => return a.internal(&ui, Some(&user), |l| tr!(l, "doing-mark-final"), &e),
    }
    a.audit(&user, Act::ResumeFinal { run: fin.id, round: rounds as u64 }).await;
    match launch_final(&a, fin.id, seats, source.map(Arc::new)) {
        Ok(()) => redirect("/final/live/"),
        Err(e) => a.internal(&ui, Some(&user), |l| tr!(l, "doing-continue-final"), &e),
    }
}

/// The rounds a cut-off final left: of its replay files (`replay.json.gz`, and those of earlier
/// continuations, `replay-cut-K.json.gz`) the one holding the most rounds; the current file is
/// kept under the next free `replay-cut-K` name first, so that a crash during the continuation
/// loses nothing either. `None`: no round was played.
fn continued_replay(dir: &std::path::Path) -> Result<Option<gbely_world::Replay>, String> {
    let current = dir.join("replay.json.gz");
    let mut best: Option<gbely_world::Replay> = None;
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("replay") && n.ends_with(".json.gz"))
        })
        .collect();
    files.sort();
    for file in &files {
        match gbely_engine::replays::read_replay_or_cut(file) {
            Ok(r) if best.as_ref().is_none_or(|b| r.replay.turns.len() > b.turns.len()) => best = Some(r.replay),
            Ok(_) => {}
            // A file cut before its first round holds nothing to continue.
            Err(e) => eprintln!("gbely arena: continuing the final: {}: {e}", file.display()),
        }
    }
    if current.exists() {
        let kept =
            (1..).map(|k| dir.join(format!("replay-cut-{k}.json.gz"))).find(|p| !p.exists()).expect("a free name");
        std::fs::rename(&current, &kept).map_err(|e| format!("keeping {}: {e}", current.display()))?;
    }
    Ok(best.filter(|r| !r.turns.is_empty()))
}

fn play_final(
    a: &Arena,
    rt: &tokio::runtime::Handle,
    id: i64,
    map: Arc<gbely_world::Map>,
    seats: FinalSeats,
    resume: Option<Arc<gbely_world::Replay>>,
    live: Arc<Live>,
) {
    let FinalSeats { specs, names, places } = seats;
    let fc = &a.config.final_;
    live.wait_for_start(Start::Page);
    let dir = a.config.data.join("finals").join(id.to_string());
    let seats = specs.into_iter().zip(&names).map(|(s, n)| gbely_engine::app::service::Seat::spec(s, n)).collect();
    let mut plan = gbely_engine::app::service::MatchPlan::new(map.clone(), seats);
    let settings = a.config.judge.settings(fc.rounds);
    plan.rounds = settings.rounds;
    plan.limits = settings.limits();
    plan.python = a.python.clone();
    plan.run_dir = Some(dir.clone());
    plan.recording = gbely_engine::app::service::Recording::File(dir.join("replay.json.gz"));
    let caught_up = resume.as_ref().map_or(0, |r| r.turns.len() as u32);
    plan.resume = resume;
    let mut observer = WatchObserver::new(Arc::clone(&live), map.clone(), Some(fc.rate)).catching_up_to(caught_up);
    match gbely_engine::app::service::run(plan, &mut observer) {
        Ok(played) => {
            let result = played.result_json();
            let mut rows = gbely_engine::app::runs::final_match::final_table(&map, &played.record);
            gbely_engine::app::runs::final_match::order_ties_by(&mut rows, &places);
            let table: Vec<serde_json::Value> = rows
                .iter()
                .map(|r| serde_json::json!({"rank": r.rank, "name": r.name, "seat": r.seat, "share": r.share, "cells": r.cells, "tiebreak": r.tiebreak, "violations": r.violations, "disqualified": r.disqualified}))
                .collect();
            let doc = serde_json::json!({"table": table, "council_fell": played.record.council_fell, "rounds": played.record.rounds_played()});
            let replay = played
                .replay
                .as_deref()
                .and_then(|p| p.strip_prefix(&a.config.data).ok())
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            live.finish_from_file(result, played.replay.clone());
            let state =
                if played.record.interrupted() { store::FinalState::Interrupted } else { store::FinalState::Finished };
            let _ = rt.block_on(a.store.end_final(id, state, &doc.to_string(), &replay));
        }
        Err(e) => {
            live.finish(serde_json::json!({"error": e.to_string()}), None, None);
            let _ = rt.block_on(a.store.end_final(
                id,
                store::FinalState::Failed,
                &serde_json::json!({"error": e.to_string()}).to_string(),
                "",
            ));
        }
    }
}

async fn final_page(State(a): Shared, ui: Ui, headers: HeaderMap, Query(q): Query<PartQuery>) -> Response {
    let user = a.user(&headers).await;
    let fin = a.store.last_final().await.ok().flatten();
    let live = a.final_.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|f| f.id);
    let body = pages::final_results(&a, ui.lang, fin.as_ref(), live);
    if q.part.is_some() {
        return gbely_engine::app::web::html(body.into_string());
    }
    a.page(&ui, user.as_ref(), &tr!(ui.lang, "final-title"), pages::live("/final?part=1", body))
}

async fn final_replay(State(a): Shared, ui: Ui) -> Response {
    match a.store.last_final().await {
        Ok(Some(f)) if f.state == store::FinalState::Finished && !f.replay.is_empty() => {
            viewer(ui.lang, a.config.data.join(f.replay)).await
        }
        _ => text(StatusCode::NOT_FOUND, tr!(ui.lang, "err-final-not-played")),
    }
}

/// The final's live page and its calls: anyone watches; only an organiser starts or pauses it,
/// and only an organiser's page shows the controls. The page opens in the projection layout.
async fn final_live(State(a): Shared, req: Request) -> Response {
    let lang = a.ui(req.method(), req.uri(), req.headers()).lang;
    let (method, path, query) = parts(&req);
    let sub = path.strip_prefix("/final/live").unwrap_or("/").to_string();
    let sub = if sub.is_empty() { "/".to_string() } else { sub };
    let (page, changes) = (method == Method::GET && sub == "/", method != Method::GET && method != Method::HEAD);
    // Who is asking matters for the page (its controls) and for a start or a pause.
    let organiser = (page || changes) && matches!(a.user(req.headers()).await, Some(u) if u.organiser);
    if changes && !organiser {
        return text(StatusCode::FORBIDDEN, tr!(lang, "err-final-organiser"));
    }
    let live = a.final_.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|f| Arc::clone(&f.live));
    let Some(live) = live else { return text(StatusCode::NOT_FOUND, tr!(lang, "err-final-not-live")) };
    if page {
        let page = LivePage { human: None, controls: organiser, projection: true };
        return live.page_in(page, i18n::viewer_lang(lang).as_deref());
    }
    let body: Body = req.into_body();
    live.respond(method, &sub, &query, body).await
}

#[cfg(test)]
mod tests {
    use super::{final_names, markdown_html, same_site_path};

    #[test]
    fn the_language_switch_goes_back_only_to_a_path_of_this_site() {
        for ours in ["/", "/board", "/me/12", "/signin/0123abcd"] {
            assert_eq!(same_site_path(ours), ours);
        }
        for other in
            ["", "board", "//evil.example/", "/\\evil.example", "https://evil.example/", "/a\r\nSet-Cookie: x=1"]
        {
            assert_eq!(same_site_path(other), "/", "{other:?}");
        }
    }

    #[test]
    fn the_rules_markdown_shows_raw_html_as_text_and_no_script_link() {
        let html = markdown_html(
            "# Pravidlá\n\n**150** kôl <b>x</b>\n\n<script>alert(1)</script>\n\n[a](javascript:alert(1)) [b](/board)\n",
        );
        assert!(html.contains("<h1>Pravidlá</h1>") && html.contains("<strong>150</strong>"), "{html}");
        assert!(!html.contains("<script>") && html.contains("&lt;script&gt;") && html.contains("&lt;b&gt;"), "{html}");
        assert!(html.contains(r##"<a href="#">a</a>"##) && html.contains(r#"<a href="/board">b</a>"#), "{html}");
    }

    #[test]
    fn the_final_shows_names_without_a_version_unless_it_tells_two_seats_apart() {
        let full: Vec<String> = ["Ana 1", "Bob 1", "template", "Mravec 7", "Mravec 8"].map(String::from).to_vec();
        let own = [Some("Ana".into()), Some("Bob".into()), None, Some("Mravec".into()), Some("Mravec".into())];
        assert_eq!(final_names(&full, &own), ["Ana", "Bob", "template", "Mravec 7", "Mravec 8"]);
        // A name another seat has in full keeps its version too.
        let full: Vec<String> = ["x 1", "x"].map(String::from).to_vec();
        assert_eq!(final_names(&full, &[Some("x".into()), Some("x".into())]), ["x 1", "x"]);
    }
}
