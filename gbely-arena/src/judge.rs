//! The judge: takes a submission's job from the database's queue, checks the file as `gbely
//! check` does, plays the leaderboard's match in the sandbox with the judge's limits (SPEC §8:
//! the 2 s round, violations, restarts, disqualification at the fourth), keeps the replay and the
//! agent's log in the data folder and ends the job with its result — then e-mails the
//! participant a link to the status page.
//!
//! The same loop runs in the server's process (`judge.workers`) and in `gbely arena worker`
//! processes (on this or another machine sharing the data folder and the database). While it
//! judges, a thread renews the job's lease; a worker that loses it (its lease lapsed and another
//! worker took the job) stops its match and writes nothing.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::config::Config;
use super::i18n::Lang;
use super::mail::Mailer;
use super::store::{AnswerTimes, Job, Outcome, Store, Submission, SubmissionState, Verdict};
use gbely_engine::app::check::{check_agent, TestMatch};
use gbely_engine::app::requests::MatchSettings;
use gbely_engine::app::runs::agent_spec::AgentSpec;
use gbely_engine::app::service::{MatchPlan, Recording, Seat};

/// What a judge needs.
#[derive(Clone, Debug)]
pub struct Judging {
    pub config: Arc<Config>,
    pub store: Store,
    pub mailer: Mailer,
    pub rt: tokio::runtime::Handle,
    /// The interpreter of agent files (resolved).
    pub python: String,
    pub closing: Arc<AtomicBool>,
    /// This worker's name in the jobs it holds (set by [`Judging::spawn`]).
    pub worker: String,
    /// The leaderboard's map and its map file (what a worker over HTTP receives), made once
    /// (shared by the judges it spawns, and the server's HTTP API).
    pub leaderboard_map: Arc<std::sync::OnceLock<LeaderboardMap>>,
}

/// The leaderboard's map, and it written as a map file.
pub type LeaderboardMap = (Arc<gbely_world::Map>, Arc<str>);

/// Unix seconds now (leases: the machine's clock, not the competition's).
pub fn unix_now() -> i64 {
    jiff::Timestamp::now().as_second()
}

impl Judging {
    /// The leaderboard's map and its file, made once it could be (a map file that cannot be
    /// read now may be mended: tried again at the next call). A generated map takes a moment:
    /// call it off the async threads.
    pub fn leaderboard_map(&self) -> Result<LeaderboardMap, String> {
        if let Some(made) = self.leaderboard_map.get() {
            return Ok(made.clone());
        }
        let m =
            gbely_engine::app::runs::maps::load_map(&self.config.leaderboard.map, None).map_err(|e| e.to_string())?;
        let file = gbely_world::write_map_file(&m);
        Ok(self.leaderboard_map.get_or_init(|| (Arc::new(m), Arc::from(file))).clone())
    }

    /// Starts `n` judges like this one, each on a thread of its own and named
    /// `HOST:ROLE:PID:K` in the jobs it holds.
    pub fn spawn(&self, n: usize, role: &str) -> std::io::Result<Vec<std::thread::JoinHandle<()>>> {
        (0..n)
            .map(|k| {
                let mut j = self.clone();
                j.worker = format!("{}:{role}:{}:{k}", hostname(), std::process::id());
                std::thread::Builder::new().name(format!("gbely-judge-{k}")).spawn(move || j.run())
            })
            .collect()
    }

    /// Judges jobs until `closing`.
    pub fn run(&self) {
        while !self.closing.load(Ordering::Relaxed) {
            let lease = self.config.judge.lease_seconds as i64;
            match self.rt.block_on(self.store.claim(&self.worker, 0, unix_now(), lease)) {
                Ok(Some(job)) => self.judge(&job),
                Ok(None) => std::thread::sleep(Duration::from_millis(400)),
                Err(e) => {
                    eprintln!("gbely arena: {}: the queue: {e}", self.worker);
                    std::thread::sleep(Duration::from_secs(2));
                }
            }
        }
    }

    fn judge(&self, job: &Job) {
        let sub = match self.rt.block_on(self.store.submission(job.submission)) {
            Ok(Some(s)) => s,
            Ok(None) => return,
            Err(e) => {
                eprintln!("gbely arena: {}: submission {}: {e}", self.worker, job.submission);
                return;
            }
        };
        // The lease is renewed while the job runs; losing it (or the server closing) stops it.
        let lease = self.config.judge.lease_seconds;
        let renewer = {
            let (store, rt, job) = (self.store.clone(), self.rt.clone(), job.clone());
            Renewer::start(lease, Arc::clone(&self.closing), move || {
                match rt.block_on(store.renew(&job, unix_now() + lease as i64)) {
                    Ok(false) => Err("its lease lapsed: another judge has it".into()),
                    // A database trouble is tried again at the next beat, within the lease.
                    Ok(true) | Err(_) => Ok(()),
                }
            })
        };
        let verdict = gbely_engine::runner::interrupt::within(Some(renewer.stop()), || self.verdict(job, &sub));
        let lost = renewer.end();
        if let Some(why) = &lost {
            eprintln!("gbely arena: {}: submission {}: {why}; its judging stopped", self.worker, sub.id);
        }
        let Some(verdict) = verdict else {
            if lost.is_none() {
                // Stopped with the server: the job goes back to the queue for the next start.
                let _ = self.rt.block_on(self.store.release(job));
            }
            return;
        };
        if let Err(e) = self.conclude(job, &sub, &verdict) {
            eprintln!("gbely arena: {}: submission {}: the result: {e}", self.worker, sub.id);
        }
    }

