//! Agents in their own processes (SPEC §8).
//!
//! Each agent runs as a child process in its own process group and its own working folder,
//! spoken to one JSON line at a time: the observation on its stdin, the answer on its stdout.
//! A writer thread feeds stdin, a reader thread reads stdout with a size cap and **timestamps each
//! answer when its last byte arrives**, and a third thread copies stderr into the agent's log up
//! to a cap. So neither a huge observation, a flood of output nor a slow agent in another seat can
//! block the runner or change how this seat is judged: every seat is judged against its own send
//! time, whatever order the runner collects answers in.
//!
//! Any violation kills the agent with everything it started: its process group, and every process
//! that carries its token in the environment (`GBELY_AGENT_TOKEN`, inherited by descendants, so a
//! grandchild that left the group with `setsid()` is found too); on Windows its Job object. The
//! agent is restarted lazily, just before its next observation, so start-up counts toward that
//! round as for the judge. What differs between operating systems lives in [`platform`].
//!
//! Resources: the agent's memory is limited (`memory_limit`): on Unix its address space, set by
//! the harness for Python agents and by `ulimit -v` for executables, so that allocations past it
//! fail in the agent; on Windows the runner measures the committed memory of the agent's main
//! process every [`interrupt::POLL`] while it waits for the answer, and when the answer arrives,
//! and stops an agent over its limit with a crash violation. Its log is cut at `log_limit` bytes.

use crate::limits::{Defaults, MemoryLimit, TimeLimit};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use gbely_rules::{constants, Grid, Notes, Observation};
use serde_json::Value;

use crate::runner::cores::{CoreGate, CoreLease};
use crate::runner::interrupt;
use crate::runner::platform::{self, SchedStat, Tree};
use crate::runner::player::{p95, AgentStats, CpuTally, Isolation, Player, PlayerAnswer};
use crate::runner::sandbox::{self, Jail, PythonRuntime, Sandbox, SandboxMode};
use crate::wire::{read_answer, write_observation, Unreadable};
use gbely_rules::ViolationKind;

pub use crate::runner::platform::{become_subreaper, kill_orphans};

/// The harness that runs a Python agent file (embedded in the binary).
pub const HARNESS_PY: &str = include_str!("harness.py");

/// Largest answer line accepted; a longer one is an unreadable answer (a violation).
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// An agent's log is cut after this many bytes of its own output (the runner's notes still go in).
pub const DEFAULT_LOG_LIMIT: u64 = 16 << 20;

/// How the harness reports its own errors (the agent raised, its answer is not JSON, it failed at
/// import): a line starting with this tag. No JSON text starts with `#`, and an agent's answer is
/// always written by the harness's `json.dumps`, so an agent cannot forge it; the tag is only
/// honoured for Python agents run by the harness.
const HARNESS_ERROR_TAG: &[u8] = b"#gbely-error ";

