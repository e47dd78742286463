//! A league's matches played beyond this machine: each match as a self-contained [`MatchJob`]
//! (the agents' source and the map's text travel with it, so a worker needs only gbely), and the
//! Ray backend that hands jobs to a Ray cluster and takes their results back.
//!
//! The Ray side is Python (`gbely._ray_league`, in the `gbely` package, which a Ray worker has
//! anyway): the engine starts it as `PYTHON -m gbely._ray_league ADDRESS JOBS`, writes one job a
//! line on its stdin as the tournament core's scheduler hands it a match ([`RayArena`] is an
//! [`Arena`]), and reads one line a finished match from its stdout:
//!
//! ```text
//! ← {"ready": {"cpus": 8.0}}                  (connected to the cluster)
//! → {"id": 7, "job": {…MatchJob…}}             (as matches are scheduled; end of input: done)
//! ← {"id": 7, "row": {…MatchRow…}}            (in the order matches finish)
//! ← {"id": 9, "error": "…"}
//! ```
//!
//! Each job is played on its worker by [`play_job`] (`gbely._gbely.league_match`), the same code
//! as a local league's matches, so results are identical to the local backend: rows are stored
//! by key and standings computed in key order, whatever order they arrive in.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::play::{play_one, Backend, LeagueConfig, LeagueMap, MatchRow};
use super::schedule::Pairing;
use crate::app::entries::{Entry, LeagueError};
use crate::app::runs::agent_spec::AgentSpec;
use crate::runner::interrupt;
use crate::runner::sandbox::SandboxMode;
use crate::tournament::{Arena, Match, Outcome};

/// An entry as a worker needs it: who it is (its key in the results) and what it runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobEntry {
    pub id: String,
    pub name: String,
    pub hash: String,
    /// The agent as given (the file's path on the head).
    pub spec: AgentSpec,
    /// An agent file: its file name and text, written into the worker's folder.
    pub file: Option<(String, String)>,
}

/// One match, self-contained.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchJob {
    pub seats: [JobEntry; 2],
    /// The map as named in the league, and as a map file.
    pub map_spec: String,
    pub map_text: String,
    pub game: u32,
    pub rounds: u32,
    /// Seconds or `null` (no limit).
    pub time_limit: crate::limits::TimeLimit,
    /// Bytes or `null` (no limit).
    pub memory_limit: crate::limits::MemoryLimit,
    /// Cores the match needs: one per agent process (at least one).
    pub cpus: u32,
    /// The agents' sandbox on the worker (`auto`, `require`, `off`); older jobs lack it: `auto`.
    #[serde(default)]
    pub sandbox: SandboxMode,
}

fn job_entry(e: &Entry) -> Result<JobEntry, LeagueError> {
    let file = match e.spec.file() {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|error| LeagueError::Agent { spec: e.spec.to_string(), error })?;
            let name = path.file_name().map_or("agent.py".into(), |n| n.to_string_lossy().into_owned());
            Some((name, text))
        }
        None => None,
    };
    Ok(JobEntry { id: e.id.clone(), name: e.name.clone(), hash: e.hash.clone(), spec: e.spec.clone(), file })
}

/// The job of one pairing.
pub fn match_job(
    p: &Pairing,
    entries: &[Entry],
    maps: &[LeagueMap],
    config: &LeagueConfig,
) -> Result<MatchJob, LeagueError> {
    let seats = [job_entry(&entries[p.seat0])?, job_entry(&entries[p.seat1])?];
    let processes = seats.iter().filter(|s| s.spec.is_process()).count() as u32;
    let lm = &maps[p.map];
    Ok(MatchJob {
        seats,
        map_spec: lm.spec.clone(),
        map_text: gbely_world::write_map_file(&lm.map),
        game: p.game,
        rounds: config.rounds,
        time_limit: config.time_limit,
        memory_limit: config.memory_limit,
        cpus: processes.max(1),
        sandbox: config.sandbox,
    })
}