    /// Ends `job` with its verdict (whoever judged it: this process or a worker over HTTP): the
    /// result kept, the submission's other attempts' folders removed, the participant e-mailed.
    /// `Ok(false)`, and nothing written: the job is no longer this attempt's (its lease lapsed and
    /// another judge took it: a late result is dropped).
    pub fn conclude(&self, job: &Job, sub: &Submission, verdict: &Verdict) -> Result<bool, sqlx::Error> {
        if !self.rt.block_on(self.store.finish(job, verdict, unix_now()))? {
            return Ok(false);
        }
        self.forget_other_attempts(sub, job);
        let again = self.rt.block_on(self.store.judged_before(job)).unwrap_or(false);
        self.tell(sub, verdict, again);
        Ok(true)
    }

    /// Checks and plays a submission from the data folder; `None` when stopped before its end.
    fn verdict(&self, job: &Job, sub: &Submission) -> Option<Verdict> {
        let assignment = Assignment::new(&self.config, job, sub);
        let map = match self.leaderboard_map() {
            Ok((map, _)) => map,
            Err(e) => return Some(Verdict::Error { reason: Trouble::Map.said(Lang::En, &e) }),
        };
        let dir = self.config.data.join(assignment.folder());
        let file = submission_file(&self.config.data, sub);
        let mark = |state| {
            let _ = self.rt.block_on(self.store.set_state(sub.id, state));
        };
        play(&assignment, &map, &file, &dir, &self.python, &mark)
    }

    /// Removes the folders of this submission's other attempts (killed, lost, or an earlier
    /// judging that a re-judging replaced): an upload keeps one match's replay and log on disk.
    fn forget_other_attempts(&self, sub: &Submission, job: &Job) {
        let judging = self.config.data.join("judging");
        let mine = format!("{}-{}", sub.id, job.attempt);
        let prefix = format!("{}-", sub.id);
        let Ok(entries) = std::fs::read_dir(&judging) else { return };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let attempt = name.strip_prefix(&prefix).filter(|a| a.bytes().all(|b| b.is_ascii_digit()) && !a.is_empty());
            if attempt.is_some() && name != mine {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    /// The e-mail with the result and the status page's link; `again`: a re-judging's, which
    /// says it is one (its result replaces the one e-mailed before).
    fn tell(&self, sub: &Submission, verdict: &Verdict, again: bool) {
        // In the language the participant last used on the site, else the competition's.
        let stored = self.rt.block_on(self.store.language(&sub.email)).ok().flatten();
        let l = stored.as_deref().and_then(Lang::parse).unwrap_or(self.config.language);
        let link = format!("{}/me/{}", self.config.public_url, sub.id);
        let what = match verdict {
            Verdict::Judged { outcome, reason, .. } => match outcome.share {
                Some(share) => tr!(
                    l,
                    "mail-scored",
                    share = l.decimal(share, 2),
                    tiebreak = outcome.tiebreak.map_or("-".into(), |t| t.to_string()),
                    violations = outcome.violations
                ),
                // "disqualified in round 13: …"
                None => tr!(l, "mail-disqualified", reason = reason_in(l, reason)),
            },
            Verdict::CheckFailed { reason, check } => {
                tr!(l, "mail-check-failed", reason = failed_check(l, reason, check))
            }
            Verdict::Error { reason } => tr!(l, "mail-error", reason = reason_in(l, reason)),
        };
        let name = self.config.name.as_str();
        let (subject, again) = if again {
            (
                tr!(l, "mail-result-subject-again", name = name, id = sub.id),
                format!("{}\n\n", tr!(l, "mail-result-again")),
            )
        } else {
            (tr!(l, "mail-result-subject", name = name, id = sub.id), String::new())
        };
        let body = tr!(
            l,
            "mail-result-body",
            file = sub.file_name.as_str(),
            agent = sub.agent_name.as_str(),
            name = name,
            what = what,
            again = again,
            link = link
        );
        if let Err(e) = self.mailer.send(&sub.email, &subject, &body) {
            eprintln!("gbely arena: the result e-mail of submission {}: {e}", sub.id);
        }
    }
}

/// A job as any judge plays it: the submission, the check's test match and the leaderboard's
/// match as the server's configuration sets them. A judge of the server's database makes it from
/// the configuration; a judge over HTTP receives it (with the map) when it claims the job.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assignment {
    pub job: Job,
    /// The file's name as uploaded (reports show it, never the judge's own path).
    pub file_name: String,
    /// The agent's seat name in the replay (`AGENT_NAME AGENT_VERSION`, or the file's stem).
    pub agent_name: String,
    /// Seconds the job is held without a renewal.
    pub lease_seconds: u64,
    /// The leaderboard's opponent.
    pub opponent: AgentSpec,
    /// The leaderboard's match (its interpreter is the judge's machine's own: not sent).
    pub settings: MatchSettings,
    /// Rounds of the check's test match.
    pub check_rounds: u32,
}

impl Assignment {
    pub fn new(config: &Config, job: &Job, sub: &Submission) -> Assignment {
        let mut settings = config.judge.settings(config.leaderboard.rounds);
        settings.python = None;
        Assignment {
            job: job.clone(),
            file_name: sub.file_name.clone(),
            agent_name: sub.agent_name.clone(),
            lease_seconds: config.judge.lease_seconds,
            opponent: config.leaderboard.opponent.clone(),
            settings,
            check_rounds: config.judge.check_rounds,
        }
    }