/// How to start an agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentCommand {
    /// A Python file with `decide(stav)`, run through the embedded harness.
    Python {
        /// The agent's `.py` file.
        file: PathBuf,
        /// The Python interpreter to run it with (`python3`, a path).
        python: String,
    },
    /// Any executable speaking the line protocol: a program and its arguments.
    Exec {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// Settings of a process agent.
#[derive(Clone, Debug)]
pub struct ProcessConfig {
    /// Time for one round, from sending the observation to the full answer.
    pub time_limit: TimeLimit,
    /// The agent's working folder: the harness and `pravidla.py` are written there.
    pub work_dir: PathBuf,
    /// The agent's log file (its stderr, and the runner's notes).
    pub log: PathBuf,
    /// Memory limit of the agent process. Unix: its address space
    /// (`RLIMIT_AS`). Windows: the committed memory of its main process, measured by the runner
    /// (see [`platform::committed_memory`]); the agent's log says so.
    pub memory_limit: MemoryLimit,
    /// Bytes of the agent's own output kept in its log.
    pub log_limit: u64,
    /// The cores this agent shares with the agents of other matches (a league's): it is sent
    /// its observation only once it holds one, and gives it back with its answer. `None`: it
    /// thinks whenever asked.
    pub cores: Option<Arc<CoreGate>>,
    /// Whether the agent runs in the sandbox ([`sandbox`]): by default where the OS allows.
    pub sandbox: SandboxMode,
    /// In the sandbox without a [`ProcessConfig::cores`] gate, the agent is confined to the
    /// CPU of this slot (its seat: agents of one match think on different cores).
    pub cpu_slot: usize,
}

impl ProcessConfig {
    /// The judge's settings: [`Defaults::TIME_LIMIT`], [`Defaults::MEMORY_LIMIT`], [`DEFAULT_LOG_LIMIT`].
    pub fn new(work_dir: impl Into<PathBuf>, log: impl Into<PathBuf>) -> ProcessConfig {
        ProcessConfig {
            time_limit: Defaults::TIME_LIMIT,
            work_dir: work_dir.into(),
            log: log.into(),
            memory_limit: Defaults::MEMORY_LIMIT,
            log_limit: DEFAULT_LOG_LIMIT,
            cores: None,
            sandbox: SandboxMode::Auto,
            cpu_slot: 0,
        }
    }
}

/// Per-round timings and notes, for reports (`gbely check`, the summary's fairness notes).
#[derive(Clone, Debug, Default)]
pub struct ProcessStats {
    /// Seconds from sending each observation to the answer (answered rounds only).
    pub round_seconds: Vec<f64>,
    /// Processes started (1 + restarts after violations).
    pub starts: u32,
    /// CPU time and time spent runnable but waiting for a CPU, summed over the rounds.
    pub cpu: CpuTally,
}

enum LineKind {
    Answer(Vec<u8>),
    TooLarge,
    Eof,
    Error(String),
    /// Not from the agent: the runner found it over its memory limit (Windows), with the bytes
    /// it had committed.
    OverMemory(u64),
}

/// A line from the agent, stamped when its last byte arrived.
struct Line {
    kind: LineKind,
    at: Instant,
}

struct Running {
    child: Child,
    /// The agent with everything it started (a Job object on Windows).
    tree: Tree,
    to_agent: Sender<Vec<u8>>,
    from_agent: Receiver<Line>,
    /// Observations sent to this process so far: the reader takes the first line after each as
    /// that round's answer and drops the rest.
    sent: Arc<AtomicU64>,
    /// Scheduler figures when the observation was sent.
    sched_at_send: Option<SchedStat>,
    /// The agent's own first process, for the scheduler's figures (under the sandbox it is a
    /// grandchild of `child`, known once it has started).
    agent_pid: Option<u32>,
}

impl Running {
    fn measured_pid(&mut self, sandboxed: bool) -> Option<u32> {
        if self.agent_pid.is_none() {
            self.agent_pid = if sandboxed { sandbox::agent_pid(self.child.id()) } else { Some(self.child.id()) };
        }
        self.agent_pid
    }
}

/// A seat played by an agent process.
pub struct ProcessPlayer {
    name: String,
    command: AgentCommand,
    config: ProcessConfig,
    /// Marks this agent's processes and their descendants (environment `GBELY_AGENT_TOKEN`).
    token: String,
    running: Option<Running>,
    sent_at: Option<Instant>,
    /// How long the last answer collected took ([`Player::answer_seconds`]).
    answer_seconds: Option<f64>,
    pending: Option<PlayerAnswer>,
    /// The notes of the last answer (its `debug` key), and the map's grid to read their cells.
    notes: Option<Notes>,
    grid: Option<Grid>,
    buf: Vec<u8>,
    /// Bytes of the agent's own output written to its log so far (all its runs together).
    logged: Arc<AtomicU64>,
    /// Lines dropped because they came after a round's answer (all its runs together), and how
    /// many of them the log has been told of.
    dropped: Arc<AtomicU64>,
    dropped_noted: u64,
    /// The core it holds while it thinks (see [`ProcessConfig::cores`]); the reader thread
    /// gives it back the moment the answer arrives.
    lease: Arc<Mutex<Option<CoreLease>>>,
    /// The log said that this agent's memory could not be measured (said once).
    unmeasured_noted: AtomicBool,
    /// The sandbox it runs in, if any.
    sandbox: Option<&'static Sandbox>,
    isolation: Isolation,
    /// A Python agent's interpreter as the sandbox starts it.
    runtime: Option<PythonRuntime>,
    /// The user it runs as in the sandbox when gbely is root.
    uid: u32,
    /// In the sandbox where the machine allows, the control group that holds the memory of all
    /// its processes together.
    group: Option<sandbox::MemoryGroup>,
    /// Timings and notes so far.
    pub stats: ProcessStats,
}

impl std::fmt::Debug for ProcessPlayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessPlayer").field("name", &self.name).field("command", &self.command).finish()
    }
}

