//! `gbely arena worker --server URL`: a judge that needs neither the competition's database nor
//! its data folder, only the server's address and a worker token (the server's side, and the
//! API, are [`crate::workers`]). It asks for a job, downloads the submission, plays it exactly
//! as the server's own judges do ([`crate::judge::play`]) in a folder of its own, renews the
//! job's lease while it judges, then sends the replay, the agent's log and the verdict. A job
//! it loses (its lease lapsed: another judge has it) is stopped and nothing of it is sent; a job
//! it is stopped in (Ctrl-C) goes back to the queue.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::judge::{hostname, play, Assignment, CHECK_LOG, REPLAY};
use super::speed::Speed;
use super::store::{SubmissionState, Verdict};
use super::workers::{Claim, ClaimRequest, Heartbeat, AGENT_LOG};
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
}

/// A request's failure, as the worker acts on it.
#[derive(Debug)]
enum Failure {
    /// The server refuses this worker (its token, its address): it stops.
    Refused(String),
    /// The job is no longer this worker's (`409`).
    Lost(String),
    /// The network or the server's own trouble: tried again later.
    Passing(String),
}

/// The client of one server.
#[derive(Clone, Debug)]
struct Client {
    agent: ureq::Agent,
    base: String,
    auth: String,
}

type Answer = ureq::http::Response<ureq::Body>;

