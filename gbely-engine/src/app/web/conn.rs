//! The server's connections: hyper's HTTP/1 under the limits a port open to the internet needs
//! (`axum::serve` has none of them).
//!
//! * **Headers in time.** A request's head must arrive whole within [`Limits::header_read`] of
//!   the connection opening or of the previous answer's end (hyper's header-read timeout): a
//!   client that sends its request a byte at a time (slowloris), or opens a connection and sends
//!   nothing, is closed then. So a kept-alive connection waits at most that long for its next
//!   request.
//! * **Nothing moves.** A connection on which no byte moves either way for [`Limits::idle`] is
//!   closed, a request in flight or not (a body sent at a standstill, a reader that stopped
//!   reading an answer). Event streams are not cut: they send a comment every 15 s.
//! * **A cap that keeps answering.** At most [`Limits::connections`] connections are served at
//!   once. A connection that arrives at the cap closes the idlest connection with no request in
//!   flight (one still waiting for its request head, the longest silent first), so idle and
//!   slow-header connections can never hold the server; when every connection has a request in
//!   flight, accepting waits until one ends.
//! * **Descriptors.** The process's soft `RLIMIT_NOFILE` is raised to its hard limit at start
//!   ([`raise_descriptor_limit`]), and the default cap is half of it, so the database, replays
//!   and agents' pipes keep descriptors. Should accepting fail anyway (EMFILE), the loop closes
//!   an idle connection and backs off briefly instead of spinning.
//!
//! On stop, accepting ends, idle connections close, requests in flight are let finish (the
//! caller gives them half a second, then cuts what is left: event streams never end by
//! themselves).

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::Router;
use futures_util::future::BoxFuture;
use hyper::body::Incoming;
use hyper::service::Service;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify, Semaphore};

/// What a server's connections may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// A request's head arrives whole within this of the connection opening or of the previous
    /// answer's end.
    pub header_read: Duration,
    /// A connection on which no byte moves either way for this long is closed.
    pub idle: Duration,
    /// Connections served at once.
    pub connections: usize,
}

/// The default of [`Limits::header_read`]: headers within 10 s (hyper's default is 30).
pub const HEADER_READ: Duration = Duration::from_secs(10);
/// The default of [`Limits::idle`]: a connection at a standstill for 60 s is closed.
pub const IDLE: Duration = Duration::from_secs(60);

impl Default for Limits {
    /// The defaults, the cap from this process's descriptor limit (raised first).
    fn default() -> Limits {
        Limits { header_read: HEADER_READ, idle: IDLE, connections: default_connections(raise_descriptor_limit()) }
    }
}

/// The cap that leaves half of `descriptors` to everything else (the database, replays, agents'
/// pipes, files being read), at least 64 and at most 8192.
pub fn default_connections(descriptors: u64) -> usize {
    (descriptors / 2).clamp(64, 8192) as usize
}

/// Raises this process's soft limit of open descriptors to its hard limit; the soft limit now.
/// (Where there is no such limit: a figure that gives the default cap its maximum.)
pub fn raise_descriptor_limit() -> u64 {
    #[cfg(unix)]
    {
        use nix::sys::resource::{getrlimit, setrlimit, Resource};
        let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else { return 1024 };
        if soft >= hard || setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
            return hard;
        }
        // macOS refuses an unlimited hard limit as the soft one: its kernel's own maximum then.
        if setrlimit(Resource::RLIMIT_NOFILE, 10240.min(hard), hard).is_ok() {
            return 10240.min(hard);
        }
        soft
    }
    #[cfg(not(unix))]
    {
        16384
    }
}

/// One connection as the accept loop and the cap see it.
#[derive(Debug)]
struct Conn {
    /// Requests whose answer is not yet sent to its end (an event stream counts until it ends).
    in_flight: AtomicUsize,
    /// When a byte last moved either way (or a request began or ended), in ms after the
    /// registry's epoch.
    last_moved: AtomicU64,
    /// Closes the connection now (the cap needs its place).
    evict: Notify,
}

/// The open connections.
#[derive(Debug)]
struct Registry {
    epoch: Instant,
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
    next: AtomicU64,
}

