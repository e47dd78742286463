//! The web stack of the pages gbely serves: the live page of one match (`--watch`, the human
//! seat: [`live`]) and the stand (`gbely stand`: [`crate::app::stand`]).
//!
//! axum on a small tokio runtime of its own, on a thread beside the matches (which stay plain
//! threads: the engine is not async). Every page is guarded the same way ([`guard`]), because only
//! this machine's user should see or drive what is served:
//!
//! * it listens on 127.0.0.1 only;
//! * it answers only requests carrying the server's random token (`?t=…` in the address, or the
//!   `X-Gbely-Token` header: 128 bits from the OS), compared in constant time, so another user of
//!   the machine or a web page cannot guess it;
//! * it answers only requests whose `Host` is `127.0.0.1:PORT` or `localhost:PORT`, so a web page
//!   cannot reach it through DNS rebinding (a name of its own that resolves to 127.0.0.1);
//! * a request that changes something (any method but GET and HEAD) is refused when the browser
//!   says it comes from another site (`Origin` of another address, `Sec-Fetch-Site` other than
//!   `same-origin` or `none`): a cross-site form cannot post to it even with a leaked address;
//! * a request with two `Host` fields is refused (`400`, RFC 9112 §3.2), so that no check reads
//!   one of them and something else the other;
//! * answers carry `no-referrer`, `no-store`, `nosniff` and may be framed by the server's own
//!   pages only, so the token does not leak in headers or caches; HTML pages carry a
//!   Content-Security-Policy ([`CSP`]);
//! * a handler's panic answers `500` with a plain page ([`Server::serve_with`]).
//!
//! Connections are served under limits ([`conn`]): headers in time, a connection at a
//! standstill closed, a cap on connections that keeps answering.
//!
//! Updates reach pages as server-sent events, pushed when they happen (no polling).

pub mod conn;
pub mod live;

use crate::replays::viewer::FileData;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;

/// The header that may carry the token instead of the address (`fetch` from the pages).
pub const TOKEN_HEADER: &str = "x-gbely-token";

/// 128 random bits as hex, from the OS.
pub fn random_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Equality that takes as long whatever the first difference: the token is a secret.
pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A plain-text answer.
pub fn text(status: StatusCode, body: impl Into<String>) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body.into()).into_response()
}

/// A JSON answer of a document already written.
pub fn json_text(body: String) -> Response {
    (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// An HTML page.
pub fn html(body: String) -> Response {
    (StatusCode::OK, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

/// The value of `name` in a query string (`a=1&b=2`), percent-decoded.
pub fn query_param(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == name).then(|| percent_decode(v))
    })
}

/// `%XX` and `+` of a query value decoded; bytes that are not UTF-8 are replaced.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit() => {
                let hex = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
                out.push(hex(b[i + 1]) << 4 | hex(b[i + 2]));
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What [`guard`] checks requests against.
#[derive(Clone, Debug)]
pub struct Guard {
    pub token: Arc<str>,
    pub port: u16,
}

impl Guard {
    fn hosts(&self) -> [String; 2] {
        [format!("127.0.0.1:{}", self.port), format!("localhost:{}", self.port)]
    }

    /// Why a request is refused, if it is: the status and the reason.
    fn refusal(&self, method: &Method, query: &str, headers: &HeaderMap) -> Option<(StatusCode, &'static str)> {
        let value = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok()).map(str::to_ascii_lowercase);
        if let Some(why) = host_fields_refusal(headers) {
            return Some((StatusCode::BAD_REQUEST, why));
        }
        let forbidden = |why| Some((StatusCode::FORBIDDEN, why));
        let hosts = self.hosts();
        if !value(header::HOST.as_str()).is_some_and(|h| hosts.contains(&h)) {
            return forbidden("forbidden: this server answers only to 127.0.0.1");
        }
        let token = headers
            .get(TOKEN_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .or_else(|| query_param(query, "t"));
        if !token.is_some_and(|t| same_secret(&t, &self.token)) {
            return forbidden("forbidden: the address lacks the server's token");
        }
        if method != Method::GET && method != Method::HEAD {
            if let Some(origin) = value(header::ORIGIN.as_str()) {
                if !hosts.iter().any(|h| origin == format!("http://{h}")) {
                    return forbidden("forbidden: a request from another site");
                }
            }
            if value("sec-fetch-site").is_some_and(|s| s != "same-origin" && s != "none") {
                return forbidden("forbidden: a request from another site");
            }
        }
        None
    }
}

/// The middleware of every page: refuses what [`Guard`] refuses and adds the safe headers.
pub async fn guard(State(g): State<Guard>, req: Request, next: Next) -> Response {
    let query = req.uri().query().unwrap_or("").to_string();
    if let Some((status, why)) = g.refusal(req.method(), &query, req.headers()) {
        return with_safe_headers(text(status, why));
    }
    with_safe_headers(next.run(req).await)
}

/// Why a request's `Host` fields refuse it: more than one (RFC 9112 §3.2: "a server MUST respond
/// with a 400 … to any HTTP/1.1 request message that … contains more than one Host header
/// field"). Every guard asks this first.
pub fn host_fields_refusal(headers: &HeaderMap) -> Option<&'static str> {
    (headers.get_all(header::HOST).iter().count() > 1).then_some("bad request: more than one Host header field")
}

