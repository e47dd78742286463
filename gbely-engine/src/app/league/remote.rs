//! A league's matches played beyond this machine: each match as a self-contained [`MatchJob`]
//! (the agents' source and the map's text travel with it, so a worker needs only gbely), and the
//! Ray backend that hands jobs to a Ray cluster and takes their results back.
//!
//! The Ray side is Python (`gbely._ray_league`, in the `gbely` package, which a Ray worker has
//! anyway): the engine starts it as `PYTHON -m gbely._ray_league ADDRESS JOBS`, writes one job a
//! line on its stdin, and reads one line a finished match from its stdout:
//!
//! ```text
//! → {"id": 7, "job": {…MatchJob…}}             (then end of input)
//! ← {"ready": {"cpus": 8.0}}                  (connected to the cluster)
//! ← {"id": 7, "row": {…MatchRow…}}            (in the order matches finish)
//! ← {"id": 9, "error": "…"}
//! ```
//!
//! Each job is played on its worker by [`play_job`] (`gbely._gbely.league_match`), the same code
//! as a local league's matches, so results are identical to the local backend: rows are stored
//! by key and standings computed in key order, whatever order they arrive in.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::play::{play_one, Backend, Entry, LeagueConfig, LeagueError, LeagueMap, MatchRow};
use super::schedule::Pairing;
use crate::app::runs::agent_spec::agent_file;
use crate::builtins::builtin_of;
use crate::runner::interrupt;

/// An entry as a worker needs it: who it is (its key in the results) and what it runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobEntry {
    pub id: String,
    pub name: String,
    pub hash: String,
    /// The spec as given (`council`, `template`, `cmd:…`, or the file's path on the head).
    pub spec: String,
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
    #[serde(default = "auto")]
    pub sandbox: String,
}

fn auto() -> String {
    "auto".into()
}

fn job_entry(e: &Entry) -> Result<JobEntry, LeagueError> {
    let file = match agent_file(&e.spec) {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).map_err(|error| LeagueError::Agent { spec: e.spec.clone(), error })?;
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
    let processes = seats.iter().filter(|s| builtin_of(&s.spec).is_none()).count() as u32;
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
        sandbox: config.sandbox.word().into(),
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
                path.to_string_lossy().into_owned()
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
        sandbox: job.sandbox.parse().map_err(|e| LeagueError::Remote(format!("the job's sandbox {e}")))?,
    };
    play_one(&entries[0], &entries[1], &lm, job.game, &config, &dir.join("run"))
}

/// Runs `jobs` on the Ray cluster at `address` (`auto`, `HOST:PORT`, `ray://HOST:PORT`, or
/// `local` for a Ray instance of this process's own), `in_flight` at a time (0: the cluster's
/// CPUs), through the driver `python -m gbely._ray_league`. Each result (a row, or a match that
/// failed on its worker) is sent to `out` as it arrives. Returns when every job is answered, the driver ends, or Ctrl-C is asked for.
pub fn run_on_ray(
    python: &str,
    address: &str,
    in_flight: usize,
    jobs: Vec<(usize, MatchJob)>,
    out: &mpsc::Sender<Result<MatchRow, LeagueError>>,
) -> Result<(), LeagueError> {
    let mut child = Command::new(python)
        .args(["-m", "gbely._ray_league", address, &in_flight.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| {
            LeagueError::Remote(format!("cannot start the Ray driver `{python} -m gbely._ray_league`: {e}"))
        })?;
    let mut stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let expected = jobs.len();
    // Jobs are written from a thread: the driver may answer before it has read them all.
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        for (id, job) in jobs {
            let line = serde_json::json!({ "id": id, "job": job });
            writeln!(stdin, "{line}")?;
        }
        stdin.flush()
    });
    let (tx, rx) = mpsc::channel::<std::io::Result<String>>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut answered = 0;
    let mut ready = false;
    let mut failure = None;
    while answered < expected {
        if interrupt::requested() {
            break;
        }
        let line = match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(Ok(line)) => line,
            Ok(Err(e)) => {
                failure = Some(format!("reading the Ray driver's output: {e}"));
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            failure = Some(format!("the Ray driver wrote a line that is not JSON: {line:.200}"));
            break;
        };
        if v.get("ready").is_some() {
            ready = true;
            continue;
        }
        let id = v.get("id").and_then(Value::as_u64).map(|i| i as usize);
        match (id, v.get("row"), v.get("error").and_then(Value::as_str)) {
            (Some(id), Some(row), _) => match serde_json::from_value::<MatchRow>(row.clone()) {
                Ok(row) => {
                    answered += 1;
                    let _ = out.send(Ok(row));
                }
                Err(e) => {
                    failure = Some(format!("the Ray driver's result for match {id} does not read: {e}"));
                    break;
                }
            },
            (Some(id), None, Some(error)) => {
                answered += 1;
                let _ = out.send(Err(LeagueError::Remote(format!("match {id} failed on its Ray worker: {error}"))));
            }
            _ => {
                failure = Some(format!("the Ray driver wrote an unexpected line: {line:.200}"));
                break;
            }
        }
    }
    if answered < expected {
        let _ = child.kill();
    }
    let status = child.wait().map_err(|e| LeagueError::Remote(format!("waiting for the Ray driver: {e}")))?;
    let _ = writer.join();
    if let Some(f) = failure {
        return Err(LeagueError::Remote(f));
    }
    if answered < expected && !interrupt::requested() {
        let why = if ready {
            format!("the Ray driver stopped ({status}) after {answered} of {expected} matches")
        } else {
            format!(
                "the Ray driver stopped ({status}) before it reached the cluster at `{address}` (is `ray` installed \
                 with gbely for {python}, and a head running there? its messages are above)"
            )
        };
        return Err(LeagueError::Remote(why));
    }
    Ok(())
}
