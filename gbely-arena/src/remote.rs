//! `gbely arena worker --server URL`: a judge that needs neither the competition's database nor
//! its data folder, only the server's address and a worker token (the server's side, and the
//! API, are [`crate::workers`]). It measures its machine's speed ([`crate::speed`]), asks for a
//! job, downloads the submission, plays it exactly as the server's own judges do
//! ([`crate::judge::play`]) in a folder of its own, renews the job's lease while it judges, then
//! sends the replay, the agent's log and the verdict. A job it loses (its lease lapsed: another
//! judge has it) is stopped and nothing of it is sent; a job it is stopped in (Ctrl-C) goes back
//! to the queue.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use super::judge::{hostname, play, Assignment, Renewer, CHECK_LOG, REPLAY};
use super::speed::Speed;
use super::store::{SubmissionState, Verdict};
use super::workers::{Claim, ClaimRequest, Heartbeat, Received, TooSlow, AGENT_LOG, HOST_HEADER};
use super::ArenaError;

/// How a worker over HTTP works.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// The competition's address (its `public_url`).
    pub server: String,
    /// The worker token an organiser issued (`gbw_…`).
    pub token: String,
    /// The agents' interpreter (resolved).
    pub python: String,
    /// Matches judged at once.
    pub jobs: usize,
    /// Where the worker keeps a job's files while it judges it.
    pub folder: PathBuf,
    /// How often the machine's speed is measured again ([`crate::speed::EVERY`] by default).
    pub measure_every: Duration,
}

/// A request's failure, as the worker acts on it.
#[derive(Debug)]
enum Failure {
    /// The server refuses this worker (its token, its address, the protocol): it stops.
    Refused(String),
    /// Too slow for the competition (`403` with `too_slow`): it waits and measures again.
    Slow(String),
    /// The job is no longer this worker's (`409`).
    Lost(String),
    /// The server refuses what was sent for this job (`400`, `404`, `413`, `422`): the job is
    /// given back, and the worker goes on.
    Rejected(String),
    /// The network or the server's own trouble: tried again later.
    Passing(String),
}

impl Failure {
    fn why(&self) -> &str {
        match self {
            Failure::Refused(w) | Failure::Slow(w) | Failure::Lost(w) | Failure::Rejected(w) | Failure::Passing(w) => w,
        }
    }
}

/// The client of one server.
#[derive(Clone, Debug)]
struct Client {
    agent: ureq::Agent,
    base: String,
    auth: String,
    host: String,
}

type Answer = ureq::http::Response<ureq::Body>;