/// The Content-Security-Policy of every HTML page gbely serves. The pages are made by gbely and
/// load nothing from elsewhere: their scripts and styles are inline (hence `'unsafe-inline'`,
/// never another origin), pictures are the page's own or `data:`/`blob:` (the viewer's icons,
/// its PNG and WebM export), requests and event streams go to the page's own server. Forms post
/// to it; it may be framed by its own pages only (as `X-Frame-Options` says). The viewer's and
/// the stand's pages also carry a stricter policy of their own (`<meta>`); a browser applies
/// both.
pub const CSP: &str = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; \
    img-src 'self' data: blob:; connect-src 'self'; media-src 'self' blob:; object-src 'none'; \
    frame-ancestors 'self'; base-uri 'none'; form-action 'self'";

/// Adds the headers every answer carries, and [`CSP`] to HTML pages.
pub fn with_safe_headers(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    for (k, v) in [
        (header::CACHE_CONTROL, "no-store"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "SAMEORIGIN"),
    ] {
        h.entry(k).or_insert(HeaderValue::from_static(v));
    }
    let html = h.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|t| t.starts_with("text/html"));
    if html {
        h.entry(header::CONTENT_SECURITY_POLICY).or_insert(HeaderValue::from_static(CSP));
    }
    resp
}

/// The answer to a handler's panic: a plain page (the panic's message goes to the server's
/// output, as every panic's does; the browser learns nothing of the code).
fn panic_answer(_panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    with_safe_headers(text(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal error: the server failed to answer this request",
    ))
}

/// A running server: its address and the thread that serves it.
#[derive(Debug)]
pub struct Server {
    pub port: u16,
    /// The token of a guarded server ([`Server::start`]); empty for a public site.
    pub token: Arc<str>,
    handle: tokio::runtime::Handle,
    stop: Option<tokio::sync::watch::Sender<bool>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The small runtime the pages are served on (two worker threads).
pub fn runtime(name: &str) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).thread_name(name).enable_all().build()
}

impl Server {
    /// Serves `router` (guarded) on 127.0.0.1:`port` (0: any free port) with `token`.
    pub fn start(port: u16, token: String, router: Router<()>) -> std::io::Result<Server> {
        let rt = runtime("gbely-web")?;
        let listener = rt.block_on(tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))))?;
        let port = listener.local_addr()?.port();
        let token: Arc<str> = token.into();
        let g = Guard { token: Arc::clone(&token), port };
        let app = router.layer(axum::middleware::from_fn_with_state(g, guard));
        Server::serve(rt, listener, app, token)
    }

    /// Serves `app` as it is (its own middleware) from `listener` on the runtime `rt`, on a
    /// thread of its own, until [`Server::stop`], under the default [`conn::Limits`].
    pub fn serve(
        rt: tokio::runtime::Runtime,
        listener: tokio::net::TcpListener,
        app: Router<()>,
        token: Arc<str>,
    ) -> std::io::Result<Server> {
        Server::serve_with(rt, listener, app, token, conn::Limits::default())
    }

    /// [`Server::serve`] under `limits`. A handler's panic answers `500` with a plain page
    /// instead of dropping the connection.
    pub fn serve_with(
        rt: tokio::runtime::Runtime,
        listener: tokio::net::TcpListener,
        app: Router<()>,
        token: Arc<str>,
        limits: conn::Limits,
    ) -> std::io::Result<Server> {
        let port = listener.local_addr()?.port();
        let handle = rt.handle().clone();
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let app = app.layer(tower_http::catch_panic::CatchPanicLayer::custom(panic_answer));
        let thread = std::thread::Builder::new().name("gbely-web".into()).spawn(move || {
            rt.block_on(async move {
                let mut grace = stopped.clone();
                // Handlers may ask who is asking: `ConnectInfo` (the arena's limits per requester).
                let serve = conn::serve(listener, app, limits, stopped);
                // Requests in progress get half a second; a page's event stream, which never
                // ends by itself, is cut then.
                tokio::select! {
                    _ = serve => {}
                    _ = async move {
                        let _ = grace.wait_for(|s| *s).await;
                        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                    } => {}
                }
            });
            rt.shutdown_timeout(std::time::Duration::from_millis(200));
        })?;
        Ok(Server { port, token, handle, stop: Some(stop), thread: Some(thread) })
    }

    /// The runtime the server runs on (for work that shares it, until the server stops).
    pub fn handle(&self) -> &tokio::runtime::Handle {
        &self.handle
    }

    /// `http://127.0.0.1:PORT{path}?t=TOKEN`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}?t={}", self.port, self.token)
    }

    /// Stops serving and waits for the server's thread.
    pub fn stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(true);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The viewer's page of a replay file (`gbely replay view`'s), read and made off the server's