impl ProcessPlayer {
    /// A player named `name` for the agent `command` starts, with `config`: writes the harness
    /// (Python agents) and creates the log; the process itself starts before its first
    /// observation.
    pub fn new(
        name: impl Into<String>,
        command: AgentCommand,
        config: ProcessConfig,
    ) -> std::io::Result<ProcessPlayer> {
        std::fs::create_dir_all(&config.work_dir)?;
        let sandbox = sandbox::for_mode(config.sandbox).map_err(std::io::Error::other)?;
        let isolation = sandbox::isolation(config.sandbox);
        let mut runtime = None;
        if let AgentCommand::Python { python, .. } = &command {
            // Under the sandbox the agent sees a folder of its own, read-only; else its working folder.
            let dir = match sandbox {
                Some(_) => {
                    runtime = Some(sandbox::python_runtime(python).map_err(std::io::Error::other)?);
                    let dir = config.work_dir.join("box");
                    std::fs::create_dir_all(&dir)?;
                    readable(&dir, 0o755)?;
                    dir
                }
                None => config.work_dir.clone(),
            };
            for (name, text) in [("gbely_harness.py", HARNESS_PY), ("pravidla.py", constants::PRAVIDLA_PY)] {
                std::fs::write(dir.join(name), text)?;
                readable(&dir.join(name), 0o644)?;
            }
        }
        if let Some(dir) = config.log.parent() {
            std::fs::create_dir_all(dir)?;
        }
        File::create(&config.log)?;
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let token = format!("{}-{}", std::process::id(), n);
        let uid = sandbox::FIRST_UID + ((u64::from(std::process::id()) * 4099 + n) % 1_000_000_000) as u32;
        let mut player = ProcessPlayer {
            name: name.into(),
            command,
            config,
            token,
            running: None,
            sent_at: None,
            answer_seconds: None,
            pending: None,
            notes: None,
            grid: None,
            buf: Vec::new(),
            logged: Arc::new(AtomicU64::new(0)),
            dropped: Arc::new(AtomicU64::new(0)),
            dropped_noted: 0,
            lease: Arc::new(Mutex::new(None)),
            unmeasured_noted: AtomicBool::new(false),
            sandbox,
            isolation,
            runtime,
            uid,
            group: None,
            stats: ProcessStats::default(),
        };
        if let (Some(sb), Some(limit)) = (sandbox, player.config.memory_limit.bytes()) {
            player.group = sandbox::MemoryGroup::new(sb, &format!("gbely-{}", player.token), limit);
        }
        if let Some(note) =
            player.config.memory_limit.bytes().and_then(|l| platform::memory_limit_note(l, interrupt::POLL))
        {
            player.note(&note);
        }
        Ok(player)
    }

    /// The agent's log: what it printed, and the runner's notes (`[gbely] …`).
    pub fn log_path(&self) -> &Path {
        &self.config.log
    }

    fn note(&self, text: &str) {
        if let Ok(mut f) = OpenOptions::new().append(true).open(&self.config.log) {
            let _ = writeln!(f, "[gbely] {text}");
        }
    }

    /// How this agent is isolated (the summary's line).
    pub fn isolation(&self) -> Isolation {
        self.isolation
    }