/// Plays a job on this machine: agent files are written into `dir`, the agents' logs go there
/// too, and Python agents run with `python`. The row is what the head would have stored had it
/// played the match itself.
pub fn play_job(job: &MatchJob, python: &str, dir: &Path) -> Result<MatchRow, LeagueError> {
    let io = |error: std::io::Error| LeagueError::Agent { spec: dir.display().to_string(), error };
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut entries = Vec::with_capacity(2);
    for (k, s) in job.seats.iter().enumerate() {
        let spec = match &s.file {
            Some((name, text)) => {
                let seat_dir = dir.join(format!("agent{k}"));
                std::fs::create_dir_all(&seat_dir).map_err(io)?;
                let path = seat_dir.join(name);
                std::fs::write(&path, text).map_err(io)?;
                AgentSpec::File(path)
            }
            None => s.spec.clone(),
        };
        entries.push(Entry { id: s.id.clone(), name: s.name.clone(), spec, hash: s.hash.clone() });
    }
    let map = gbely_world::parse_map_file(&job.map_text)
        .map_err(|e| LeagueError::Remote(format!("the job's map `{}` does not read: {e}", job.map_spec)))?;
    let lm = LeagueMap { spec: job.map_spec.clone(), map: std::sync::Arc::new(map) };
    let config = LeagueConfig {
        rounds: job.rounds,
        time_limit: job.time_limit,
        memory_limit: job.memory_limit,
        python: python.to_string(),
        games: 1,
        jobs: 1,
        dir: dir.to_path_buf(),
        backend: Backend::Local,
        replays: None,
        cores: None,
        sandbox: job.sandbox,
    };
    play_one(&entries[0], &entries[1], &lm, job.game, &config, &dir.join("run"))
}

/// What the driver's reader thread hands a waiting match.
type Answer = Result<MatchRow, String>;

/// A league's matches on a Ray cluster, through the driver `python -m gbely._ray_league`: each
/// [`Arena::play`] writes its match's job and waits for its row. Every job is made (its agent
/// files read) before the first match.
pub struct RayArena {
    jobs: Vec<MatchJob>,
    child: Mutex<Child>,
    stdin: Mutex<Option<ChildStdin>>,
    waiting: Arc<Mutex<HashMap<usize, mpsc::Sender<Answer>>>>,
    /// Why the driver's output stopped making sense (then every waiting match fails with it).
    failure: Arc<Mutex<Option<String>>>,
    in_flight: usize,
    python: String,
}

impl std::fmt::Debug for RayArena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RayArena").field("jobs", &self.jobs.len()).field("in_flight", &self.in_flight).finish()
    }
}

impl RayArena {
    /// Starts the driver for the cluster at `address` (`auto`, `HOST:PORT`, `ray://HOST:PORT`, or
    /// `local` for a Ray instance of this process's own) and waits until it is connected. Matches
    /// run `in_flight` at a time, 0: as many as the cluster has CPUs ([`RayArena::in_flight`]).
    pub fn start(python: &str, address: &str, in_flight: usize, jobs: Vec<MatchJob>) -> Result<RayArena, LeagueError> {
        let mut child = Command::new(python)
            .args(["-m", "gbely._ray_league", address, &in_flight.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| {
                LeagueError::Remote(format!("cannot start the Ray driver `{python} -m gbely._ray_league`: {e}"))
            })?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let waiting: Arc<Mutex<HashMap<usize, mpsc::Sender<Answer>>>> = Arc::default();
        let failure: Arc<Mutex<Option<String>>> = Arc::default();
        let (ready_tx, ready_rx) = mpsc::channel::<f64>();
        {
            let (waiting, failure) = (waiting.clone(), failure.clone());
            std::thread::spawn(move || read_driver(BufReader::new(stdout), &ready_tx, &waiting, &failure));
        }
        let cpus = loop {
            if interrupt::requested() {
                let _ = child.kill();
                let _ = child.wait();
                return Err(LeagueError::Remote("interrupted while connecting to the Ray cluster".into()));
            }
            match ready_rx.recv_timeout(Duration::from_millis(50)) {
                Ok(cpus) => break cpus,
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status =
                        child.wait().map_err(|e| LeagueError::Remote(format!("waiting for the Ray driver: {e}")))?;
                    let why = failure.lock().unwrap_or_else(|e| e.into_inner()).take();
                    return Err(LeagueError::Remote(why.unwrap_or_else(|| {
                        format!(
                            "the Ray driver stopped ({status}) before it reached the cluster at `{address}` (is `ray` \
                             installed with gbely for {python}, and a head running there? its messages are above)"
                        )
                    })));
                }
            }
        };
        let in_flight = if in_flight > 0 { in_flight } else { (cpus as usize).max(1) };
        Ok(RayArena {
            jobs,
            child: Mutex::new(child),
            stdin: Mutex::new(Some(stdin)),
            waiting,
            failure,
            in_flight,
            python: python.to_string(),
        })
    }

    /// Matches at once: as asked, or the cluster's CPUs.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Ends the driver: end of its input, and a kill when matches are still out (Ctrl-C).
    pub fn finish(self) -> Result<(), LeagueError> {
        drop(self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take());
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        if interrupt::requested() {
            let _ = child.kill();
        }
        child.wait().map_err(|e| LeagueError::Remote(format!("waiting for the Ray driver ({}): {e}", self.python)))?;
        Ok(())
    }
}