/// threads, once: the last pages made are kept (`cached_page`).
pub async fn replay_page(path: std::path::PathBuf) -> Result<String, String> {
    replay_page_in(path, None).await
}

/// [`replay_page`] in `lang` (`None`: English): the replay's data is made once for every
/// language, the page around it at each request.
pub async fn replay_page_in(
    path: std::path::PathBuf,
    lang: Option<std::sync::Arc<crate::replays::viewer::ViewerLang>>,
) -> Result<String, String> {
    tokio::task::spawn_blocking(move || {
        let data = cached_page(&path, || {
            crate::replays::read_replay(&path)
                .map_err(|e| e.to_string())
                .and_then(|r| crate::replays::viewer::viewer_file_data(&r))
        })?;
        Ok(data.page(None, lang.as_deref()))
    })
    .await
    .map_err(|e| e.to_string())?
}

/// How many replay pages [`cached_page`] keeps (a leaderboard match's is about 0.7 MB, a
/// final's about 1 MB).
const KEPT_PAGES: usize = 16;

/// A replay file as it is now: its path, length and modification time.
type PageKey = (std::path::PathBuf, u64, Option<std::time::SystemTime>);

/// The last [`KEPT_PAGES`] replay pages' data made, the newest last.
static PAGES: std::sync::Mutex<Vec<(PageKey, Arc<FileData>)>> = std::sync::Mutex::new(Vec::new());

/// The page data of the replay file at `path`, made by `make` unless the same file (the same
/// path, length and modification time) had it made lately. Making it re-simulates the match (a
/// built-in seat's commands are decided again): seconds for a leaderboard match, which every
/// visitor of the board would wait for again. A failure is not kept.
fn cached_page(
    path: &std::path::Path,
    make: impl FnOnce() -> Result<FileData, String>,
) -> Result<Arc<FileData>, String> {
    let key = std::fs::metadata(path).ok().map(|m| (path.to_path_buf(), m.len(), m.modified().ok()));
    let lock = || PAGES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(key) = &key {
        if let Some((_, page)) = lock().iter().find(|(k, _)| k == key) {
            return Ok(Arc::clone(page));
        }
    }
    let page = Arc::new(make()?);
    if let Some(key) = key {
        let mut pages = lock();
        pages.retain(|(k, _)| k.0 != key.0);
        pages.push((key, Arc::clone(&page)));
        let over = pages.len().saturating_sub(KEPT_PAGES);
        pages.drain(..over);
    }
    Ok(page)
}