impl Client {
    fn new(server: &str, token: &str, host: &str) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(15)))
            .timeout_global(Some(Duration::from_secs(300)))
            // The server closes idle connections: a fresh one a request.
            .max_idle_connections(0)
            .user_agent(format!("gbely-arena-worker/{}", env!("CARGO_PKG_VERSION")))
            .build();
        Client {
            agent: config.into(),
            base: server.trim_end_matches('/').to_string(),
            auth: format!("Bearer {token}"),
            host: host.to_string(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn post(&self, path: &str) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
        self.agent.post(&self.url(path)).header("authorization", &self.auth).header(HOST_HEADER, &self.host)
    }

    /// The answer when it is a success (2xx), else the failure it says.
    fn checked(&self, what: &str, sent: Result<Answer, ureq::Error>) -> Result<Answer, Failure> {
        let mut answer = sent.map_err(|e| Failure::Passing(format!("{what}: {} did not answer: {e}", self.base)))?;
        let status = answer.status();
        if status.is_success() {
            return Ok(answer);
        }
        let body = answer.body_mut().with_config().limit(64 * 1024).read_to_string().unwrap_or_default();
        if let Ok(slow) = serde_json::from_str::<TooSlow>(&body) {
            if slow.too_slow {
                return Err(Failure::Slow(format!("{what}: the server answered {status}: {}", slow.error)));
            }
        }
        let why = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .unwrap_or_else(|| body.trim().to_string());
        let said = format!("{what}: the server answered {status}: {why}");
        Err(match status.as_u16() {
            409 => Failure::Lost(said),
            400 | 404 | 413 | 422 => Failure::Rejected(said),
            408 | 429 => Failure::Passing(said),
            s if s >= 500 => Failure::Passing(said),
            // 401 (the token), 403, 421 (another address than the server's own).
            _ => Failure::Refused(said),
        })
    }

    fn claim(&self, speed: Speed) -> Result<Option<Claim>, Failure> {
        let sent = self.post("/worker/claim").send_json(ClaimRequest { speed: Some(speed) });
        let mut answer = self.checked("asking for a job", sent).map_err(|f| match f {
            // What the server refuses in a claim is this worker's protocol: it stops.
            Failure::Rejected(why) => Failure::Refused(why),
            other => other,
        })?;
        if answer.status().as_u16() == 204 {
            return Ok(None);
        }
        let claim = answer
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_json::<Claim>()
            .map_err(|e| Failure::Refused(format!("asking for a job: the server's answer is not a job: {e}")))?;
        Ok(Some(claim))
    }

    fn job_path(a: &Assignment, rest: &str) -> String {
        format!("/worker/jobs/{}/{}/{rest}", a.job.id, a.job.attempt)
    }

    fn download(&self, a: &Assignment, to: &Path) -> Result<(), Failure> {
        let sent = self
            .agent
            .get(&self.url(&Self::job_path(a, "file")))
            .header("authorization", &self.auth)
            .header(HOST_HEADER, &self.host)
            .call();
        let mut answer = self.checked("downloading the submission", sent)?;
        let bytes = answer
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_vec()
            .map_err(|e| Failure::Passing(format!("downloading the submission: {e}")))?;
        std::fs::write(to, bytes).map_err(|e| Failure::Passing(format!("writing {}: {e}", to.display())))
    }

    /// Renews the lease; answered within a third of it (a hung request must not outlast it).
    fn heartbeat(&self, a: &Assignment, state: Option<SubmissionState>) -> Result<(), Failure> {
        let within = Duration::from_millis(a.lease_seconds.max(1) * 1000 / 3);
        let sent = self
            .post(&Self::job_path(a, "heartbeat"))
            .config()
            .timeout_global(Some(within))
            .build()
            .send_json(Heartbeat { state });
        self.checked("renewing the lease", sent).map(drop)
    }

    fn send_file(&self, a: &Assignment, name: &str, path: &Path) -> Result<(), Failure> {
        let bytes = std::fs::read(path).map_err(|e| Failure::Passing(format!("reading {}: {e}", path.display())))?;
        let sent = self
            .agent
            .put(&self.url(&Self::job_path(a, &format!("files/{name}"))))
            .header("authorization", &self.auth)
            .header(HOST_HEADER, &self.host)
            .header("content-type", "application/octet-stream")
            .send(&bytes[..]);
        self.checked(&format!("sending {name}"), sent).map(drop)
    }

    /// Sends the verdict: whether the server kept it (else the job went back to its queue).
    fn result(&self, a: &Assignment, verdict: &Verdict) -> Result<bool, Failure> {
        let sent = self.post(&Self::job_path(a, "result")).send_json(verdict);
        let mut answer = self.checked("sending the result", sent)?;
        let received = answer
            .body_mut()
            .read_json::<Received>()
            .map_err(|e| Failure::Passing(format!("sending the result: the server's answer: {e}")))?;
        Ok(received.kept)
    }

    fn release(&self, a: &Assignment) -> Result<(), Failure> {
        let sent = self.post(&Self::job_path(a, "release")).send_empty();
        self.checked("giving the job back", sent).map(drop)
    }
}

