//! Agents in their own processes (SPEC §8).
//!
//! Each agent runs as a child process in its own process group, spoken to one JSON line at a
//! time: the observation on its stdin, the answer on its stdout; its stderr goes straight to its
//! log file (no pipe that could fill up). A writer thread feeds stdin and a reader thread reads
//! stdout with a size cap, so neither a huge observation nor a hostile agent can block the
//! runner. Any violation kills the whole group (children too); the agent is restarted lazily,
//! just before its next observation, so start-up counts toward that round as for the judge.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use gbely_rules::{constants, Grid, Observation};
use serde_json::Value;

use crate::game::{Player, PlayerAnswer, ViolationKind};
use crate::protocol::{answer_from_value, write_observation};

/// The harness that runs a Python agent file (embedded in the binary).
pub const HARNESS_PY: &str = include_str!("harness.py");

/// Largest answer line accepted; a longer one is an unreadable answer (a violation).
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// How to start an agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentCommand {
    /// A Python file with `decide(stav)`, run through the embedded harness.
    Python { file: PathBuf, python: String },
    /// Any executable speaking the line protocol: a program and its arguments.
    Exec { program: String, args: Vec<String> },
}

/// Settings of a process agent.
#[derive(Clone, Debug)]
pub struct ProcessConfig {
    /// Time for one round, from sending the observation to the full answer; `None` = no limit.
    pub time_limit: Option<Duration>,
    /// Where the harness and `pravidla.py` are written, and the log goes.
    pub work_dir: PathBuf,
    /// The agent's log file (its stderr, and the runner's notes).
    pub log: PathBuf,
}

impl ProcessConfig {
    pub fn default_time_limit() -> Option<Duration> {
        Some(Duration::from_secs_f64(constants::ROUND_TIME_LIMIT_S))
    }
}

/// Per-round timings and notes, for reports (`gbely check`).
#[derive(Clone, Debug, Default)]
pub struct ProcessStats {
    /// Seconds from sending each observation to the answer (answered rounds only).
    pub round_seconds: Vec<f64>,
    pub starts: u32,
}

enum Line {
    Answer(Vec<u8>),
    TooLarge,
    Eof,
    Error(String),
}

struct Running {
    child: Child,
    to_agent: Sender<Vec<u8>>,
    from_agent: Receiver<Line>,
}

/// A seat played by an agent process.
pub struct ProcessPlayer {
    name: String,
    command: AgentCommand,
    config: ProcessConfig,
    running: Option<Running>,
    sent_at: Option<Instant>,
    pending: Option<PlayerAnswer>,
    buf: Vec<u8>,
    pub stats: ProcessStats,
}

impl std::fmt::Debug for ProcessPlayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessPlayer").field("name", &self.name).field("command", &self.command).finish()
    }
}

impl ProcessPlayer {
    pub fn new(
        name: impl Into<String>,
        command: AgentCommand,
        config: ProcessConfig,
    ) -> std::io::Result<ProcessPlayer> {
        std::fs::create_dir_all(&config.work_dir)?;
        if let AgentCommand::Python { .. } = command {
            std::fs::write(config.work_dir.join("gbely_harness.py"), HARNESS_PY)?;
            std::fs::write(config.work_dir.join("pravidla.py"), constants::PRAVIDLA_PY)?;
        }
        if let Some(dir) = config.log.parent() {
            std::fs::create_dir_all(dir)?;
        }
        File::create(&config.log)?;
        Ok(ProcessPlayer {
            name: name.into(),
            command,
            config,
            running: None,
            sent_at: None,
            pending: None,
            buf: Vec::new(),
            stats: ProcessStats::default(),
        })
    }

    pub fn log_path(&self) -> &Path {
        &self.config.log
    }

    fn note(&self, text: &str) {
        if let Ok(mut f) = OpenOptions::new().append(true).open(&self.config.log) {
            let _ = writeln!(f, "[gbely] {text}");
        }
    }

    fn spawn(&mut self) -> std::io::Result<Running> {
        use std::os::unix::process::CommandExt;
        let mut cmd = match &self.command {
            AgentCommand::Python { file, python } => {
                let mut c = Command::new(python);
                c.arg("-u").arg(self.config.work_dir.join("gbely_harness.py")).arg(file);
                c
            }
            AgentCommand::Exec { program, args } => {
                let mut c = Command::new(program);
                c.args(args);
                c
            }
        };
        let log = OpenOptions::new().append(true).open(&self.config.log)?;
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::from(log)).process_group(0);
        cmd.env("PYTHONDONTWRITEBYTECODE", "1").env("PYTHONIOENCODING", "utf-8");
        let mut child = cmd.spawn()?;
        self.stats.starts += 1;
        let mut stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        // A whole observation (up to ~400 KB at 60×60) fits in one larger pipe buffer: fewer
        // switches between the writer and the agent. Best effort: the default size still works.
        let _ = nix::fcntl::fcntl(std::os::fd::AsRawFd::as_raw_fd(&stdin), nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
        let (to_agent, agent_rx) = mpsc::channel::<Vec<u8>>();
        thread::spawn(move || {
            for text in agent_rx {
                if stdin.write_all(&text).and_then(|_| stdin.write_all(b"\n")).and_then(|_| stdin.flush()).is_err() {
                    break;
                }
            }
        });
        let (line_tx, from_agent) = mpsc::channel::<Line>();
        thread::spawn(move || read_lines(stdout, line_tx));
        Ok(Running { child, to_agent, from_agent })
    }