impl Client {
    fn new(server: &str, token: &str) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(15)))
            .timeout_global(Some(Duration::from_secs(300)))
            // The server closes idle connections: a fresh one a request.
            .max_idle_connections(0)
            .user_agent(format!("gbely-arena-worker/{}", env!("CARGO_PKG_VERSION")))
            .build();
        Client { agent: config.into(), base: server.trim_end_matches('/').to_string(), auth: format!("Bearer {token}") }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The answer when it is a success (2xx), else the failure it says.
    fn checked(&self, what: &str, sent: Result<Answer, ureq::Error>) -> Result<Answer, Failure> {
        let mut answer = sent.map_err(|e| Failure::Passing(format!("{what}: {} did not answer: {e}", self.base)))?;
        let status = answer.status();
        if status.is_success() {
            return Ok(answer);
        }
        let body = answer.body_mut().with_config().limit(64 * 1024).read_to_string().unwrap_or_default();
        let why = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .unwrap_or_else(|| body.trim().to_string());
        let said = format!("{what}: the server answered {status}: {why}");
        Err(match status.as_u16() {
            409 => Failure::Lost(said),
            408 | 429 => Failure::Passing(said),
            s if s >= 500 => Failure::Passing(said),
            _ => Failure::Refused(said),
        })
    }

    fn claim(&self, host: &str, speed: Speed) -> Result<Option<Claim>, Failure> {
        let sent = self
            .agent
            .post(&self.url("/worker/claim"))
            .header("authorization", &self.auth)
            .send_json(ClaimRequest { host: host.to_string(), speed: Some(speed) });
        let mut answer = self.checked("asking for a job", sent)?;
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
        let sent = self.agent.get(&self.url(&Self::job_path(a, "file"))).header("authorization", &self.auth).call();
        let mut answer = self.checked("downloading the submission", sent)?;
        let bytes = answer
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_vec()
            .map_err(|e| Failure::Passing(format!("downloading the submission: {e}")))?;
        std::fs::write(to, bytes).map_err(|e| Failure::Passing(format!("writing {}: {e}", to.display())))
    }

    fn heartbeat(&self, a: &Assignment, state: Option<SubmissionState>) -> Result<(), Failure> {
        let sent = self
            .agent
            .post(&self.url(&Self::job_path(a, "heartbeat")))
            .header("authorization", &self.auth)
            .send_json(Heartbeat { state });
        self.checked("renewing the lease", sent).map(drop)
    }

    fn send_file(&self, a: &Assignment, name: &str, path: &Path) -> Result<(), Failure> {
        let bytes = std::fs::read(path).map_err(|e| Failure::Passing(format!("reading {}: {e}", path.display())))?;
        let sent = self
            .agent
            .put(&self.url(&Self::job_path(a, &format!("files/{name}"))))
            .header("authorization", &self.auth)
            .header("content-type", "application/octet-stream")
            .send(&bytes[..]);
        self.checked(&format!("sending {name}"), sent).map(drop)
    }

    fn result(&self, a: &Assignment, verdict: &Verdict) -> Result<(), Failure> {
        let sent = self
            .agent
            .post(&self.url(&Self::job_path(a, "result")))
            .header("authorization", &self.auth)
            .send_json(verdict);
        self.checked("sending the result", sent).map(drop)
    }

    fn release(&self, a: &Assignment) -> Result<(), Failure> {
        let sent =
            self.agent.post(&self.url(&Self::job_path(a, "release"))).header("authorization", &self.auth).send_empty();
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
    let client = Client::new(&options.server, &options.token);
    let closing = Arc::new(AtomicBool::new(false));
    let refused: Arc<Mutex<Option<String>>> = Arc::default();
    let host = hostname();
    let speed = Arc::new(Mutex::new(measured(&options.python)?));
    let threads: Vec<_> = (0..options.jobs.max(1))
        .map(|k| {
            let (client, options, closing, refused, host, speed) = (
                client.clone(),
                options.clone(),
                Arc::clone(&closing),
                Arc::clone(&refused),
                host.clone(),
                Arc::clone(&speed),
            );
            std::thread::Builder::new()
                .name(format!("gbely-worker-{k}"))
                .spawn(move || {
                    let me =
                        Worker { client, options, closing: Arc::clone(&closing), host: format!("{host}:{k}"), speed };
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
fn measured(python: &str) -> Result<(Speed, Instant), ArenaError> {
    let speed = crate::speed::measure(python).map_err(ArenaError::Other)?;
    eprintln!(
        "gbely: this machine's speed: the engine's match {:.0} ms, the Python workload {:.0} ms (measured again every {} min)",
        speed.engine_ms,
        speed.python_ms,
        crate::speed::EVERY.as_secs() / 60
    );
    Ok((speed, Instant::now()))
}

/// One judge's loop.
struct Worker {
    client: Client,
    options: RemoteOptions,
    closing: Arc<AtomicBool>,
    host: String,
    /// The machine's last measured speed, shared by its judges, and when it was measured.
    speed: Arc<Mutex<(Speed, Instant)>>,
}

impl Worker {
    /// Waits `d`, or less when the worker is closing.
    fn pause(&self, d: Duration) {
        let end = Instant::now() + d;
        while Instant::now() < end && !self.closing.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn run(&self) -> Result<(), String> {
        let mut backoff = Duration::from_secs(1);
        let mut last_trouble = String::new();
        while !self.closing.load(Ordering::Relaxed) {
            let speed = {
                let mut last = self.speed.lock().unwrap_or_else(|e| e.into_inner());
                if last.1.elapsed() >= crate::speed::EVERY {
                    // Measured between jobs (this judge's; the machine's others may be playing).
                    *last = measured(&self.options.python).map_err(|e| e.to_string())?;
                }
                last.0
            };
            match self.client.claim(&self.host, speed) {
                Ok(Some(claim)) => {
                    backoff = Duration::from_secs(1);
                    last_trouble.clear();
                    if let Err(Failure::Refused(why)) = self.judge(claim) {
                        return Err(why);
                    }
                }
                Ok(None) => {
                    backoff = Duration::from_secs(1);
                    self.pause(Duration::from_millis(700));
                }
                Err(Failure::Refused(why)) => return Err(why),
                Err(Failure::Lost(why) | Failure::Passing(why)) => {
                    // Said once while it lasts; tried again, less and less often.
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

    /// Judges one claimed job; its files are removed after, whatever happened.
    fn judge(&self, claim: Claim) -> Result<(), Failure> {
        let a = &claim.assignment;
        let name = format!("{}-{}", a.job.submission, a.job.attempt);
        let (files, dir) =
            (self.options.folder.join("files").join(&name), self.options.folder.join("judging").join(&name));
        for d in [&files, &dir] {
            let _ = std::fs::remove_dir_all(d);
            std::fs::create_dir_all(d).map_err(|e| Failure::Passing(format!("cannot create {}: {e}", d.display())))?;
        }
        let done = self.judge_in(&claim, &files, &dir);
        let _ = std::fs::remove_dir_all(&files);
        let _ = std::fs::remove_dir_all(&dir);
        match &done {
            Ok(line) => eprintln!("gbely: submission {} (attempt {}): {line}", a.job.submission, a.job.attempt),
            Err(Failure::Lost(why) | Failure::Passing(why) | Failure::Refused(why)) => {
                eprintln!("gbely: submission {} (attempt {}): {why}", a.job.submission, a.job.attempt)
            }
        }
        done.map(drop)
    }

    fn judge_in(&self, claim: &Claim, files: &Path, dir: &Path) -> Result<String, Failure> {
        let a = &claim.assignment;
        let map = gbely_world::parse_map_file(&claim.map)
            .map_err(|e| Failure::Refused(format!("the server's map cannot be read: {e}")))?;
        let map = Arc::new(map);
        let file = files.join(format!("submission-{}.py", a.job.submission));
        if let Err(e) = self.client.download(a, &file) {
            let _ = self.client.release(a);
            return Err(e);
        }
        // The lease, renewed while the job runs; losing it (or the worker closing) stops it.
        let stop = Arc::new(AtomicBool::new(false));
        let lost: Arc<Mutex<Option<String>>> = Arc::default();
        let ended = Arc::new(AtomicBool::new(false));
        let renewer = {
            let (client, a, stop, lost, ended, closing) = (
                self.client.clone(),
                a.clone(),
                Arc::clone(&stop),
                Arc::clone(&lost),
                Arc::clone(&ended),
                Arc::clone(&self.closing),
            );
            std::thread::spawn(move || {
                let every = Duration::from_millis(a.lease_seconds.max(1) * 1000 / 3);
                let mut last = Instant::now();
                while !ended.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    if closing.load(Ordering::Relaxed) {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if last.elapsed() >= every {
                        last = Instant::now();
                        // A passing trouble is tried again at the next beat, within the lease.
                        if let Err(Failure::Lost(why) | Failure::Refused(why)) = client.heartbeat(&a, None) {
                            *lost.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
            })
        };
        let mark = |state| {
            if let Err(Failure::Lost(why) | Failure::Refused(why)) = self.client.heartbeat(a, Some(state)) {
                *lost.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                stop.store(true, Ordering::Relaxed);
            }
        };
        let verdict = gbely_engine::runner::interrupt::within(Some(Arc::clone(&stop)), || {
            play(a, &map, &file, dir, &self.options.python, &mark)
        });
        // The lease is renewed while the verdict is sent, too (its tries may take a while).
        let sent = match (lost.lock().unwrap_or_else(|e| e.into_inner()).take(), &verdict) {
            (Some(why), _) => Err(Failure::Lost(format!("stopped, nothing sent: {why}"))),
            (None, Some(verdict)) => self.send(a, dir, verdict),
            (None, None) => Ok(()),
        };
        ended.store(true, Ordering::Relaxed);
        let _ = renewer.join();
        sent?;
        let Some(verdict) = verdict else {
            // Stopped with the worker: the job goes back to the queue.
            let _ = self.client.release(a);
            return Ok("stopped; the job is back in the server's queue".into());
        };
        Ok(match &verdict {
            Verdict::Judged { outcome, reason, .. } => match outcome.share {
                Some(share) => format!("judged: {share:.2} % of the map"),
                None => format!("judged: {reason}"),
            },
            Verdict::CheckFailed { reason, .. } => format!("the check failed: {reason}"),
            Verdict::Error { reason } => format!("the judge's error: {reason}"),
        })
    }

    /// Sends the job's files, then its verdict: each request tried again on a passing trouble
    /// (the network, the server's own), up to 5 times over about a minute and a half, the lease
    /// renewed meanwhile — a judged match is not lost to a moment's outage.
    fn send(&self, a: &Assignment, dir: &Path, verdict: &Verdict) -> Result<(), Failure> {
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

    fn send_once(&self, a: &Assignment, dir: &Path, verdict: &Verdict) -> Result<(), Failure> {
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