/// Judges the server's jobs until Ctrl-C, `jobs` at once; an error when the server refuses this
/// worker (an unknown or revoked token, a wrong address).
pub fn work_remote(options: RemoteOptions) -> Result<(), ArenaError> {
    let data_error = |error| ArenaError::Data { path: options.folder.display().to_string(), error };
    std::fs::create_dir_all(&options.folder).map_err(data_error)?;
    // One worker a folder: what it finds there is a killed worker's, removed before it starts.
    let lock = std::fs::File::create(options.folder.join(".lock")).map_err(data_error)?;
    if lock.try_lock().is_err() {
        return Err(ArenaError::Other(format!(
            "{}: another worker judges in this folder; give each worker a folder of its own (--folder)",
            options.folder.display()
        )));
    }
    for left in ["files", "judging"] {
        let _ = std::fs::remove_dir_all(options.folder.join(left));
    }
    let host = hostname();
    let machine = Arc::new(Machine { speed: Mutex::new(measured(&options)?), judging: RwLock::new(()) });
    let client = Client::new(&options.server, &options.token, &host);
    let closing = Arc::new(AtomicBool::new(false));
    let refused: Arc<Mutex<Option<String>>> = Arc::default();
    let threads: Vec<_> = (0..options.jobs.max(1))
        .map(|k| {
            let me = Worker {
                client: client.clone(),
                options: options.clone(),
                closing: Arc::clone(&closing),
                machine: Arc::clone(&machine),
            };
            let (closing, refused) = (Arc::clone(&closing), Arc::clone(&refused));
            std::thread::Builder::new()
                .name(format!("gbely-worker-{k}"))
                .spawn(move || {
                    if let Err(why) = me.run() {
                        refused.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(why);
                        closing.store(true, Ordering::Relaxed);
                    }
                })
                .map_err(|e| ArenaError::Other(format!("cannot start a judge's thread: {e}")))
        })
        .collect::<Result<_, _>>()?;
    while !gbely_engine::runner::interrupt::requested() && !closing.load(Ordering::Relaxed) {
        std::thread::sleep(gbely_engine::runner::interrupt::POLL);
    }
    closing.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    drop(lock);
    let why = refused.lock().unwrap_or_else(|e| e.into_inner()).take();
    why.map_or(Ok(()), |why| Err(ArenaError::Other(why)))
}

/// This machine's speed, measured now (said on the terminal).
fn measured(options: &RemoteOptions) -> Result<(Speed, Instant), ArenaError> {
    let speed = crate::speed::measure(&options.python).map_err(ArenaError::Other)?;
    eprintln!(
        "gbely: this machine's speed: the engine's match {:.0} ms, the Python workload {:.0} ms (measured again every {} s)",
        speed.engine_ms,
        speed.python_ms,
        options.measure_every.as_secs()
    );
    Ok((speed, Instant::now()))
}

/// What the worker's judges share of their machine.
#[derive(Debug)]
struct Machine {
    /// Its last measured speed, and when it was measured.
    speed: Mutex<(Speed, Instant)>,
    /// Held (read) by each judge while it judges, and (write) while the speed is measured: a
    /// measurement never runs beside the machine's own matches.
    judging: RwLock<()>,
}

/// One judge's loop.
struct Worker {
    client: Client,
    options: RemoteOptions,
    closing: Arc<AtomicBool>,
    machine: Arc<Machine>,
}

/// How long a judge waits after its machine could not judge a job, or was found too slow.
const WAIT_AFTER_TROUBLE: Duration = Duration::from_secs(60);