impl Registry {
    fn new() -> Registry {
        Registry { epoch: Instant::now(), conns: Mutex::new(HashMap::new()), next: AtomicU64::new(0) }
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        self.conns.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(&self) -> (u64, Arc<Conn>) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            in_flight: AtomicUsize::new(0),
            last_moved: AtomicU64::new(self.now()),
            evict: Notify::new(),
        });
        self.lock().insert(id, Arc::clone(&conn));
        (id, conn)
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// Closes the connection with no request in flight that has been silent longest; false when
    /// every connection has one.
    fn evict_idlest(&self) -> bool {
        let conns = self.lock();
        let idlest = conns
            .values()
            .filter(|c| c.in_flight.load(Ordering::Relaxed) == 0)
            .min_by_key(|c| c.last_moved.load(Ordering::Relaxed));
        match idlest {
            Some(c) => {
                // A permit stored: the connection's task sees it even if it is not waiting yet.
                c.evict.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Serves `app` on `listener` under `limits` until `stop` turns true, then until the
/// connections left have ended.
pub async fn serve(listener: TcpListener, app: Router<()>, limits: Limits, mut stop: watch::Receiver<bool>) {
    let cap = limits.connections.max(1);
    let permits = Arc::new(Semaphore::new(cap));
    let registry = Arc::new(Registry::new());
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_read).keep_alive(true);
    let mut last_note: Option<Instant> = None;
    loop {
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok(accepted) => accepted,
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    // Out of descriptors (EMFILE, ENFILE) or memory: make room, back off, say so
                    // once a minute at most.
                    if last_note.is_none_or(|t| t.elapsed() > Duration::from_secs(60)) {
                        eprintln!("gbely: the server cannot accept a connection ({e}); closing idle ones");
                        last_note = Some(Instant::now());
                    }
                    registry.evict_idlest();
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.wait_for(|s| *s) => break,
        };
        let permit = match Arc::clone(&permits).try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                registry.evict_idlest();
                tokio::select! {
                    p = Arc::clone(&permits).acquire_owned() => match p { Ok(p) => p, Err(_) => break },
                    _ = stop.wait_for(|s| *s) => break,
                }
            }
        };
        let (stream, peer) = stream;
        let _ = stream.set_nodelay(true);
        let (id, conn) = registry.add();
        let io = TokioIo::new(Watched { stream, conn: Arc::clone(&conn), registry: Arc::clone(&registry) });
        let service = Tracked {
            inner: TowerToHyperService::new(app.clone()),
            peer,
            conn: Arc::clone(&conn),
            registry: Arc::clone(&registry),
        };
        let http = http.clone();
        let registry = Arc::clone(&registry);
        let mut stop = stop.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let served = http.serve_connection(io, service);
            tokio::pin!(served);
            let mut stopping = false;
            loop {
                let silent =
                    Duration::from_millis(registry.now().saturating_sub(conn.last_moved.load(Ordering::Relaxed)));
                if silent >= limits.idle {
                    break;
                }
                tokio::select! {
                    _ = served.as_mut() => break,
                    _ = conn.evict.notified() => break,
                    _ = stop.wait_for(|s| *s), if !stopping => {
                        stopping = true;
                        served.as_mut().graceful_shutdown();
                    }
                    _ = tokio::time::sleep(limits.idle - silent) => {}
                }
            }
            registry.remove(id);
        });
    }
    // Every permit back: every connection has ended.
    let _ = permits.acquire_many(cap as u32).await;
}

/// Errors of one connection that came and went before it was accepted: accept the next.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

/// The socket, noting when a byte moves.
#[derive(Debug)]
struct Watched {
    stream: TcpStream,
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl Watched {
    fn moved(&self) {
        self.conn.last_moved.store(self.registry.now(), Ordering::Relaxed);
    }
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.moved();
        }
        r
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.stream).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.moved();
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.moved();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// A request in flight on `conn` until its answer's body is sent to its end (or dropped).
#[derive(Debug)]
struct InFlight {
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl InFlight {
    fn new(conn: Arc<Conn>, registry: Arc<Registry>) -> InFlight {
        conn.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight { conn, registry }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.conn.last_moved.store(self.registry.now(), Ordering::Relaxed);
        self.conn.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The router as hyper's service, counting requests in flight.
#[derive(Debug)]
struct Tracked {
    inner: TowerToHyperService<Router<()>>,
    /// Who is connected: handed to handlers as axum's `ConnectInfo` (the arena's limits per
    /// requester).
    peer: std::net::SocketAddr,
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl Service<hyper::Request<Incoming>> for Tracked {
    type Response = hyper::Response<Counted>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn call(&self, mut req: hyper::Request<Incoming>) -> Self::Future {
        req.extensions_mut().insert(axum::extract::ConnectInfo(self.peer));
        let flight = InFlight::new(Arc::clone(&self.conn), Arc::clone(&self.registry));
        let answer = self.inner.call(req);
        Box::pin(async move {
            let resp = answer.await?;
            Ok(resp.map(|body| Counted { body, _flight: flight }))
        })
    }
}

/// An answer's body, holding its request in flight until it ends.
#[derive(Debug)]
struct Counted {
    body: Body,
    _flight: InFlight,
}

impl http_body::Body for Counted {
    type Data = <Body as http_body::Body>::Data;
    type Error = <Body as http_body::Body>::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpStream};

    use axum::routing::{get, post};

    use super::*;
    use crate::app::web::{read_body, Server};

    /// A server of `router` under `limits` on a free port.
    fn serve(router: Router<()>, limits: Limits) -> Server {
        let rt = crate::app::web::runtime("conn-test").unwrap();
        let listener = rt.block_on(TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))).unwrap();
        Server::serve_with(rt, listener, router, "".into(), limits).unwrap()
    }

    fn connect(port: u16) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        s
    }