/// A body read whole, at most `limit` bytes.
pub async fn read_body(body: Body, limit: usize) -> Result<axum::body::Bytes, Response> {
    axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| text(StatusCode::PAYLOAD_TOO_LARGE, format!("the request's body is over {limit} bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd") && !same_secret("abc", "ab") && !same_secret("", "a"));
        let t = random_token().unwrap();
        assert_eq!(t.len(), 32);
        assert_ne!(t, random_token().unwrap());
    }

    /// Regression (issue 45): a leaderboard entry's replay was re-simulated for every visitor
    /// (seconds each); its page is made once per file, and again once the file changes.
    #[test]
    fn a_replay_page_is_made_once_per_file() {
        let dir = std::env::temp_dir().join(format!("gbely-page-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json.gz");
        std::fs::write(&path, "one").unwrap();
        let made = std::cell::Cell::new(0);
        let make = |text: &str| {
            made.set(made.get() + 1);
            Ok(FileData { title: text.to_string(), data_gz_base64: String::new() })
        };
        let title = |r: Result<Arc<FileData>, String>| r.map(|d| d.title.clone());
        assert_eq!(title(cached_page(&path, || make("page 1"))).unwrap(), "page 1");
        assert_eq!(title(cached_page(&path, || make("page 2"))).unwrap(), "page 1");
        assert_eq!(made.get(), 1);
        std::fs::write(&path, "another").unwrap();
        assert_eq!(title(cached_page(&path, || make("page 3"))).unwrap(), "page 3");
        // A page that could not be made is not kept.
        std::fs::write(&path, "a third").unwrap();
        assert!(cached_page(&path, || Err("unreadable".into())).is_err());
        assert_eq!(title(cached_page(&path, || make("page 4"))).unwrap(), "page 4");
        assert_eq!(title(cached_page(&path, || make("page 5"))).unwrap(), "page 4");
        assert_eq!(made.get(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn query_values_are_found_by_name_and_decoded() {
        assert_eq!(query_param("a=1&t=x%2Fy+z&b", "t").as_deref(), Some("x/y z"));
        assert_eq!(query_param("a=1&b", "b").as_deref(), Some(""));
        assert_eq!(query_param("ta=1", "t"), None);
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%C3%A1"), "á");
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn the_guard_wants_the_host_the_token_and_a_same_site_post() {
        let g = Guard { token: "s3cret".into(), port: 4000 };
        let ok = headers(&[("host", "127.0.0.1:4000")]);
        assert_eq!(g.refusal(&Method::GET, "t=s3cret", &ok), None);
        assert_eq!(
            g.refusal(&Method::GET, "", &headers(&[("host", "localhost:4000"), (TOKEN_HEADER, "s3cret")])),
            None
        );
        assert!(g.refusal(&Method::GET, "t=s3creT", &ok).is_some());
        assert!(g.refusal(&Method::GET, "t=s3cret", &headers(&[("host", "evil.example:4000")])).is_some());
        assert!(g.refusal(&Method::GET, "t=s3cret", &HeaderMap::new()).is_some());
        let from = |o: &str| headers(&[("host", "127.0.0.1:4000"), ("origin", o)]);
        assert_eq!(g.refusal(&Method::POST, "t=s3cret", &from("http://127.0.0.1:4000")), None);
        assert!(g.refusal(&Method::POST, "t=s3cret", &from("http://evil.example")).is_some());
        assert!(g.refusal(&Method::POST, "t=s3cret", &from("http://127.0.0.1:4001")).is_some());
        let site = |s: &str| headers(&[("host", "127.0.0.1:4000"), ("sec-fetch-site", s)]);
        assert_eq!(g.refusal(&Method::POST, "t=s3cret", &site("same-origin")), None);
        assert!(g.refusal(&Method::POST, "t=s3cret", &site("cross-site")).is_some());
        assert!(g.refusal(&Method::DELETE, "t=s3cret", &site("same-site")).is_some());
        // A page of another site may link to a GET (the address leaked): it reads nothing back.
        assert_eq!(g.refusal(&Method::GET, "t=s3cret", &site("cross-site")), None);
    }

    #[test]
    fn two_host_fields_are_a_bad_request_even_with_ours_first() {
        let g = Guard { token: "s3cret".into(), port: 4000 };
        let mut h = headers(&[("host", "127.0.0.1:4000")]);
        h.append(header::HOST, HeaderValue::from_static("evil.example"));
        let (status, why) = g.refusal(&Method::GET, "t=s3cret", &h).unwrap();
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(why.contains("more than one Host"), "{why}");
        assert_eq!(host_fields_refusal(&headers(&[("host", "127.0.0.1:4000")])), None);
        assert!(g
            .refusal(&Method::GET, "t=s3cret", &HeaderMap::new())
            .is_some_and(|(s, _)| s == StatusCode::FORBIDDEN));
    }

    #[test]
    fn html_pages_and_only_they_carry_the_content_security_policy() {
        let page = with_safe_headers(html("<p>hi</p>".into()));
        assert_eq!(page.headers()[header::CONTENT_SECURITY_POLICY], CSP);
        assert!(CSP.contains("frame-ancestors 'self'") && CSP.contains("base-uri 'none'") && !CSP.contains("  "));
        let plain = with_safe_headers(text(StatusCode::OK, "hi"));
        assert!(plain.headers().get(header::CONTENT_SECURITY_POLICY).is_none());
        assert_eq!(plain.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    }
}