impl Worker {
    /// Waits `d`, or less when the worker is closing.
    fn pause(&self, d: Duration) {
        let end = Instant::now() + d;
        while Instant::now() < end && !self.closing.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The machine's speed, measured again when it is due (`force`: now), while none of its
    /// judges plays.
    fn speed(&self, force: bool) -> Result<Speed, String> {
        let due = |at: Instant| force || at.elapsed() >= self.options.measure_every;
        if !due(self.machine.speed.lock().unwrap_or_else(|e| e.into_inner()).1) {
            return Ok(self.machine.speed.lock().unwrap_or_else(|e| e.into_inner()).0);
        }
        let _alone = self.machine.judging.write().unwrap_or_else(|e| e.into_inner());
        let mut last = self.machine.speed.lock().unwrap_or_else(|e| e.into_inner());
        // Another judge may have measured while this one waited.
        if due(last.1) {
            *last = measured(&self.options).map_err(|e| e.to_string())?;
        }
        Ok(last.0)
    }

    fn run(&self) -> Result<(), String> {
        let mut backoff = Duration::from_secs(1);
        let mut last_trouble = String::new();
        let mut slow = false;
        while !self.closing.load(Ordering::Relaxed) {
            let speed = self.speed(std::mem::take(&mut slow))?;
            let claimed = {
                let _judging = self.machine.judging.read().unwrap_or_else(|e| e.into_inner());
                self.client.claim(speed).map(|c| c.map(|claim| self.judge(claim)))
            };
            match claimed {
                Ok(Some(judged)) => {
                    backoff = Duration::from_secs(1);
                    last_trouble.clear();
                    match judged {
                        Err(Failure::Refused(why)) => return Err(why),
                        // The machine could not judge (its sandbox, its Python): not at once again.
                        Ok(false) => self.pause(WAIT_AFTER_TROUBLE),
                        _ => {}
                    }
                }
                Ok(None) => {
                    backoff = Duration::from_secs(1);
                    self.pause(Duration::from_millis(700));
                }
                Err(Failure::Refused(why)) => return Err(why),
                Err(Failure::Slow(why)) => {
                    eprintln!("gbely: {why}\n       (measuring again in {} s)", WAIT_AFTER_TROUBLE.as_secs());
                    self.pause(WAIT_AFTER_TROUBLE.min(self.options.measure_every));
                    slow = true;
                }
                Err(f @ (Failure::Lost(_) | Failure::Passing(_) | Failure::Rejected(_))) => {
                    // Said once while it lasts; tried again, less and less often.
                    let why = f.why().to_string();
                    if why != last_trouble {
                        eprintln!("gbely: {why} (trying again)");
                        last_trouble = why;
                    }
                    self.pause(backoff);
                    backoff = (backoff * 2).min(Duration::from_secs(30));
                }
            }
        }
        Ok(())
    }

    /// Judges one claimed job; its files are removed after, whatever happened. `Ok(false)`:
    /// this machine could not judge it (the job is back in the server's queue).
    fn judge(&self, claim: Claim) -> Result<bool, Failure> {
        let a = &claim.assignment;
        let name = format!("{}-{}", a.job.submission, a.job.attempt);
        let (files, dir) =
            (self.options.folder.join("files").join(&name), self.options.folder.join("judging").join(&name));
        let done = (|| {
            for d in [&files, &dir] {
                let _ = std::fs::remove_dir_all(d);
                std::fs::create_dir_all(d)
                    .map_err(|e| Failure::Rejected(format!("cannot create {}: {e}", d.display())))?;
            }
            self.judge_in(&claim, &files, &dir)
        })();
        let _ = std::fs::remove_dir_all(&files);
        let _ = std::fs::remove_dir_all(&dir);
        let said = match &done {
            Ok((line, _)) => line.as_str(),
            Err(f) => f.why(),
        };
        eprintln!("gbely: submission {} (attempt {}): {said}", a.job.submission, a.job.attempt);
        if let Err(Failure::Rejected(_) | Failure::Passing(_) | Failure::Refused(_) | Failure::Slow(_)) = &done {
            // What could not be sent or was refused: the job goes back to the queue at once
            // (else its lease would hold it for nothing; a revoked token's is back already).
            let _ = self.client.release(a);
        }
        done.map(|(_, judged)| judged)
    }

    /// Plays the job: what to say of it, and whether this machine could judge it.
    fn judge_in(&self, claim: &Claim, files: &Path, dir: &Path) -> Result<(String, bool), Failure> {
        let a = &claim.assignment;
        let map = gbely_world::parse_map_file(&claim.map)
            .map_err(|e| Failure::Refused(format!("the server's map cannot be read: {e}")))?;
        let map = Arc::new(map);
        let file = files.join(format!("submission-{}.py", a.job.submission));
        self.client.download(a, &file)?;
        // The lease, renewed while the job runs; losing it (or the worker closing) stops it.
        let renewer = {
            let (client, a) = (self.client.clone(), a.clone());
            Renewer::start(a.lease_seconds, Arc::clone(&self.closing), move || match client.heartbeat(&a, None) {
                Err(Failure::Lost(why) | Failure::Refused(why)) => Err(why),
                // A passing trouble is tried again at the next beat, within the lease.
                _ => Ok(()),
            })
        };
        let mark = |state| {
            if let Err(Failure::Lost(why) | Failure::Refused(why)) = self.client.heartbeat(a, Some(state)) {
                renewer.lose(why);
            }
        };
        let verdict = gbely_engine::runner::interrupt::within(Some(renewer.stop()), || {
            play(a, &map, &file, dir, &self.options.python, &mark)
        });
        // The lease is renewed while the verdict is sent, too (its tries may take a while).
        let sent = match (renewer.take_lost(), &verdict) {
            (Some(why), _) => Err(Failure::Lost(format!("stopped, nothing sent: {why}"))),
            (None, Some(verdict)) => self.send(a, dir, verdict),
            (None, None) => Ok(true),
        };
        renewer.end();
        let kept = sent?;
        let Some(verdict) = verdict else {
            // Stopped with the worker: the job goes back to the queue.
            let _ = self.client.release(a);
            return Ok(("stopped; the job is back in the server's queue".into(), true));
        };
        Ok(match &verdict {
            Verdict::Judged { outcome, reason, .. } => match outcome.share {
                Some(share) => (format!("judged: {share:.2} % of the map"), true),
                None => (format!("judged: {reason}"), true),
            },
            Verdict::CheckFailed { reason, .. } => (format!("the check failed: {reason}"), true),
            Verdict::Error { reason } => {
                debug_assert!(!kept);
                let wait = WAIT_AFTER_TROUBLE.as_secs();
                (
                    format!(
                        "this machine could not judge it: {reason} (the job is back in the queue; waiting {wait} s)"
                    ),
                    false,
                )
            }
        })
    }

    /// Sends the job's files, then its verdict: each request tried again on a passing trouble
    /// (the network, the server's own), up to 5 times over about a minute and a half, the lease
    /// renewed meanwhile — a judged match is not lost to a moment's outage. Whether the server
    /// kept the verdict.
    fn send(&self, a: &Assignment, dir: &Path, verdict: &Verdict) -> Result<bool, Failure> {
        let mut tries = 0;
        loop {
            match self.send_once(a, dir, verdict) {
                Err(Failure::Passing(why)) if tries < 5 && !self.closing.load(Ordering::Relaxed) => {
                    tries += 1;
                    eprintln!("gbely: submission {}: {why} (sending again)", a.job.submission);
                    self.pause(Duration::from_secs(2 << tries.min(4)));
                }
                done => return done,
            }
        }
    }

    fn send_once(&self, a: &Assignment, dir: &Path, verdict: &Verdict) -> Result<bool, Failure> {
        let rel = format!("{}/", a.folder());
        let local = |kept: &str| kept.strip_prefix(&rel).map(|r| dir.join(r)).filter(|p| p.is_file());
        if let Verdict::Judged { outcome, .. } = verdict {
            if let Some(replay) = local(&outcome.replay) {
                self.client.send_file(a, REPLAY, &replay)?;
            }
            if let Some(log) = local(&outcome.log) {
                self.client.send_file(a, AGENT_LOG, &log)?;
            }
        }
        let check_log = dir.join(CHECK_LOG);
        if check_log.is_file() {
            self.client.send_file(a, CHECK_LOG, &check_log)?;
        }
        self.client.result(a, verdict)
    }
}