    /// Whether the server has closed `s` (an end of stream or a reset; a timeout: still open).
    fn closed(s: &mut TcpStream) -> bool {
        let mut b = [0u8; 256];
        match s.read(&mut b) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => !matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut),
        }
    }

    /// A whole GET on a fresh connection: the answer's text and how long it took.
    fn get_page(port: u16, path: &str) -> (String, Duration) {
        let t = Instant::now();
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        (answer, t.elapsed())
    }

    async fn boom() -> &'static str {
        panic!("a handler's bug")
    }

    fn router() -> Router<()> {
        Router::new()
            .route("/", get(|| async { "ok" }))
            .route("/boom", get(boom))
            .route("/body", post(|body: Body| async move { read_body(body, 1000).await.map(|b| b.len().to_string()) }))
    }

    #[test]
    fn slow_senders_and_silent_connections_are_closed_in_time_and_the_cap_keeps_answering() {
        let limits =
            Limits { header_read: Duration::from_millis(1500), idle: Duration::from_secs(60), connections: 16 };
        let mut server = serve(router(), limits);
        let t0 = Instant::now();
        // Three times the cap of connections that send nothing, and four that send their request
        // a byte at a time.
        let mut idle: Vec<TcpStream> = (0..48).map(|_| connect(server.port)).collect();
        let mut slow: Vec<TcpStream> = (0..4).map(|_| connect(server.port)).collect();
        for s in &mut slow {
            s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
        }
        // The site answers at once all the same: the cap closes the idlest connections.
        for _ in 0..3 {
            let (answer, took) = get_page(server.port, "/");
            assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("ok"), "{answer}");
            assert!(took < Duration::from_millis(500), "{took:?}");
        }
        // The slow senders are closed by the header timeout, however they keep sending.
        let mut slow_closed = vec![None; slow.len()];
        while slow_closed.iter().any(Option::is_none) && t0.elapsed() < Duration::from_secs(5) {
            for (s, at) in slow.iter_mut().zip(&mut slow_closed) {
                if at.is_none() && (s.write_all(b"X").is_err() || closed(s)) {
                    *at = Some(t0.elapsed());
                }
            }
        }
        for at in &slow_closed {
            let at = at.expect("a slow sender still open after 5 s");
            assert!(at < Duration::from_millis(2500), "closed after {at:?}");
        }
        // The idle ones are closed too, by the cap or by the header timeout.
        std::thread::sleep(Duration::from_millis(2000).saturating_sub(t0.elapsed()));
        assert!(idle.iter_mut().all(closed), "idle connections left open");
        server.stop();
    }

    #[test]
    fn a_connection_at_a_standstill_is_closed_with_its_request_in_flight() {
        let limits = Limits { header_read: Duration::from_secs(10), idle: Duration::from_millis(800), connections: 16 };
        let mut server = serve(router(), limits);
        let mut s = connect(server.port);
        let t = Instant::now();
        // A body promised, one byte sent, then nothing.
        s.write_all(b"POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\na").unwrap();
        while !closed(&mut s) {
            assert!(t.elapsed() < Duration::from_secs(5), "still open after 5 s");
        }
        assert!(t.elapsed() >= Duration::from_millis(700), "closed after {:?}", t.elapsed());
        // A whole body is read as usual.
        let mut s = connect(server.port);
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(b"POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc").unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("\r\n\r\n3"), "{answer}");
        server.stop();
    }

    #[test]
    fn a_handlers_panic_answers_500_with_a_plain_page_and_the_server_goes_on() {
        let mut server = serve(router(), Limits { connections: 16, ..Limits::default() });
        let (answer, _) = get_page(server.port, "/boom");
        assert!(answer.starts_with("HTTP/1.1 500"), "{answer}");
        let lower = answer.to_ascii_lowercase();
        assert!(
            lower.contains("content-type: text/plain") && lower.contains("x-content-type-options: nosniff"),
            "{answer}"
        );
        assert!(answer.ends_with("internal error: the server failed to answer this request"), "{answer}");
        assert!(!answer.contains("a handler's bug"), "{answer}");
        assert!(get_page(server.port, "/").0.starts_with("HTTP/1.1 200"));
        server.stop();
    }

    #[test]
    fn the_default_cap_leaves_half_the_descriptors() {
        assert_eq!(default_connections(1024), 512);
        assert_eq!(default_connections(20_000), 8192);
        assert_eq!(default_connections(100), 64);
        let raised = raise_descriptor_limit();
        #[cfg(unix)]
        {
            let (soft, hard) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).unwrap();
            assert_eq!(soft, raised);
            assert!(soft == hard || soft == 10240, "{soft} of {hard}");
        }
        assert!(raised > 0);
    }
}