impl Arena for RayArena {
    type Played = Option<MatchRow>;
    type Error = LeagueError;

    fn play(&self, m: &Match) -> Result<Option<MatchRow>, LeagueError> {
        let (tx, rx) = mpsc::channel();
        self.waiting.lock().unwrap_or_else(|e| e.into_inner()).insert(m.index, tx);
        let line = serde_json::json!({ "id": m.index, "job": self.jobs[m.index] });
        let sent = match self.stdin.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            Some(stdin) => writeln!(stdin, "{line}").and_then(|()| stdin.flush()).is_ok(),
            None => false,
        };
        let stopped = || {
            let why = self.failure.lock().unwrap_or_else(|e| e.into_inner()).clone();
            LeagueError::Remote(
                why.unwrap_or_else(|| format!("the Ray driver stopped before match {} was played", m.index)),
            )
        };
        if !sent {
            return Err(stopped());
        }
        loop {
            if interrupt::requested() {
                return Ok(None);
            }
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(Ok(row)) => return Ok(Some(row)),
                Ok(Err(error)) => {
                    return Err(LeagueError::Remote(format!("match {} failed on its Ray worker: {error}", m.index)))
                }
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(stopped()),
            }
        }
    }

    fn outcome(&self, played: &Option<MatchRow>) -> Option<Outcome> {
        played.as_ref().map(MatchRow::outcome)
    }
}

/// The driver's output: the ready line, then each match's row or error to the match waiting
/// for it. At the end (or at a line that does not read) every waiting match is let go.
fn read_driver(
    out: impl BufRead,
    ready: &mpsc::Sender<f64>,
    waiting: &Mutex<HashMap<usize, mpsc::Sender<Answer>>>,
    failure: &Mutex<Option<String>>,
) {
    let fail = |why: String| {
        *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
    };
    for line in out.lines() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                fail(format!("reading the Ray driver's output: {e}"));
                break;
            }
        };
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            fail(format!("the Ray driver wrote a line that is not JSON: {line:.200}"));
            break;
        };
        if let Some(cpus) = v.get("ready") {
            let _ = ready.send(cpus.get("cpus").and_then(Value::as_f64).unwrap_or(1.0));
            continue;
        }
        let id = v.get("id").and_then(Value::as_u64).map(|i| i as usize);
        let answer = match (id, v.get("row"), v.get("error").and_then(Value::as_str)) {
            (Some(id), Some(row), _) => match serde_json::from_value::<MatchRow>(row.clone()) {
                Ok(row) => (id, Ok(row)),
                Err(e) => {
                    fail(format!("the Ray driver's result for match {id} does not read: {e}"));
                    break;
                }
            },
            (Some(id), None, Some(error)) => (id, Err(error.to_string())),
            _ => {
                fail(format!("the Ray driver wrote an unexpected line: {line:.200}"));
                break;
            }
        };
        if let Some(tx) = waiting.lock().unwrap_or_else(|e| e.into_inner()).remove(&answer.0) {
            let _ = tx.send(answer.1);
        }
    }
    // Dropping the senders tells every waiting match that no answer comes.
    waiting.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(sandbox: Option<&str>) -> serde_json::Result<MatchJob> {
        let seat = |id: &str| serde_json::json!({"id": id, "name": id, "hash": "", "spec": id, "file": null});
        let mut job = serde_json::json!({
            "seats": [seat("council"), seat("template-rs")],
            "map_spec": "gbely", "map_text": "", "game": 0, "rounds": 10,
            "time_limit": null, "memory_limit": null, "cpus": 1,
        });
        if let Some(s) = sandbox {
            job["sandbox"] = serde_json::json!(s);
        }
        serde_json::from_value(job)
    }

    #[test]
    fn a_jobs_sandbox_is_its_word_and_an_older_job_without_one_is_auto() {
        for (word, mode) in [("auto", SandboxMode::Auto), ("require", SandboxMode::Require), ("off", SandboxMode::Off)]
        {
            let j = job(Some(word)).unwrap();
            assert_eq!(j.sandbox, mode);
            assert_eq!(serde_json::to_value(&j).unwrap()["sandbox"], word, "the JSON a worker reads is as before");
        }
        assert_eq!(job(None).unwrap().sandbox, SandboxMode::Auto);
        let e = job(Some("maybe")).unwrap_err().to_string();
        assert!(e.contains("`maybe`: auto, require or off"), "{e}");
    }
}