    /// Kills the agent's whole process group and reaps it.
    fn kill(&mut self) {
        if let Some(mut r) = self.running.take() {
            kill_group(&mut r.child);
        }
    }

    fn violation(&mut self, kind: ViolationKind, detail: String) -> PlayerAnswer {
        self.note(&format!("violation ({}): {detail}; the agent is stopped and restarted", kind.wire()));
        self.kill();
        PlayerAnswer::Violation { kind, detail }
    }
}

fn kill_group(child: &mut Child) {
    use nix::sys::signal::{killpg, Signal};
    use nix::unistd::Pid;
    let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads newline-terminated lines, refusing any longer than [`MAX_ANSWER_BYTES`].
fn read_lines(stdout: impl Read, tx: Sender<Line>) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::new();
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Line::Error(e.to_string()));
                return;
            }
        };
        if chunk.is_empty() {
            let _ = tx.send(Line::Eof);
            return;
        }
        let (used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => {
                line.extend_from_slice(&chunk[..i]);
                (i + 1, true)
            }
            None => {
                line.extend_from_slice(chunk);
                (chunk.len(), false)
            }
        };
        reader.consume(used);
        if line.len() > MAX_ANSWER_BYTES {
            let _ = tx.send(Line::TooLarge);
            return; // dropping the pipe: the agent is killed for this violation anyway
        }
        if done && tx.send(Line::Answer(std::mem::take(&mut line))).is_err() {
            return;
        }
    }
}

impl Player for ProcessPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn begin(&mut self, obs: &Observation, grid: &Grid) {
        self.pending = None;
        if self.running.is_none() {
            match self.spawn() {
                Ok(r) => self.running = Some(r),
                Err(e) => {
                    let detail = format!("could not start the agent: {e}");
                    self.pending = Some(self.violation(ViolationKind::Crash, detail));
                    return;
                }
            }
        }
        let r = self.running.as_ref().expect("running");
        // Lines the agent wrote out of turn belong to no round: drop them.
        while let Ok(line) = r.from_agent.try_recv() {
            if let Line::Answer(_) = line {
                self.note("dropped an answer line written out of turn");
            }
        }
        write_observation(obs, grid, &mut self.buf);
        self.sent_at = Some(Instant::now());
        if r.to_agent.send(std::mem::take(&mut self.buf)).is_err() {
            self.pending = Some(self.violation(ViolationKind::Crash, "the agent's input is closed".into()));
        }
    }

    fn finish(&mut self) -> PlayerAnswer {
        if let Some(p) = self.pending.take() {
            return p;
        }
        let Some(r) = self.running.as_ref() else {
            return self.violation(ViolationKind::Crash, "the agent is not running".into());
        };
        let sent = self.sent_at.unwrap_or_else(Instant::now);
        let received = match self.config.time_limit {
            Some(limit) => match r.from_agent.recv_timeout(limit.saturating_sub(sent.elapsed())) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    let detail = format!("no answer within {:.1} s", limit.as_secs_f64());
                    return self.violation(ViolationKind::Timeout, detail);
                }
                Err(RecvTimeoutError::Disconnected) => Line::Eof,
            },
            None => r.from_agent.recv().unwrap_or(Line::Eof),
        };
        let elapsed = sent.elapsed();
        match received {
            Line::Answer(bytes) => {
                if let Some(limit) = self.config.time_limit {
                    if elapsed > limit {
                        let detail = format!(
                            "answered after {:.2} s (limit {:.1} s)",
                            elapsed.as_secs_f64(),
                            limit.as_secs_f64()
                        );
                        return self.violation(ViolationKind::Timeout, detail);
                    }
                }
                self.stats.round_seconds.push(elapsed.as_secs_f64());
                let value: Value = match serde_json::from_slice(&bytes) {
                    Ok(v) => v,
                    Err(e) => return self.violation(ViolationKind::Unreadable, format!("the answer is not JSON: {e}")),
                };
                if let Some(err) = value.get("__gbely_error__") {
                    let kind = match err.get("kind").and_then(Value::as_str) {
                        Some("unreadable") => ViolationKind::Unreadable,
                        _ => ViolationKind::Crash,
                    };
                    let detail = err.get("detail").and_then(Value::as_str).unwrap_or("error").to_string();
                    return self.violation(kind, detail);
                }
                match answer_from_value(value) {
                    Ok(list) => PlayerAnswer::Raw(list),
                    Err(e) => self.violation(ViolationKind::Unreadable, e.to_string()),
                }
            }
            Line::TooLarge => self.violation(
                ViolationKind::Unreadable,
                format!("the answer is larger than {} MiB", MAX_ANSWER_BYTES >> 20),
            ),
            Line::Error(e) => self.violation(ViolationKind::Crash, format!("reading the agent's answer failed: {e}")),
            Line::Eof => {
                // Give a process that is exiting a moment to be reaped, for a precise message.
                let mut status = None;
                for _ in 0..20 {
                    status = self.running.as_mut().and_then(|r| r.child.try_wait().ok().flatten());
                    if status.is_some() {
                        break;
                    }
                    thread::sleep(Duration::from_millis(5));
                }
                let detail = match status {
                    Some(s) => format!("the agent exited ({s}) without answering"),
                    None => "the agent closed its output without answering".to_string(),
                };
                self.violation(ViolationKind::Crash, detail)
            }
        }
    }

    fn end(&mut self) {
        self.kill();
    }
}

impl Drop for ProcessPlayer {
    fn drop(&mut self) {
        self.kill();
    }
}