    /// The command that starts the agent in the sandbox: a Python agent's file is copied into
    /// its read-only folder (as the judge receives one file); a program sees the files its
    /// command line names.
    fn sandboxed_command(&self, sb: &Sandbox, work_dir: &Path) -> std::io::Result<(Command, Option<usize>)> {
        let mut jail = Jail {
            uid: self.uid,
            memory: self.config.memory_limit.bytes(),
            group: self.group.as_ref().map(sandbox::MemoryGroup::join_file),
            ..Jail::default()
        };
        let argv: Vec<std::ffi::OsString> = match &self.command {
            AgentCommand::Python { file, .. } => {
                let rt = self.runtime.as_ref().expect("a Python agent's runtime is found before it starts");
                let name = file.file_name().map_or_else(|| "agent.py".into(), |n| n.to_os_string());
                let dir = work_dir.join("box");
                std::fs::copy(file, dir.join(&name))?;
                readable(&dir.join(&name), 0o644)?;
                jail.box_dir = Some(dir);
                jail.read_only = rt.folders.clone();
                if let Some(base) = &rt.user_base {
                    jail.env.push(("PYTHONUSERBASE".into(), base.into()));
                }
                let inside = Path::new(sandbox::BOX_DIR);
                vec![
                    rt.executable.clone().into(),
                    "-u".into(),
                    inside.join("gbely_harness.py").into(),
                    inside.join(name).into(),
                ]
            }
            AgentCommand::Exec { program, args } => {
                let words: Vec<String> = std::iter::once(program).chain(args).cloned().collect();
                jail.read_only = sandbox::named_paths(&words);
                // A Python named by its path brings its library (`/opt/py/bin/python3 bot.py`).
                let pythons: Vec<PathBuf> = jail
                    .read_only
                    .iter()
                    .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("python")))
                    .cloned()
                    .collect();
                for py in pythons {
                    if let Ok(rt) = sandbox::python_runtime(&py.to_string_lossy()) {
                        jail.read_only.extend(rt.folders);
                    }
                }
                words.into_iter().map(Into::into).collect()
            }
        };
        jail.env.push(("PYTHONDONTWRITEBYTECODE".into(), "1".into()));
        jail.env.push(("PYTHONIOENCODING".into(), "utf-8".into()));
        jail.env.push(("GBELY_AGENT_TOKEN".into(), self.token.clone().into()));
        Ok(sb.command(&jail, &argv, Some((work_dir, self.config.cpu_slot))))
    }

    fn spawn(&mut self) -> std::io::Result<Running> {
        let work_dir = std::path::absolute(&self.config.work_dir)?;
        // The CPU the sandbox confines it to (set on the thread that starts it: no `taskset`).
        let mut cpu = None;
        let mut cmd = match (&self.command, self.sandbox) {
            (_, Some(sb)) => {
                let (c, on) = self.sandboxed_command(sb, &work_dir)?;
                cpu = on;
                c
            }
            (command, None) => match command {
                AgentCommand::Python { file, python } => {
                    let mut c = Command::new(python);
                    // The agent starts in its own folder: name its file from where we are.
                    c.arg("-u").arg(work_dir.join("gbely_harness.py")).arg(std::path::absolute(file)?);
                    if let Some(limit) = self.config.memory_limit.bytes().filter(|_| platform::LIMITS_MEMORY) {
                        c.env("GBELY_MEMORY_LIMIT", limit.to_string());
                    }
                    c
                }
                AgentCommand::Exec { program, args } => match self.config.memory_limit.bytes() {
                    // The shell sets the limit, then becomes the agent.
                    Some(limit) if platform::LIMITS_MEMORY => {
                        let mut c = Command::new("/bin/sh");
                        c.arg("-c").arg(format!("ulimit -v {} 2>/dev/null; exec \"$0\" \"$@\"", limit / 1024));
                        c.arg(program).args(args);
                        c
                    }
                    _ => {
                        let mut c = Command::new(program);
                        c.args(args);
                        c
                    }
                },
            },
        };
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        platform::isolate(&mut cmd);
        cmd.current_dir(&work_dir);
        cmd.env("PYTHONDONTWRITEBYTECODE", "1").env("PYTHONIOENCODING", "utf-8").env("GBELY_AGENT_TOKEN", &self.token);
        let mut child = platform::spawn(cmd, cpu)?;
        let (tree, trouble) = Tree::adopt(&child);
        if let Some(trouble) = trouble {
            self.note(&trouble);
        }
        self.stats.starts += 1;
        let mut stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        platform::enlarge_pipe(&stdin);
        let (to_agent, agent_rx) = mpsc::channel::<Vec<u8>>();
        thread::spawn(move || {
            for text in agent_rx {
                if stdin.write_all(&text).and_then(|_| stdin.write_all(b"\n")).and_then(|_| stdin.flush()).is_err() {
                    break;
                }
            }
        });
        let (line_tx, from_agent) = mpsc::channel::<Line>();
        let lease = Arc::clone(&self.lease);
        // Sandboxed and sharing the cores (a league's): between its turns the agent is stopped,
        // so that nothing it left running takes the core the next agent is lent.
        let park = (self.sandbox.is_some() && self.config.cores.is_some()).then_some(child.id());
        let sent = Arc::new(AtomicU64::new(0));
        let turns = Turns { sent: Arc::clone(&sent), dropped: Arc::clone(&self.dropped) };
        thread::spawn(move || read_lines(stdout, line_tx, lease, park, turns));
        let log = OpenOptions::new().append(true).open(&self.config.log)?;
        let (logged, cap) = (Arc::clone(&self.logged), self.config.log_limit);
        thread::spawn(move || copy_log(stderr, log, logged, cap));
        Ok(Running { child, tree, to_agent, from_agent, sent, sched_at_send: None, agent_pid: None })
    }

    /// Kills the agent's whole process group and every process carrying its token, and reaps it;
    /// gives back the reader's channel, which still brings what the agent wrote before it died.
    fn kill(&mut self) -> Option<Receiver<Line>> {
        let from_agent = self.running.take().map(|mut r| {
            r.tree.kill(&mut r.child);
            r.from_agent
        });
        platform::sweep_token(&self.token);
        from_agent
    }

    /// Stops the agent with everything it started, as after a violation: it starts afresh before
    /// its next observation, its memory lost. `gbely replay rerun` does this where the judge
    /// restarted the agent after a violation that the rerun did not repeat, so the agent sees
    /// what the judge's saw.
    pub fn restart(&mut self, why: &str) {
        self.note(&format!("stopped, to be restarted before the next round: {why}"));
        self.kill();
    }

    fn violation(&mut self, kind: ViolationKind, detail: String) -> PlayerAnswer {
        self.note(&format!("violation ({}): {detail}; the agent is stopped and restarted", kind.wire()));
        self.kill();
        PlayerAnswer::Violation { kind, detail }
    }

    /// Adds this round's scheduler figures to the tally; says how long the agent waited for a CPU.
    fn tally_cpu(&mut self) -> Option<f64> {
        let sandboxed = self.sandbox.is_some();
        let r = self.running.as_mut()?;
        let before = r.sched_at_send?;
        let after = SchedStat::of(r.measured_pid(sandboxed)?)?;
        let run = after.run_ns.saturating_sub(before.run_ns) as f64 / 1e9;
        let wait = after.wait_ns.saturating_sub(before.wait_ns) as f64 / 1e9;
        let t = &mut self.stats.cpu;
        t.rounds += 1;
        t.run_seconds += run;
        t.wait_seconds += wait;
        t.max_wait_seconds = t.max_wait_seconds.max(wait);
        let limit = self.config.time_limit.as_secs_f64().unwrap_or(constants::ROUND_TIME_LIMIT_S);
        if wait > limit / 10.0 {
            t.starved_rounds += 1;
        }
        Some(wait)
    }

    /// The bytes the agent has committed, when the runner measures memory here
    /// ([`platform::MEASURES_MEMORY`]) and they are over its limit. A measurement that fails is
    /// noted in the log once, and the agent plays on unchecked.
    fn over_memory(&self) -> Option<u64> {
        if !platform::MEASURES_MEMORY {
            return None;
        }
        let limit = self.config.memory_limit.bytes()?;
        let r = self.running.as_ref()?;
        match platform::committed_memory(&r.child) {
            Ok(used) => (used > limit).then_some(used),
            Err(e) => {
                if !self.unmeasured_noted.swap(true, Ordering::Relaxed) {
                    self.note(&format!("could not measure the agent's memory ({e}): its memory limit is not checked"));
                }
                None
            }
        }
    }

    /// The violation detail for an agent found over its memory limit.
    fn over_memory_detail(&self, used: u64) -> String {
        format!(
            "the agent used {}, over the memory limit of {} (Windows: the committed memory of its main process, \
             checked every {} ms)",
            platform::mib(used),
            platform::mib(self.config.memory_limit.bytes().unwrap_or(0)),
            interrupt::POLL.as_millis()
        )
    }

    /// Waits for the next line of this round, looking at the stop flag every [`interrupt::POLL`],
    /// and as often at the agent's memory where the runner measures it (an [`LineKind::OverMemory`]
    /// line when over). `None`: the deadline passed with nothing received; `Some(None)`: a stop
    /// was requested.
    fn wait_line(&self, deadline: Option<Instant>) -> Option<Option<Line>> {
        let r = self.running.as_ref().expect("running");
        loop {
            // A line that arrived is judged by its own timestamp, however late we look.
            match r.from_agent.try_recv() {
                Ok(line) => return Some(Some(line)),
                Err(TryRecvError::Disconnected) => return Some(Some(Line { kind: LineKind::Eof, at: Instant::now() })),
                Err(TryRecvError::Empty) => {}
            }
            if interrupt::requested() {
                return Some(None);
            }
            let slice = match deadline {
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return None;
                    }
                    (d - now).min(interrupt::POLL)
                }
                None => interrupt::POLL,
            };
            if let Some(used) = self.over_memory() {
                return Some(Some(Line { kind: LineKind::OverMemory(used), at: Instant::now() }));
            }
            match r.from_agent.recv_timeout(slice) {
                Ok(line) => return Some(Some(line)),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Some(Some(Line { kind: LineKind::Eof, at: Instant::now() }))
                }
            }
        }
    }

    fn timeout(&mut self, detail: String) -> PlayerAnswer {
        let waited = self.tally_cpu();
        let detail = match waited {
            Some(w) if w > 0.1 => format!("{detail}; it waited {w:.2} s for a CPU (the machine is overloaded)"),
            _ => detail,
        };
        self.violation(ViolationKind::Timeout, detail)
    }
}