    /// The folder of this attempt's files in the server's data folder: `judging/ID-ATTEMPT`.
    pub fn folder(&self) -> String {
        self.job.folder()
    }

    /// The check's test match (its time limit is the judge's of the rules, as `gbely check`'s).
    pub fn test_match(&self) -> TestMatch {
        TestMatch { rounds: self.check_rounds, sandbox: self.settings.sandbox }
    }
}

/// A thread that renews a job's lease every third of it while the job is judged (the server's
/// judges through the database, a worker over HTTP): `renew` answers whether the lease is still
/// this judge's (`Err(why)`: lost). Losing it, or `closing`, raises the stop flag the judging
/// watches.
#[derive(Debug)]
pub struct Renewer {
    stop: Arc<AtomicBool>,
    lost: Arc<std::sync::Mutex<Option<String>>>,
    ended: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Renewer {
    pub fn start(
        lease_seconds: u64,
        closing: Arc<AtomicBool>,
        mut renew: impl FnMut() -> Result<(), String> + Send + 'static,
    ) -> Renewer {
        let stop = Arc::new(AtomicBool::new(false));
        let lost: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
        let ended = Arc::new(AtomicBool::new(false));
        let thread = {
            let (stop, lost, ended) = (Arc::clone(&stop), Arc::clone(&lost), Arc::clone(&ended));
            std::thread::spawn(move || {
                let every = Duration::from_millis(lease_seconds.max(1) * 1000 / 3);
                let mut last = std::time::Instant::now();
                while !ended.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    if closing.load(Ordering::Relaxed) {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if last.elapsed() >= every {
                        last = std::time::Instant::now();
                        if let Err(why) = renew() {
                            *lost.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
            })
        };
        Renewer { stop, lost, ended, thread }
    }

    /// The flag that stops the judging.
    pub fn stop(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// The lease is lost (found by another call than the renewal's): the judging stops.
    pub fn lose(&self, why: String) {
        *self.lost.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Why the lease was lost, if it was, taken (renewing goes on).
    pub fn take_lost(&self) -> Option<String> {
        self.lost.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Stops renewing: why the lease was lost, if it was.
    pub fn end(self) -> Option<String> {
        let Renewer { lost, ended, thread, .. } = self;
        ended.store(true, Ordering::Relaxed);
        let _ = thread.join();
        let why = lost.lock().unwrap_or_else(|e| e.into_inner()).take();
        why
    }
}

/// Checks the submission's `file` as `gbely check` does and plays the leaderboard's match, in
/// `dir` (the server's `data/judging/ID-ATTEMPT`, or a worker's own folder): the verdict, whose
/// files are named as the server keeps them (`judging/ID-ATTEMPT/replay.json.gz`, the agent's
/// log, `check.log` of a failed check); `None` when stopped before its end. `mark` hears the
/// submission's state as the judging moves on (checking, then running).
pub fn play(
    a: &Assignment,
    map: &Arc<gbely_world::Map>,
    file: &Path,
    dir: &Path,
    python: &str,
    mark: &dyn Fn(SubmissionState),
) -> Option<Verdict> {
    let rel = a.folder();
    if let Err(e) = std::fs::create_dir_all(dir) {
        return Some(Verdict::Error { reason: Trouble::Folder.said(Lang::En, &format!("{}: {e}", dir.display())) });
    }
    mark(SubmissionState::Checking);
    let report = match check_agent(file, python, a.test_match(), dir) {
        Ok(r) => r,
        // The file could not even be read as Python (its inspection died on it): the file's
        // fault, not the judge's.
        Err(e @ gbely_engine::app::runs::RunError::Inspect { .. }) => {
            let reason = Trouble::NotPython.said(Lang::En, &e.to_string());
            let said = json!({"problems": [{"code": "not-python", "args": {"detail": e.to_string()}}]});
            let check = json!({"ok": false, "file": a.file_name, "problems": [reason], "said": said}).to_string();
            return Some(Verdict::CheckFailed { reason, check });
        }
        Err(e) => return Some(Verdict::Error { reason: Trouble::CheckDidNotRun.said(Lang::En, &e.to_string()) }),
    };
    // The check's own run (its log beside the match's would double an upload's disk): its
    // report is kept in the database, its folder goes — but for a failed check its agent's
    // log stays (`check.log`: what the agent printed, the traceback of a crash), the only
    // account of why it failed.
    let kept_log = (!report.ok())
        .then(|| report.log())
        .flatten()
        .and_then(|log| std::fs::copy(log, dir.join(CHECK_LOG)).ok())
        .map(|_| format!("{rel}/{CHECK_LOG}"));
    if let Some(run) = &report.run_dir {
        let _ = std::fs::remove_dir_all(run);
    }
    if gbely_engine::runner::interrupt::requested() {
        return None;
    }
    let mut doc = report.to_json();
    if let Some(log) = kept_log {
        doc["log"] = json!(log);
    }
    // The participant's view: the file as they named it, no paths of the judge's machine.
    doc["file"] = json!(a.file_name);
    if let Some(notes) = doc["notes"].as_array_mut() {
        notes.retain(|n| !n.as_str().is_some_and(|n| n.starts_with("log: ")));
    }
    if let Some(notes) = doc["said"]["notes"].as_array_mut() {
        notes.retain(|n| n["code"] != "log");
    }
    let check = doc.to_string();
    if !report.ok() {
        let reason = report.problems.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join("; ");
        return Some(Verdict::CheckFailed { reason, check });
    }
    mark(SubmissionState::Running);
    let seats =
        vec![Seat::spec(AgentSpec::File(file.to_path_buf()), &a.agent_name), Seat::spec(a.opponent.clone(), "council")];
    let mut plan = MatchPlan::new(Arc::clone(map), seats);
    plan.rounds = a.settings.rounds;
    plan.limits = a.settings.limits();
    plan.python = python.to_string();
    plan.run_dir = Some(dir.join("match"));
    plan.recording = Recording::File(dir.join(REPLAY));
    let played = match gbely_engine::app::service::run(plan, &mut ()) {
        Ok(p) => p,
        Err(e) => return Some(Verdict::Error { reason: Trouble::MatchNotPlayed.said(Lang::En, &e.to_string()) }),
    };
    let rec = &played.record;
    if rec.interrupted() {
        return None;
    }
    let o = &rec.outcome[0];
    let kept =
        |p: &Path| p.strip_prefix(dir).map_or_else(|_| p.display().to_string(), |r| format!("{rel}/{}", r.display()));
    let reason = match o.disqualified {
        Some(round) => {
            let violation = rec.violations[0].last().map(|(_, kind, detail)| (kind.wire(), detail.as_str()));
            disqualification(Lang::En, round, violation)
        }
        None => String::new(),
    };
    let outcome = Outcome {
        submission: a.job.submission,
        share: o.score,
        cells: o.cells as i64,
        tiebreak: o.tiebreak_round.map(i64::from),
        violations: o.violations as i64,
        disqualified: o.disqualified.map(i64::from),
        council_fell: rec.council_fell.map(i64::from),
        rounds: rec.rounds_played() as i64,
        replay: played.replay.as_deref().map(kept).unwrap_or_default(),
        log: played.logs[0].as_deref().map(kept).unwrap_or_default(),
        judged: unix_now(),
        times: AnswerTimes { limit: a.settings.time_limit, slowest: rec.slowest[0].clone() },
    };
    Some(Verdict::Judged { outcome, reason, check })
}

/// The judged match's replay in an attempt's folder.
pub const REPLAY: &str = "replay.json.gz";
/// The agent's log of a failed check, in an attempt's folder.
pub const CHECK_LOG: &str = "check.log";

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_else(|_| "host".into())
}

/// A disqualification as the judge words it in `l`: its round, and the fourth violation (its
/// kind's code and the engine's words for it) when the record has it. Stored in English
/// (`reason`), and said again in the reader's language by [`reason_in`].
pub fn disqualification(l: Lang, round: u32, violation: Option<(&str, &str)>) -> String {
    match violation {
        Some((kind, detail)) => {
            tr!(l, "reason-disqualified-violation", round = round, kind = violation_kind(l, kind), detail = detail)
        }
        None => tr!(l, "reason-disqualified", round = round),
    }
}

/// A violation's kind (its code in replays: `timeout`, `crash`, `unreadable`) in `l`; English
/// writes the code itself, which `parse_disqualification` reads back.
pub fn violation_kind(l: Lang, kind: &str) -> String {
    match kind {
        "timeout" => tr!(l, "violation-timeout"),
        "crash" => tr!(l, "violation-crash"),
        "unreadable" => tr!(l, "violation-unreadable"),
        other => other.to_string(),
    }
}

/// Why a submission has no score, other than a disqualification or a failed check's problems:
/// a judge gave no verdict on its play, its file is not a program, or a newer upload superseded
/// it. Stored in English with its `detail` (the engine's own words for the cause, an upload's
/// number), said again in the reader's language by [`reason_in`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trouble {
    /// The leaderboard's map did not load.
    Map,
    /// The judge could not make its folder.
    Folder,
    /// The file could not even be read as Python (the submission's fault: a failed check).
    NotPython,
    /// The check could not run (no Python, no sandbox).
    CheckDidNotRun,
    /// The match could not be played.
    MatchNotPlayed,
    /// A newer upload (`detail`: its number) came before this one was judged.
    Superseded,
}

impl Trouble {
    pub const ALL: [Trouble; 6] = [
        Trouble::Map,
        Trouble::Folder,
        Trouble::NotPython,
        Trouble::CheckDidNotRun,
        Trouble::MatchNotPlayed,
        Trouble::Superseded,
    ];

    /// The trouble in `l`, its cause in the engine's words.
    pub fn said(self, l: Lang, detail: &str) -> String {
        match self {
            Trouble::Map => tr!(l, "reason-map", detail = detail),
            Trouble::Folder => tr!(l, "reason-folder", detail = detail),
            Trouble::NotPython => tr!(l, "reason-not-python", detail = detail),
            Trouble::CheckDidNotRun => tr!(l, "reason-check-did-not-run", detail = detail),
            Trouble::MatchNotPlayed => tr!(l, "reason-match-not-played", detail = detail),
            Trouble::Superseded => tr!(l, "reason-superseded", detail = detail),
        }
    }

    /// A reason [`Trouble::said`] wrote in English, read back whole: the trouble and its cause.
    fn parse(reason: &str) -> Option<(Trouble, &str)> {
        Trouble::ALL.into_iter().find_map(|t| {
            let marked = t.said(Lang::En, "\u{1}");
            let (before, after) = marked.split_once('\u{1}')?;
            let detail = reason.strip_prefix(before)?.strip_suffix(after)?;
            (t.said(Lang::En, detail) == reason).then_some((t, detail))
        })
    }
}

/// The kind (`timeout`, `crash`, `unreadable`) of the violation that disqualified a submission,
/// read from its reason as [`disqualification`] wrote it; `None` for any other reason.
pub fn disqualifying_kind(reason: &str) -> Option<String> {
    parse_disqualification(reason).and_then(|(_, violation)| violation).map(|(kind, _)| kind.to_string())
}

/// A reason [`disqualification`] wrote in English, read back whole: its round and violation.
fn parse_disqualification(reason: &str) -> Option<(u32, Option<(&str, &str)>)> {
    let rest = reason.strip_prefix("disqualified in round ")?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let round: u32 = rest[..digits].parse().ok()?;
    let violation = match &rest[digits..] {
        "" => None,
        more => {
            let inner = more.strip_prefix(": the fourth violation (")?.strip_suffix(')')?;
            Some(inner.split_once(": ")?)
        }
    };
    (disqualification(Lang::En, round, violation) == reason).then_some((round, violation))
}

/// A submission's stored reason in `l`: a disqualification (written by [`disqualification`] in
/// English) said again in `l`; any other reason (the check's problems, a judge's error: the
/// engine's words) as it is.
pub fn reason_in(l: Lang, reason: &str) -> String {
    // Only a reason read back whole: anything else is shown as stored.
    if let Some((round, violation)) = parse_disqualification(reason) {
        return disqualification(l, round, violation);
    }
    match Trouble::parse(reason) {
        Some((trouble, detail)) => trouble.said(l, detail),
        None => reason.to_string(),
    }
}

/// A line of the check's report (`{"code": …, "args": {…}}`, as `gbely_engine::app::check::Line`
/// keeps it) in `l`; `None` for a code this version does not know.
pub fn check_line(l: Lang, said: &Value) -> Option<String> {
    let args = &said["args"];
    let text = |k: &str| match &args[k] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let number = |k: &str| args[k].as_f64().unwrap_or(0.0);
    let yes = |k: &str| if args[k] == true { "yes" } else { "no" };
    Some(match said["code"].as_str()? {
        "not-python-file" => tr!(l, "check-not-python-file", file = text("file")),
        "too-big" => tr!(l, "check-too-big", bytes = number("bytes"), limit = number("limit")),
        "size" => tr!(l, "check-size", bytes = number("bytes"), limit = number("limit")),
        "does-not-parse" => tr!(l, "check-does-not-parse", error = text("error")),
        "name" => tr!(l, "check-name", name = text("name")),
        "game-version" => {
            tr!(l, "check-game-version", file = text("file"), version = text("version"), engine = text("engine"))
        }
        "no-decide" => tr!(l, "check-no-decide"),
        "other-branch" => {
            tr!(l, "check-other-branch", kind = text("kind"), line = text("line"), type = text("type"))
        }
        "decide-not-a-function" => {
            tr!(l, "check-decide-not-a-function", kind = text("kind"), line = text("line"), type = text("type"))
        }
        "decide-assigned" => tr!(l, "check-decide-assigned", line = text("line")),
        "foreign-imports" => tr!(l, "check-foreign-imports", modules = text("modules")),
        "optional-imports" => tr!(l, "check-optional-imports", modules = text("modules")),
        "cannot-at-judge" => tr!(
            l,
            "check-cannot-at-judge",
            imports = yes("imports"),
            name = text("name"),
            network = yes("network"),
            count = number("count"),
            lines = text("lines"),
            more = number("more")
        ),
        "dropped-lines" => tr!(l, "check-dropped-lines", count = number("count")),
        "violation" => {
            let kind = violation_kind(l, &text("kind"));
            tr!(l, "check-violation", round = number("round"), kind = kind, detail = text("detail"))
        }
        "disqualified" => tr!(l, "check-disqualified", round = number("round")),
        "violations" => tr!(l, "check-violations", count = number("count")),
        "test-match" => {
            let discards =
                args["discards"].as_array().into_iter().flatten().map(|d| {
                    format!("{} {}", d[1].as_u64().unwrap_or(0), discard_reason(l, d[0].as_str().unwrap_or("")))
                });
            tr!(
                l,
                "check-test-match",
                rounds = number("rounds"),
                cells = number("cells"),
                discarded = number("discarded"),
                discards = discards.collect::<Vec<_>>().join(", ")
            )
        }
        // How the sandbox holds an agent is the engine's technical words, left out here; why
        // there is none is said as the engine says it.
        "sandboxed" => tr!(l, "check-sandboxed"),
        "not-sandboxed" => tr!(l, "check-not-sandboxed", why = text("why")),
        "not-python" => Trouble::NotPython.said(l, &text("detail")),
        _ => return None,
    })
}

/// A discarded command's reason (its code in replays, `DiscardReason::code`) in `l`.
fn discard_reason(l: Lang, code: &str) -> String {
    match code {
        "not_an_object" => tr!(l, "discard-not_an_object"),
        "unknown_type" => tr!(l, "discard-unknown_type"),
        "missing_field" => tr!(l, "discard-missing_field"),
        "wrong_field_type" => tr!(l, "discard-wrong_field_type"),
        "unknown_cell" => tr!(l, "discard-unknown_cell"),
        "invalid_amount" => tr!(l, "discard-invalid_amount"),
        "source_not_owned" => tr!(l, "discard-source_not_owned"),
        "target_not_owned" => tr!(l, "discard-target_not_owned"),
        "not_adjacent" => tr!(l, "discard-not_adjacent"),
        "target_own_cell" => tr!(l, "discard-target_own_cell"),
        "target_finalist" => tr!(l, "discard-target_finalist"),
        "no_ready_units" => tr!(l, "discard-no_ready_units"),
        other => other.to_string(),
    }
}

/// The lines of a check's report under `key` (`problems`, `warnings`, `notes`) in `l`, from
/// their codes and values (`said`); a report without them (made before they were kept), or a line
/// of a code this version does not know, in the engine's words.
pub fn check_lines(l: Lang, report: &Value, key: &str) -> Vec<String> {
    let texts: Vec<String> = report[key]
        .as_array()
        .map_or(Vec::new(), |l| l.iter().filter_map(|x| x.as_str()).map(str::to_string).collect());
    match report["said"][key].as_array() {
        Some(said) if said.len() == texts.len() => {
            said.iter().zip(texts).map(|(s, text)| check_line(l, s).unwrap_or(text)).collect()
        }
        _ => texts,
    }
}

/// Why a submission has no score, in `l`: a failed check's problems from its report, any other
/// reason by [`reason_in`].
pub fn reason_of(l: Lang, sub: &Submission) -> String {
    if sub.failed_its_check() {
        failed_check(l, &sub.reason, &sub.check)
    } else {
        reason_in(l, &sub.reason)
    }
}

/// A failed check's reason in `l`: its problems from `check` (the report), else as
/// [`reason_in`] says `reason`.
fn failed_check(l: Lang, reason: &str, check: &str) -> String {
    let problems = serde_json::from_str::<Value>(check).map(|v| check_lines(l, &v, "problems")).unwrap_or_default();
    if problems.is_empty() {
        reason_in(l, reason)
    } else {
        problems.join("; ")
    }
}

/// Where a submission's files lie.
pub fn submission_file(data: &Path, sub: &Submission) -> PathBuf {
    data.join("submissions").join(&sub.stored)
}

#[cfg(test)]
mod tests {
    use super::{disqualification, disqualifying_kind, failed_check, reason_in, Trouble};
    use crate::i18n::Lang;

    #[test]
    fn a_disqualification_is_stored_in_english_and_read_in_either_language() {
        let stored = disqualification(Lang::En, 13, Some(("unreadable", "the answer is not JSON: x: y")));
        assert_eq!(stored, "disqualified in round 13: the fourth violation (unreadable: the answer is not JSON: x: y)");
        assert_eq!(reason_in(Lang::En, &stored), stored);
        assert_eq!(
            reason_in(Lang::Sk, &stored),
            "vyradené v 13. kole: štvrté porušenie (nečitateľná odpoveď: the answer is not JSON: x: y)"
        );
        assert_eq!(reason_in(Lang::Sk, "disqualified in round 7"), "vyradené v 7. kole");
        // The kind the organisers' re-judging of a slow worker's timeouts looks for.
        assert_eq!(disqualifying_kind(&stored).as_deref(), Some("unreadable"));
        let timeout = disqualification(Lang::En, 13, Some(("timeout", "no answer within 2.0 s")));
        assert_eq!(disqualifying_kind(&timeout).as_deref(), Some("timeout"));
        assert_eq!(disqualifying_kind("disqualified in round 7"), None);
        assert_eq!(disqualifying_kind("the file cannot be read as Python: (timeout: x)"), None);
        // A violation's kind is said in the reader's language; its detail is the engine's.
        assert_eq!(
            reason_in(Lang::Sk, &timeout),
            "vyradené v 13. kole: štvrté porušenie (prekročený čas: no answer within 2.0 s)"
        );
        // A judge's trouble: its words translated, the cause (the engine's words) as it is.
        let trouble = Trouble::NotPython.said(Lang::En, "invalid syntax (line 3): x: y");
        assert_eq!(trouble, "the file cannot be read as Python: invalid syntax (line 3): x: y");
        assert_eq!(reason_in(Lang::Sk, &trouble), "súbor sa nedá prečítať ako Python: invalid syntax (line 3): x: y");
        assert_eq!(reason_in(Lang::En, &trouble), trouble);
        let folder = Trouble::Folder.said(Lang::En, "/data/judging/3-1: Permission denied");
        assert_eq!(Trouble::parse(&folder), Some((Trouble::Folder, "/data/judging/3-1: Permission denied")));
        let superseded = Trouble::Superseded.said(Lang::En, "12");
        assert_eq!(superseded, "superseded by upload 12 before it was judged (the last upload counts)");
        assert_eq!(
            reason_in(Lang::Sk, &superseded),
            "nahradené riešením 12 skôr, než sa ohodnotilo (platí posledné nahratie)"
        );
        for t in Trouble::ALL {
            assert_eq!(Trouble::parse(&t.said(Lang::En, "")), Some((t, "")), "{t:?}");
        }
        // A failed check's reason: its problems from the report, in the reader's language.
        let report = serde_json::json!({"problems": ["imports outside the standard library (the judge will not have them): numpy"],
            "said": {"problems": [{"code": "foreign-imports", "args": {"modules": "numpy"}}]}})
        .to_string();
        let reason = "imports outside the standard library (the judge will not have them): numpy";
        assert_eq!(
            failed_check(Lang::Sk, reason, &report),
            "importy mimo štandardnej knižnice (hodnotiteľ ich mať nebude): numpy"
        );
        assert_eq!(failed_check(Lang::En, reason, &report), reason);
        // A report of before (no codes): its problems as the engine wrote them; none: the reason.
        assert_eq!(failed_check(Lang::Sk, reason, r#"{"problems": ["x"]}"#), "x");
        assert_eq!(failed_check(Lang::Sk, reason, ""), reason);
        // Anything else (a failed check's problems: the engine's words) is shown as stored.
        for other in ["the file defines no top-level function decide(stav)", "disqualified in round x", ""] {
            assert_eq!(reason_in(Lang::Sk, other), other);
        }
    }
}

#[cfg(test)]
mod check_tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use serde_json::{json, Value};

    use super::{check_line, Renewer};
    use crate::i18n::Lang;
    use gbely_engine::app::check::{check_agent, TestMatch, LINE_CODES};
    use gbely_engine::runner::sandbox::SandboxMode;

    /// Values for every variable a check's line may have.
    fn every_value() -> Value {
        json!({"file": "a.txt", "bytes": 600000, "limit": 524288, "error": "invalid syntax (line 2)", "name": "Mravec",
            "version": "1", "engine": "2", "kind": "value", "line": 3, "type": "Constant", "modules": "numpy",
            "imports": true, "network": true, "count": 2, "lines": "1, 4", "more": 0, "round": 3, "detail": "x",
            "rounds": 5, "cells": 9, "discarded": 2, "discards": [["unknown_cell", 2]], "why": "no sandbox",
            "how": "bwrap", "path": "x"})
    }

    /// Every line the engine's check can write has a wording in each language that formats (a
    /// message that fails to is shown as its id); the log's line is taken out of the report
    /// before it is kept.
    #[test]
    fn every_line_of_the_check_is_said_in_every_language() {
        for code in LINE_CODES.iter().filter(|c| **c != "log") {
            for l in Lang::ALL {
                let said = check_line(l, &json!({"code": code, "args": every_value()})).expect("a known code");
                assert!(!said.is_empty() && !said.starts_with("check-"), "{code} in {l:?}: {said}");
            }
        }
        assert_eq!(check_line(Lang::Sk, &json!({"code": "new-in-a-later-engine", "args": {}})), None);
    }

    #[test]
    fn the_checks_lines_in_slovak() {
        let said = |code: &str, args: Value| check_line(Lang::Sk, &json!({"code": code, "args": args}));
        assert_eq!(
            said(
                "test-match",
                json!({"rounds": 40, "cells": 3, "discarded": 5,
                "discards": [["source_not_owned", 3], ["not_adjacent", 2]]})
            )
            .as_deref(),
            Some(
                "skúšobný zápas: 40 kôl proti Zastupiteľstvu na referenčnej mape; na konci 3 políčka; 5 zahodených \
                 príkazov: 3 zdrojové políčko nie je tvoje, 2 cieľ nie je susedný"
            )
        );
        assert_eq!(
            said(
                "cannot-at-judge",
                json!({"imports": true, "name": "socket", "network": true, "count": 7,
                "lines": "1, 2, 3, 4, 5", "more": 2})
            )
            .as_deref(),
            Some("importuje socket (riadky 1, 2, 3, 4, 5 a ďalších 2): hodnotiteľ nemá sieť")
        );
        assert_eq!(
            said(
                "cannot-at-judge",
                json!({"imports": false, "name": "os.system", "network": false, "count": 1,
                "lines": "4", "more": 0})
            )
            .as_deref(),
            Some("volá os.system (riadok 4): hodnotiteľ nedovolí ďalšie procesy")
        );
        assert_eq!(
            said("violation", json!({"round": 2, "kind": "unreadable", "detail": "the answer is not JSON"})).as_deref(),
            Some("porušenie v 2. kole: nečitateľná odpoveď — the answer is not JSON")
        );
        assert_eq!(
            said("other-branch", json!({"kind": "undefined", "line": null, "type": null})).as_deref(),
            Some("v inej vetve: decide nie je vôbec definovaná")
        );
    }

    /// The arena's English is the engine's, line for line, on real reports of `check_agent`
    /// (Python needed, no sandbox): but where the arena leaves out how the sandbox holds an
    /// agent (`sandboxed`) and the engine's advice to one without (`not-sandboxed`), and the
    /// log's line it takes out of the report.
    #[test]
    fn the_arenas_english_is_the_engines() {
        let dir = std::env::temp_dir().join(format!("gbely-arena-check-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files = [
            ("plain.txt", "print(1)\n"),
            ("broken.py", "def decide(stav)\n    return 1\n"),
            ("value.py", "decide = 3\n"),
            ("foreign.py", "import numpy\n\ndef decide(stav):\n    return {'prikazy': []}\n"),
            (
                "busy.py",
                "import socket\nimport subprocess\ntry:\n    import numpy\nexcept ImportError:\n    pass\n\
                 AGENT_NAME = 'Busy'\nGAME_VERSION = 0\n\
                 def decide(stav):\n    return {'prikazy': [{'typ': 'MOVE', 'z': 999999, 'na': 1, 'pocet': 1}]}\n\
                 if socket:\n    decide = 3\n",
            ),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for (name, source) in files {
            let path = dir.join(name);
            std::fs::write(&path, source).unwrap();
            let test = TestMatch { rounds: 3, sandbox: SandboxMode::Off };
            let report = check_agent(&path, "python3", test, &dir).expect("the check runs").to_json();
            for key in ["problems", "warnings", "notes"] {
                let texts = report[key].as_array().unwrap();
                let said = report["said"][key].as_array().unwrap();
                assert_eq!(texts.len(), said.len(), "{name} {key}");
                for (text, said) in texts.iter().zip(said) {
                    let code = said["code"].as_str().unwrap();
                    seen.insert(code.to_string());
                    if code == "sandboxed" || code == "log" {
                        continue;
                    }
                    if code == "not-sandboxed" {
                        // Why, as the engine says it; not its advice to one who plays on their
                        // own machine (agents there read its files).
                        let why = said["args"]["why"].as_str().unwrap();
                        assert!(text.as_str().unwrap().contains(why), "{text}");
                        let ours = check_line(Lang::En, said).unwrap();
                        assert_eq!(ours, format!("the test match ran without the judge's sandbox: {why}"));
                        continue;
                    }
                    assert_eq!(check_line(Lang::En, said).as_deref(), text.as_str(), "{name}: {said}");
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        for code in [
            "not-python-file",
            "does-not-parse",
            "decide-not-a-function",
            "foreign-imports",
            "other-branch",
            "optional-imports",
            "cannot-at-judge",
            "game-version",
            "name",
            "size",
            "test-match",
            "not-sandboxed",
        ] {
            assert!(seen.contains(code), "no fixture made a `{code}` line: {seen:?}");
        }
    }

    /// The renewer raises the stop flag when a renewal says the lease is lost, and says why;
    /// and when the server closes.
    #[test]
    fn the_renewer_stops_the_judging_when_the_lease_is_lost_or_the_server_closes() {
        let closing = Arc::new(AtomicBool::new(false));
        let renewer = Renewer::start(1, Arc::clone(&closing), || Err("another judge has it".into()));
        let stop = renewer.stop();
        let start = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            assert!(start.elapsed() < Duration::from_secs(5), "the stop flag was not raised");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(renewer.end().as_deref(), Some("another judge has it"));

        let renewer = Renewer::start(60, Arc::clone(&closing), || Ok(()));
        let stop = renewer.stop();
        closing.store(true, Ordering::Relaxed);
        let start = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            assert!(start.elapsed() < Duration::from_secs(5), "the stop flag was not raised");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(renewer.end(), None);
    }
}