/// Copies the agent's stderr into its log, up to `cap` bytes over all its runs; the rest is read
/// and dropped so that the agent never blocks on a full pipe.
fn copy_log(mut from: impl Read, mut log: File, logged: Arc<AtomicU64>, cap: u64) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        let before = logged.fetch_add(n as u64, Ordering::Relaxed);
        if before > cap {
            continue;
        }
        let keep = (cap - before).min(n as u64) as usize;
        let _ = log.write_all(&buf[..keep]);
        // The chunk that first goes past the cap says so, once.
        if before + n as u64 > cap {
            let _ = writeln!(
                log,
                "\n[gbely] the log reached its limit of {} bytes: the rest of this agent's output is dropped",
                cap
            );
        }
    }
}

/// What the reader shares with the player about the rounds: how many observations were sent,
/// and the count of the lines it dropped.
struct Turns {
    sent: Arc<AtomicU64>,
    dropped: Arc<AtomicU64>,
}

/// Reads newline-terminated lines, refusing any longer than [`MAX_ANSWER_BYTES`]; each line is
/// stamped when its newline arrives.
///
/// **One answer a round:** the first line after an observation was sent is that round's answer;
/// the lines after it, until the next observation is sent, are dropped here and counted (a
/// surplus line longer than the cap is passed over without being held), so they are never
/// read as the next round's answer. Lines that arrive in one read count as arriving together,
/// when the read returned. Before the first observation, the first line is passed on (a
/// harness reporting that the agent failed at import; the player drops anything else).
fn read_lines(
    stdout: impl Read,
    tx: Sender<Line>,
    lease: Arc<Mutex<Option<CoreLease>>>,
    park: Option<u32>,
    turns: Turns,
) {
    // Whatever the agent said, it is no longer thinking: its core goes to the next agent.
    let give_back = || {
        let mut held = lease.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some(pid), Some(_)) = (park, held.as_ref()) {
            sandbox::stop_tree(pid);
        }
        drop(held.take())
    };
    let tx = move |line: Line| {
        give_back();
        tx.send(line)
    };
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::new();
    // The observation (by count) whose answer was passed on; whether a surplus line too long to
    // hold is being passed over.
    let (mut answered, mut skipping, mut turn) = (None::<u64>, false, 0);
    loop {
        // The rounds as they stood when what is read now arrived (at the read, not at the line).
        let fresh = reader.buffer().is_empty();
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx(Line { kind: LineKind::Error(e.to_string()), at: Instant::now() });
                return;
            }
        };
        if chunk.is_empty() {
            let _ = tx(Line { kind: LineKind::Eof, at: Instant::now() });
            return;
        }
        if fresh {
            turn = turns.sent.load(Ordering::SeqCst);
        }
        let surplus = answered == Some(turn);
        let (used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => {
                if !skipping {
                    line.extend_from_slice(&chunk[..i]);
                }
                // A Windows program writing in text mode ends its lines with CRLF.
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                (i + 1, true)
            }
            None => {
                if !skipping {
                    line.extend_from_slice(chunk);
                }
                (chunk.len(), false)
            }
        };
        reader.consume(used);
        if line.len() > MAX_ANSWER_BYTES {
            if !surplus {
                let _ = tx(Line { kind: LineKind::TooLarge, at: Instant::now() });
                return; // dropping the pipe: the agent is killed for this violation anyway
            }
            (skipping, line) = (true, Vec::new());
        }
        if !done {
            continue;
        }
        // A line passed over is dropped whenever it ends.
        if surplus || skipping {
            turns.dropped.fetch_add(1, Ordering::Relaxed);
            (skipping, line) = (false, Vec::new());
            continue;
        }
        answered = Some(turn);
        if tx(Line { kind: LineKind::Answer(std::mem::take(&mut line)), at: Instant::now() }).is_err() {
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
        self.notes = None;
        self.sent_at = None;
        if self.grid.is_none() {
            self.grid = Some(grid.clone());
        }
        match &self.running {
            Some(r) => {
                // Lines the agent wrote out of turn belong to no round: drop them.
                while let Ok(line) = r.from_agent.try_recv() {
                    if matches!(line.kind, LineKind::Answer(_)) {
                        self.dropped.fetch_add(1, Ordering::Relaxed);
                    }
                }
                let dropped = self.dropped.load(Ordering::Relaxed);
                if dropped > self.dropped_noted {
                    self.note(&format!(
                        "dropped {} line(s) written after a round's answer: one answer a round",
                        dropped - self.dropped_noted
                    ));
                    self.dropped_noted = dropped;
                }
            }
            None => match self.spawn() {
                Ok(r) => self.running = Some(r),
                Err(e) => {
                    let detail = format!("could not start the agent: {e}");
                    self.pending = Some(self.violation(ViolationKind::Crash, detail));
                    return;
                }
            },
        }
        write_observation(obs, grid, &mut self.buf);
        if let Some(gate) = &self.config.cores {
            match gate.acquire(self.config.time_limit.duration(), &interrupt::requested) {
                Some(lease) => {
                    // In the sandbox the agent thinks on its lease's core, and only there.
                    if let (Some(sb), Some(r)) = (self.sandbox, &self.running) {
                        sandbox::resume_tree(r.child.id(), sb.cpu_of(lease.slot()));
                    }
                    *self.lease.lock().unwrap_or_else(|e| e.into_inner()) = Some(lease)
                }
                None => {
                    self.pending = Some(PlayerAnswer::Interrupted);
                    return;
                }
            }
        }
        let sandboxed = self.sandbox.is_some();
        let r = self.running.as_mut().expect("running");
        r.sched_at_send = r.measured_pid(sandboxed).and_then(SchedStat::of);
        self.sent_at = Some(Instant::now());
        // Counted before it is written: no line answering it can arrive before.
        r.sent.fetch_add(1, Ordering::SeqCst);
        if r.to_agent.send(std::mem::take(&mut self.buf)).is_err() {
            self.pending = Some(self.violation(ViolationKind::Crash, "the agent's input is closed".into()));
        }
    }

    fn finish(&mut self) -> PlayerAnswer {
        self.answer_seconds = None;
        let answer = self.await_answer();
        if self.answer_seconds.is_none() {
            // A violation without a line (a timeout, a crash found at once): the time waited.
            self.answer_seconds = self.sent_at.map(|s| s.elapsed().as_secs_f64());
        }
        // A timeout or a crash: the core is given back here, if the reader has not already.
        drop(self.lease.lock().unwrap_or_else(|e| e.into_inner()).take());
        answer
    }

    fn end(&mut self) {
        let from_agent = self.kill();
        drop(self.lease.lock().unwrap_or_else(|e| e.into_inner()).take());
        // What the agent wrote after its last answer is still in the pipe: the reader counts it
        // (the dropped lines) on its way to the pipe's end, which the kill brings. Bounded, in
        // case something outside the agent's tree still holds the pipe open.
        if let Some(rx) = from_agent {
            let until = Instant::now() + Duration::from_secs(2);
            while let Some(left) = until.checked_duration_since(Instant::now()) {
                match rx.recv_timeout(left) {
                    Ok(Line { kind: LineKind::Eof | LineKind::Error(_), .. }) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        }
    }

    fn stats(&self) -> Option<AgentStats> {
        Some(self.agent_stats())
    }
    fn answer_seconds(&self) -> Option<f64> {
        self.answer_seconds
    }
    fn notes(&mut self) -> Option<Notes> {
        self.notes.take()
    }
}

impl ProcessPlayer {
    /// The round's answer, judged against the time limit from when it was sent.
    fn await_answer(&mut self) -> PlayerAnswer {
        if let Some(p) = self.pending.take() {
            return p;
        }
        if self.running.is_none() {
            return self.violation(ViolationKind::Crash, "the agent is not running".into());
        }
        let sent = self.sent_at.unwrap_or_else(Instant::now);
        let limit = self.config.time_limit;
        let deadline = limit.duration().map(|l| sent + l);
        let line = match self.wait_line(deadline) {
            Some(Some(line)) => line,
            Some(None) => return PlayerAnswer::Interrupted,
            None => {
                let limit = limit.as_secs_f64().expect("a deadline comes from a limit");
                return self.timeout(format!("no answer within {limit:.1} s"));
            }
        };
        let elapsed = line.at.saturating_duration_since(sent);
        self.answer_seconds = Some(elapsed.as_secs_f64());
        if let (true, Some(limit)) = (limit.exceeded_by(elapsed), limit.as_secs_f64()) {
            let detail = match line.kind {
                LineKind::Answer(_) => format!("answered after {:.2} s (limit {limit:.1} s)", elapsed.as_secs_f64()),
                _ => format!("no answer within {limit:.1} s"),
            };
            return self.timeout(detail);
        }
        // Memory taken since the last look (on Windows the peak is measured: none is missed).
        if let (LineKind::Answer(_), Some(used)) = (&line.kind, self.over_memory()) {
            let detail = self.over_memory_detail(used);
            return self.violation(ViolationKind::Crash, detail);
        }
        match line.kind {
            LineKind::Answer(bytes) => {
                self.tally_cpu();
                self.stats.round_seconds.push(elapsed.as_secs_f64());
                if matches!(self.command, AgentCommand::Python { .. }) {
                    if let Some(report) = bytes.strip_prefix(HARNESS_ERROR_TAG) {
                        return self.harness_error(report);
                    }
                }
                let Some(grid) = self.grid.as_ref() else {
                    return self.violation(ViolationKind::Crash, "an answer before any observation".into());
                };
                // Read item by item: a flood of junk items is counted, never held (docs/protocol.md).
                match read_answer(&bytes, grid) {
                    Ok(mut read) => {
                        self.notes = read.notes.take();
                        PlayerAnswer::Read(read)
                    }
                    Err(Unreadable::NotJson(e)) => {
                        // A program's own output on stdout is read as its answer: say how to log.
                        let hint = match self.command {
                            AgentCommand::Exec { .. } => {
                                " (stdout is the protocol: log to stderr, e.g. eprintln! in Rust, not println!)"
                            }
                            AgentCommand::Python { .. } => "",
                        };
                        self.violation(ViolationKind::Unreadable, format!("the answer is not JSON: {e}{hint}"))
                    }
                    Err(e) => self.violation(ViolationKind::Unreadable, e.to_string()),
                }
            }
            LineKind::TooLarge => self.violation(
                ViolationKind::Unreadable,
                format!("the answer is larger than {} MiB", MAX_ANSWER_BYTES >> 20),
            ),
            LineKind::Error(e) => {
                self.violation(ViolationKind::Crash, format!("reading the agent's answer failed: {e}"))
            }
            LineKind::OverMemory(used) => {
                let detail = self.over_memory_detail(used);
                self.violation(ViolationKind::Crash, detail)
            }
            LineKind::Eof => {
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

    fn agent_stats(&self) -> AgentStats {
        AgentStats {
            timed: !self.config.time_limit.is_off(),
            starts: self.stats.starts,
            answered_rounds: self.stats.round_seconds.len() as u32,
            max_answer_seconds: self.stats.round_seconds.iter().copied().fold(0.0, f64::max),
            p95_answer_seconds: p95(&self.stats.round_seconds),
            first_answer_seconds: self.stats.round_seconds.first().copied(),
            cpu: self.stats.cpu,
            isolation: self.isolation,
            dropped_lines: self.dropped.load(Ordering::Relaxed),
        }
    }

    /// A violation the harness reported on the agent's behalf (`{"kind": …, "detail": …}`).
    fn harness_error(&mut self, report: &[u8]) -> PlayerAnswer {
        let v: Value = serde_json::from_slice(report).unwrap_or(Value::Null);
        let kind = match v.get("kind").and_then(Value::as_str) {
            Some("unreadable") => ViolationKind::Unreadable,
            _ => ViolationKind::Crash,
        };
        let detail = v.get("detail").and_then(Value::as_str).unwrap_or("the harness reported an error").to_string();
        self.violation(kind, detail)
    }
}

impl Drop for ProcessPlayer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Makes a file or folder of the agent's readable by the user the sandbox runs it as (gbely as
/// root may have a umask that hides them).
fn readable(path: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(())
    }
}
