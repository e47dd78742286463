//! The sandbox against hostile agents (issue: agents isolated as at the judge). Each test plays
//! an attack that a competitor's agent made on today's runner, once with `--no-sandbox` (the
//! attack must work: the test would fail without the sandbox) and once with the sandbox (it
//! must not). The agents say what they achieved in their logs (`HOSTILE key=value`), and the
//! engine's own view (discards, violations, surviving processes) is checked too.
//!
//! Linux only; the sandbox must be available (`./run-tests` installs bubblewrap): a machine
//! without it fails here rather than passing unprotected. All tests take one lock: the CPU test
//! needs the cores to itself, and the others should not disturb it. For the same reason this file
//! is a test program of its own, not a module of `tests/integration` (whose tests would run beside
//! these in one process): cargo runs test programs one after another.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

mod common;
use common::{processes_with, scratch};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// What every hostile agent shares: reporting, and finding the victim's processes in `/proc`.
const PRELUDE: &str = r#"
import json, os, signal, socket, subprocess, sys, time

def report(key, value):
    print("HOSTILE %s=%s" % (key, value), file=sys.stderr, flush=True)

def victims():
    """The victim agent's harness processes this agent can see."""
    me, out = os.getpid(), []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if b"gbely_harness" in cmd and b"victim" in cmd:
            out.append(int(d))
    return out
"#;

/// A victim: answers nothing after `wait` seconds, keeping a secret in its memory.
fn victim(wait: f64) -> String {
    format!(
        "import time\nSECRET = '-'.join(['victim', 'memory', '7f3a9'])\n\
         def decide(stav):\n    time.sleep({wait})\n    return []\n"
    )
}

struct Played {
    json: serde_json::Value,
    dir: PathBuf,
}

impl Played {
    fn side(&self, seat: usize) -> &serde_json::Value {
        &self.json["sides"][seat]["details"]
    }
    fn violations(&self, seat: usize) -> usize {
        self.side(seat)["violations"].as_array().map_or(0, Vec::len)
    }
    fn discarded(&self, seat: usize) -> u64 {
        self.side(seat)["discarded"].as_object().map_or(0, |m| m.values().filter_map(|v| v.as_u64()).sum())
    }
    fn log(&self, seat: usize) -> String {
        let path = self.side(seat)["log"].as_str().expect("a log");
        std::fs::read_to_string(self.dir.join(path)).unwrap_or_default()
    }
    /// The values the agent of `seat` reported for `key`, one per report.
    fn reported(&self, seat: usize, key: &str) -> Vec<i64> {
        let prefix = format!("HOSTILE {key}=");
        self.log(seat).lines().filter_map(|l| l.strip_prefix(&prefix)?.trim().parse().ok()).collect()
    }
    fn isolated(&self) -> bool {
        self.json["isolation"]["sandboxed"].as_bool().expect("an isolation field")
    }
}

/// Plays `hostile` (seat 0) against `opponent` (a file's source, or a built-in agent) with the
/// `gbely` command line, sandboxed or not.
fn duel(name: &str, hostile: &str, opponent: Option<&str>, sandbox: bool, extra: &[&str]) -> Played {
    duel_with(name, hostile, opponent.map(|o| ("victim.py", o)), sandbox, extra, Start::default())
}

/// How a duel's `gbely` is started.
#[derive(Default)]
struct Start<'a> {
    /// Through `/bin/sh -c "SCRIPT; exec gbely …"` (the script sees the test's folder as `$0`).
    shell: Option<&'a str>,
    /// The run folder gbely names itself (`gbely-runs/DATE-hostile-vs-OPPONENT`), not `run`.
    default_run_dir: bool,
    /// As an ordinary user: `nobody` (through `setpriv`, with a copy of gbely and the system's
    /// Python) when the test runs as root, else the test's own user.
    ordinary_user: bool,
}

fn duel_with(
    name: &str,
    hostile: &str,
    opponent: Option<(&str, &str)>,
    sandbox: bool,
    extra: &[&str],
    start: Start,
) -> Played {
    let dir = scratch(&format!("{name}-{}", if sandbox { "sandbox" } else { "bare" }));
    std::fs::write(dir.join("hostile.py"), format!("{PRELUDE}\n{hostile}")).unwrap();
    let mut args: Vec<String> = vec!["play".into(), "hostile.py".into(), "--json".into()];
    if !start.default_run_dir {
        args.extend(["--run-dir".into(), "run".into()]);
    }
    if let Some((file, src)) = opponent {
        std::fs::write(dir.join(file), src).unwrap();
        args.extend(["--opponent".into(), file.into()]);
    }
    args.push(if sandbox { "--sandbox=require".into() } else { "--no-sandbox".into() });
    args.extend(extra.iter().map(|s| s.to_string()));
    let root = nix::unistd::geteuid().is_root();
    let mut cmd = match start.shell {
        _ if start.ordinary_user && root => {
            let nobody = nix::unistd::Uid::from_raw(65534);
            nix::unistd::chown(&dir, Some(nobody), Some(nix::unistd::Gid::from_raw(65534))).unwrap();
            // A copy of gbely nobody can reach (the build may live in root's private home).
            let bin = dir.join("gbely");
            std::fs::copy(env!("CARGO_BIN_EXE_gbely"), &bin).unwrap();
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(bin);
            c.env_clear().env("PATH", "/usr/bin:/bin").env("HOME", &dir);
            c
        }
        Some(script) => {
            let mut c = Command::new("/bin/sh");
            c.arg("-c").arg(format!("{script}; exec \"$@\"")).arg(&dir).arg(env!("CARGO_BIN_EXE_gbely"));
            c
        }
        None => Command::new(env!("CARGO_BIN_EXE_gbely")),
    };
    if start.ordinary_user && root {
        // A Python every user can run (root's own may live in its private home).
        let python = ["/usr/bin/python3", "/usr/local/bin/python3"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("a run as an ordinary user needs a Python outside root's home: /usr/bin/python3");
        args.extend(["--python".into(), python.into()]);
    }
    let out = cmd.args(&args).current_dir(&dir).output().expect("gbely runs");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    });
    let played = Played { json, dir };
    if !start.ordinary_user {
        assert_eq!(played.isolated(), sandbox, "{}", played.json["isolation"]);
    }
    played
}

#[test]
fn row1_an_agent_cannot_forge_the_other_seats_answer() {
    let _one = serial();
    let hostile = r#"
def decide(stav):
    forged = 0
    for pid in victims():
        try:
            with open("/proc/%d/fd/3" % pid, "w") as f:
                f.write(json.dumps({"prikazy": [{"typ": "FORGED"}]}) + "\n")
            forged += 1
        except OSError:
            pass
    report("forged", forged)
    return []
"#;
    let victim = victim(0.3);
    let bare = duel("forge", hostile, Some(&victim), false, &["--rounds", "4"]);
    assert!(bare.reported(0, "forged").iter().sum::<i64>() > 0, "{}", bare.log(0));
    assert!(bare.discarded(1) > 0, "the forged commands reached the engine as the victim's");
    let boxed = duel("forge", hostile, Some(&victim), true, &["--rounds", "4"]);
    assert_eq!(boxed.reported(0, "forged"), vec![0; 4], "{}", boxed.log(0));
    assert_eq!(boxed.discarded(1), 0);
    assert_eq!(boxed.violations(1), 0);
}

#[test]
fn row2_an_agent_cannot_read_the_replay_the_logs_or_the_other_seat() {
    let _one = serial();
    let hostile = r#"
def decide(stav):
    found = 0
    for base in {os.getcwd(), os.path.dirname(os.path.abspath(__file__))}:
        d = base
        for _ in range(4):
            d = os.path.dirname(d)
            for name in ("replay.json.gz", "seat1-victim.log", ".seat1", "victim.py"):
                if os.path.exists(os.path.join(d, name)):
                    found += 1
    report("found", found)
    return []
"#;
    let bare = duel("records", hostile, Some(&victim(0.0)), false, &["--rounds", "2"]);
    assert!(bare.reported(0, "found").iter().all(|&n| n > 0), "{}", bare.log(0));
    let boxed = duel("records", hostile, Some(&victim(0.0)), true, &["--rounds", "2"]);
    assert_eq!(boxed.reported(0, "found"), vec![0, 0], "{}", boxed.log(0));
}

#[test]
fn row3_an_agent_cannot_read_the_other_agents_memory() {
    let _one = serial();
    let hostile = r#"
NEEDLE = b"victim-memory-" + b"7f3a9"

def scan(pid):
    with open("/proc/%d/maps" % pid) as m:
        regions = m.read().splitlines()
    with open("/proc/%d/mem" % pid, "rb", 0) as mem:
        for line in regions:
            addr, perms = line.split()[:2]
            lo, hi = (int(x, 16) for x in addr.split("-"))
            if not perms.startswith("rw") or hi - lo > (64 << 20):
                continue
            try:
                mem.seek(lo)
                if NEEDLE in mem.read(hi - lo):
                    return True
            except (OSError, ValueError, OverflowError):
                continue
    return False

def decide(stav):
    seen = 0
    for pid in victims():
        try:
            seen += scan(pid)
        except OSError:
            pass
    report("read", seen)
    return []
"#;
    // Reading another process's memory takes ptrace rights: root has them, a user has them over
    // their own processes unless Yama restricts it.
    let ptrace_scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope").unwrap_or_default();
    if nix::unistd::geteuid().is_root() || ptrace_scope.trim() == "0" {
        let bare = duel("memory", hostile, Some(&victim(0.3)), false, &["--rounds", "2"]);
        assert!(bare.reported(0, "read").iter().any(|&n| n > 0), "{}", bare.log(0));
    }
    let boxed = duel("memory", hostile, Some(&victim(0.3)), true, &["--rounds", "2"]);
    assert_eq!(boxed.reported(0, "read"), vec![0, 0], "{}", boxed.log(0));
}

#[test]
fn row4_an_agent_cannot_read_the_engines_command_line_or_run_the_engine() {
    let _one = serial();
    let hostile = r#"
def decide(stav):
    seen = engine = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                seen += b"s3cret-map" in f.read()
        except OSError:
            pass
        try:
            engine += os.path.basename(os.readlink("/proc/%s/exe" % d)) == "gbely"
        except OSError:
            pass
    report("cmdline", seen)
    report("engine", engine)
    return []
"#;
    let args = ["--rounds", "1", "--map", "seed:s3cret-map", "--size", "20"];
    let bare = duel("cmdline", hostile, None, false, &args);
    assert_eq!(bare.reported(0, "cmdline"), vec![1], "{}", bare.log(0));
    assert!(bare.reported(0, "engine")[0] >= 1, "{}", bare.log(0));
    let boxed = duel("cmdline", hostile, None, true, &args);
    assert_eq!(boxed.reported(0, "cmdline"), vec![0], "{}", boxed.log(0));
    assert_eq!(boxed.reported(0, "engine"), vec![0], "{}", boxed.log(0));
}

#[test]
fn row5_an_agent_cannot_reach_the_live_page() {
    let _one = serial();
    let hostile = r#"
def decide(stav):
    ports = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        ports += [int(l.split()[1].split(":")[1], 16) for l in lines if l.split()[3] == "0A"]
    reached = 0
    for port in set(ports):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            reached += 1
        except OSError:
            pass
    report("listeners", reached)
    return []
"#;
    let args = ["--rounds", "2", "--watch", "--no-open"];
    let bare = duel("live", hostile, None, false, &args);
    assert!(bare.reported(0, "listeners").iter().all(|&n| n > 0), "{}", bare.log(0));
    let boxed = duel("live", hostile, None, true, &args);
    assert_eq!(boxed.reported(0, "listeners"), vec![0, 0], "{}", boxed.log(0));
}

#[test]
fn row6_spinning_children_cannot_starve_the_other_agent() {
    // Six spinning children (three per core where there are more cores) against an agent that
    // needs 0.8 s of CPU a round.
    let _one = serial();
    let cpus = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
    let count = (0..nix::sched::CpuSet::count()).filter(|&c| cpus.is_set(c).unwrap_or(false)).count();
    assert!(count >= 2, "this test needs two cores (one per agent)");
    let hostile = r#"
started = False

def decide(stav):
    global started
    if not started:
        started = True
        # Enough to starve an opponent on any number of cores without the sandbox.
        for _ in range(max(6, 3 * os.cpu_count())):
            if os.fork() == 0:
                while True:
                    pass
    return []
"#;
    // Needs 0.8 s of CPU a round: on a core of its own it answers in time.
    let needy = "import time\n\
                 def decide(stav):\n    t = time.process_time()\n    while time.process_time() - t < 0.8:\n        pass\n    return []\n";
    let bare = duel("cpu", hostile, Some(needy), false, &["--rounds", "4"]);
    assert!(bare.violations(1) > 0, "6 spinning processes starve it without the sandbox");
    let boxed = duel("cpu", hostile, Some(needy), true, &["--rounds", "4"]);
    assert_eq!(boxed.violations(1), 0, "{:?}", boxed.side(1)["violations"]);
    assert_eq!(boxed.violations(0), 0);
}

/// A grandchild that leaves the agent's session and clears its environment, then the agent
/// crashes: the grandchild must die with it (library use, no subreaper, as a league's match).
#[test]
fn row7_a_detached_grandchild_dies_with_its_agent() {
    use gbely_engine::game::{play, PlayOptions};
    use gbely_engine::runner::player::{DecidePlayer, Player};
    use gbely_engine::runner::process::{AgentCommand, ProcessConfig, ProcessPlayer};
    use gbely_engine::runner::sandbox::SandboxMode;
    let _one = serial();
    for (mode, survives) in [(SandboxMode::Off, true), (SandboxMode::Require, false)] {
        let marker = format!("9999.{}{}", std::process::id(), survives as u8);
        let source = format!(
            "{PRELUDE}\ndef decide(stav):\n    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n            \
             os.execve('/bin/sleep', ['sleep', '{marker}'], {{}})\n        os._exit(0)\n    time.sleep(0.3)\n    \
             raise RuntimeError('crash')\n"
        );
        let dir = scratch(&format!("grandchild-{survives}"));
        let file = dir.join("hostile.py");
        std::fs::write(&file, source).unwrap();
        let mut cfg = ProcessConfig::new(dir.join("work"), dir.join("agent.log"));
        cfg.sandbox = mode;
        let mut agent =
            ProcessPlayer::new("hostile", AgentCommand::Python { file, python: "python3".into() }, cfg).unwrap();
        let mut council = DecidePlayer::new("council", gbely_council::Council::new());
        let mut players: [&mut dyn Player; 2] = [&mut agent, &mut council];
        let opts = PlayOptions { config: gbely_engine::sim::MatchConfig { rounds: 1 }, record: false };
        let rec = play(Arc::new(gbely_world::reference_map()), &mut players, opts, &mut ());
        assert_eq!(rec.violations[0].len(), 1);
        drop(agent);
        std::thread::sleep(Duration::from_millis(300));
        let left = processes_with(&marker);
        let _ = Command::new("pkill").args(["-9", "-f", &marker]).status();
        assert_eq!(left > 0, survives, "{mode:?}: {left} left");
    }
}

#[test]
fn row8_agents_die_when_gbely_is_killed() {
    let _one = serial();
    for sandbox in [false, true] {
        let dir = scratch(&format!("killed-{sandbox}"));
        let marker = format!("8888.{}{}", std::process::id(), sandbox as u8);
        let source =
            format!("import subprocess, time\nsubprocess.Popen(['sleep', '{marker}'])\ndef decide(stav):\n    time.sleep(100)\n");
        std::fs::write(dir.join("sleeper.py"), source).unwrap();
        let mode = if sandbox { "--sandbox=require" } else { "--no-sandbox" };
        let mut gbely = Command::new(env!("CARGO_BIN_EXE_gbely"))
            .args(["play", "sleeper.py", "--quiet", "--time-limit", "off", mode])
            .current_dir(&dir)
            .spawn()
            .unwrap();
        let t = Instant::now();
        while processes_with(&marker) == 0 && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(processes_with(&marker), 1, "the agent started its child");
        gbely.kill().unwrap(); // SIGKILL
        gbely.wait().unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let left = processes_with(&marker);
        let _ = Command::new("pkill").args(["-9", "-f", &marker]).status();
        let _ = Command::new("pkill").args(["-9", "-f", &dir.join("sleeper.py").display().to_string()]).status();
        assert_eq!(left == 0, sandbox, "sandbox {sandbox}: {left} process(es) of the agent outlived gbely");
    }
}

#[test]
fn row9_an_agent_cannot_kill_the_other_agent() {
    let _one = serial();
    let hostile = r#"
def decide(stav):
    killed = 0
    for pid in victims():
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except OSError:
            pass
    report("killed", killed)
    return []
"#;
    let bare = duel("kill", hostile, Some(&victim(0.2)), false, &["--rounds", "3"]);
    assert!(bare.violations(1) > 0, "{}", bare.log(0));
    let boxed = duel("kill", hostile, Some(&victim(0.2)), true, &["--rounds", "3"]);
    assert_eq!(boxed.reported(0, "killed"), vec![0, 0, 0]);
    assert_eq!(boxed.violations(1), 0);
}

#[test]
fn row10_forks_disk_and_network_are_held() {
    let _one = serial();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hostile = format!(
        r#"
def decide(stav):
    forks = 0
    for _ in range(300):
        try:
            if os.fork() == 0:
                time.sleep(3)
                os._exit(0)
            forks += 1
        except OSError:
            break
    report("forks", forks)
    written = 0
    chunk = b"x" * (1 << 20)
    try:
        with open("junk", "wb") as f:
            for _ in range(100):
                f.write(chunk)
                f.flush()
                written += 1
    except OSError:
        pass
    report("mib", written)
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=1).close()
        report("tcp", 1)
    except OSError:
        report("tcp", 0)
    report("resolver", int(os.path.exists("/etc/resolv.conf")))
    return []
"#
    );
    let bare = duel("resources", &hostile, None, false, &["--rounds", "1", "--time-limit", "20"]);
    assert_eq!(bare.reported(0, "forks"), vec![300], "{}", bare.log(0));
    assert_eq!(bare.reported(0, "mib"), vec![100]);
    assert_eq!(bare.reported(0, "tcp"), vec![1]);
    let boxed = duel("resources", &hostile, None, true, &["--rounds", "1", "--time-limit", "20"]);
    let forks = boxed.reported(0, "forks");
    assert!(forks.len() == 1 && forks[0] < 256, "{}", boxed.log(0));
    assert_eq!(boxed.reported(0, "mib"), vec![64], "the scratch holds 64 MiB: {}", boxed.log(0));
    assert_eq!(boxed.reported(0, "tcp"), vec![0], "no network beyond its own loopback");
    assert_eq!(boxed.reported(0, "resolver"), vec![0]);
    drop(listener);
    // The bare run's 100 MB of junk stays on the disk otherwise.
    let _ = std::fs::remove_dir_all(&bare.dir);
}

#[test]
fn agents_run_unprivileged_in_their_own_pid_namespace() {
    let _one = serial();
    let hostile = r#"
def decide(stav):
    report("uid", os.getuid())
    with open("/proc/self/status") as f:
        caps = [l.split()[1] for l in f if l.startswith("CapEff")]
    report("caps", int(caps[0], 16))
    report("pid", os.getpid())
    return []
"#;
    let boxed = duel("uid", hostile, None, true, &["--rounds", "1"]);
    assert_ne!(boxed.reported(0, "uid"), vec![0], "{}", boxed.log(0));
    assert_eq!(boxed.reported(0, "caps"), vec![0]);
    // Its own pid namespace: the sandbox's init is 1, the agent a low number after it.
    assert!(boxed.reported(0, "pid")[0] < 10, "{}", boxed.log(0));
}

fn agents_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../agents"))
}

/// The replay's JSON without its answer times: the one part of a replay that is measured, not
/// played (docs/replay-format.md), and the sandbox's start-up shows in it.
fn replay_of(dir: &Path, mode: &str) -> String {
    let agents = agents_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_gbely"))
        .args(["play", "--quiet", "--replay", "r.json", "--run-dir", "run", mode, "--rounds", "30"])
        .arg(agents.join("expander.py"))
        .arg("--opponent")
        .arg(agents.join("my_agent.py"))
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut replay = gbely_world::Replay::from_json(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    assert!(replay.turns.iter().all(|t| t.answer_ms.iter().all(Option::is_some)), "both seats are timed");
    for t in &mut replay.turns {
        t.answer_ms.clear();
    }
    replay.to_json()
}

#[test]
fn the_example_agents_play_the_same_replay_with_and_without_the_sandbox() {
    let _one = serial();
    let bare = replay_of(&scratch("same-bare"), "--no-sandbox");
    let boxed = replay_of(&scratch("same-boxed"), "--sandbox=require");
    assert!(bare.len() > 1000);
    assert!(bare == boxed, "the replays differ");
}

/// Where namespaces cannot be made (here: a `bwrap` that fails as it does when user namespaces
/// are disabled), agents play unsandboxed and the summary says so; `--sandbox require` refuses.
#[test]
fn without_namespaces_the_summary_says_so_and_require_refuses() {
    let _one = serial();
    let dir = scratch("fallback");
    let fake = dir.join("bwrap");
    std::fs::write(
        &fake,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'bubblewrap 0.8.0'; exit 0; }\n\
         echo 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow \
         non-privileged user namespaces' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let agent = agents_dir().join("my_agent.py");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_gbely"))
            .arg("play")
            .arg(&agent)
            .args(["--rounds", "2", "--run-dir", "run"])
            .args(args)
            .env("GBELY_BWRAP", &fake)
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert!(out.status.success());
    let summary = String::from_utf8_lossy(&out.stdout);
    let line = summary.lines().find(|l| l.trim_start().starts_with("agents: ")).expect("an isolation line");
    assert!(line.contains("not sandboxed") && line.contains("No permissions to creating new namespace"), "{line}");
    let json: serde_json::Value = serde_json::from_slice(&run(&["--json"]).stdout).unwrap();
    assert_eq!(json["isolation"]["sandboxed"], false);
    let refused = run(&["--sandbox", "require"]);
    assert_eq!(refused.status.code(), Some(1));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("the sandbox is required (--sandbox require) but not available here"), "{err}");
}

/// A league shares the cores by turns: an agent's spinning children, left behind when it
/// answered, must not take the core lent to the next agent (in the sandbox a league's agent is
/// stopped between its turns, and confined to the core its turn lends it).
#[test]
fn in_a_league_spinning_children_cannot_starve_another_match() {
    let _one = serial();
    let dir = scratch("league-cpu");
    std::fs::write(
        dir.join("spinner.py"),
        "import os\nstarted = False\ndef decide(stav):\n    global started\n    if not started:\n        \
         started = True\n        for _ in range(max(6, 3 * os.cpu_count())):\n            if os.fork() == 0:\n                while True:\n                    pass\n    return []\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("needy.py"),
        "import time\ndef decide(stav):\n    t = time.process_time()\n    while time.process_time() - t < 0.6:\n        pass\n    return []\n",
    )
    .unwrap();
    let league = |mode: &str| -> u64 {
        let db = format!("{}.sqlite", mode.trim_start_matches('-').replace('=', "-"));
        let out = Command::new(env!("CARGO_BIN_EXE_gbely"))
            .args(["league", "spinner.py", "needy.py", "--maps", "1", "--rounds", "4", "--jobs", "2", "--json"])
            .args(["--db", &db, mode])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let needy = json["standings"].as_array().unwrap().iter().find(|s| s["name"] == "needy.py").unwrap().clone();
        needy["violations"].as_u64().unwrap()
    };
    assert!(league("--no-sandbox") > 0, "without the sandbox the spinners starve it");
    assert_eq!(league("--sandbox=require"), 0);
}

/// How a league parks an agent between its turns: every process of its tree stopped, children
/// forked by children included, and all of them running again when its turn comes.
#[test]
fn a_parked_tree_is_stopped_whole_and_continues_whole() {
    use gbely_engine::runner::sandbox::{continue_tree, stop_tree, tree_tasks};
    let _one = serial();
    // Its own process group, killed whole however the test ends.
    struct Group(std::process::Child);
    impl Drop for Group {
        fn drop(&mut self) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(self.0.id() as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            let _ = self.0.wait();
        }
    }
    let root = Group(
        std::os::unix::process::CommandExt::process_group(
            Command::new("/bin/sh")
                .arg("-c")
                .arg("sh -c 'sleep 30 & sleep 30 & wait' & sh -c 'while :; do :; done' & wait"),
            0,
        )
        .spawn()
        .unwrap(),
    );
    let pid = root.0.id();
    let t = Instant::now();
    while tree_tasks(pid).len() < 5 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let tasks = tree_tasks(pid);
    assert_eq!(tasks.len(), 5, "sh, the sh of two sleeps, two sleeps and a spinning sh");
    let state = |t: u32| {
        let stat = std::fs::read_to_string(format!("/proc/{t}/stat")).unwrap_or_default();
        stat.rsplit_once(')').and_then(|(_, r)| r.trim_start().chars().next()).unwrap_or('?')
    };
    let states = || tasks.iter().map(|&t| state(t)).collect::<String>();
    stop_tree(pid);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(states(), "TTTTT");
    continue_tree(pid);
    std::thread::sleep(Duration::from_millis(100));
    assert!(!states().contains('T'), "{}", states());
    drop(root);
}

/// `--memory-limit` holds each process's address space; in the sandbox, where this machine
/// gives gbely a control group (as root, cgroup v1 or v2), it also holds all of an agent's
/// processes together: four children of 200 MB each under a limit of 512 MiB cannot all live.
#[test]
fn the_memory_of_all_an_agents_processes_is_held_together() {
    let _one = serial();
    let hostile = r#"
kids = []

def decide(stav):
    if not kids:
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                x = b"x" * (200 << 20)
                time.sleep(1.5)
                os._exit(0)
            kids.append(pid)
        ok = 0
        for pid in kids:
            _, status = os.waitpid(pid, 0)
            ok += os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        report("lived", ok)
    return []
"#;
    let args = ["--rounds", "1", "--memory-limit", "512", "--time-limit", "20"];
    let bare = duel("memory-total", hostile, None, false, &args);
    assert_eq!(bare.reported(0, "lived"), vec![4], "{}", bare.log(0));
    let boxed = duel("memory-total", hostile, None, true, &args);
    let line = boxed.json["isolation"]["detail"].as_str().unwrap().to_string();
    if line.contains("memory held in total") {
        let lived = boxed.reported(0, "lived");
        assert!(lived.len() == 1 && lived[0] < 4, "{}", boxed.log(0));
    } else {
        // Not root, or no cgroup to use: the summary says so.
        assert!(line.contains("memory held per process, not in total"), "{line}");
        assert!(!nix::unistd::geteuid().is_root() || !Path::new("/sys/fs/cgroup").exists(), "{line}");
    }
}

/// Calls system calls by number from Python (`ctypes`): `sys(NR, args…)` is 0 when the call
/// succeeds, else its errno.
const SYSCALL: &str = r#"
import ctypes
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long

def sys_call(nr, *args):
    ctypes.set_errno(0)
    r = _libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return 0 if r >= 0 else ctypes.get_errno()
"#;

const ENOSYS: i64 = 38;
const EPERM: i64 = 1;

/// The number of `call` here, for an agent's `sys_call` (from the engine, which takes them from
/// the `libc` crate; what the filter answers is written in each test by hand).
fn nr(call: &str) -> i64 {
    gbely_engine::runner::seccomp::number(call).unwrap_or_else(|| panic!("{call} has no number here"))
}

/// Row 2 of issue 36: io_uring with SQPOLL on the other seat's core. The kernel's polling thread
/// spins there, and no affinity moves it: an opponent needing 0.8 s of CPU a round timed out. In
/// the sandbox io_uring is not there (`ENOSYS`), and the opponent has its core.
#[test]
fn issue36_row2_io_uring_polling_threads_cannot_spin_on_the_other_seats_core() {
    let _one = serial();
    let hostile = format!(
        r#"{SYSCALL}
rings = []

def decide(stav):
    if not rings:
        mine = os.sched_getaffinity(0)
        others = [c for c in range(os.cpu_count()) if c not in mine] or list(mine)
        refused = 0
        for cpu in others * 4:
            params = (ctypes.c_uint32 * 30)()
            params[2] = 2 | 4          # IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF
            params[3] = cpu            # sq_thread_cpu
            params[4] = 600000         # sq_thread_idle (ms): spin, never sleep
            ctypes.set_errno(0)
            fd = _libc.syscall(ctypes.c_long({setup}), ctypes.c_long(8), ctypes.byref(params))
            if fd >= 0:
                rings.append(fd)
            else:
                refused = ctypes.get_errno()
        rings.append(-1)
        report("rings", len(rings) - 1)
        report("refused", refused)
    return []
"#,
        setup = nr("io_uring_setup")
    );
    let needy = "import time\n\
                 def decide(stav):\n    t = time.process_time()\n    while time.process_time() - t < 0.8:\n        pass\n    return []\n";
    let boxed = duel("uring", &hostile, Some(needy), true, &["--rounds", "4"]);
    assert_eq!(boxed.reported(0, "rings"), vec![0], "{}", boxed.log(0));
    assert_eq!(boxed.reported(0, "refused"), vec![ENOSYS], "{}", boxed.log(0));
    assert_eq!(boxed.violations(1), 0, "{:?}", boxed.side(1)["violations"]);
}

/// Rows 4 and 11 of issue 36, and the system-call policy call by call: each call the judge's
/// agents never need is tried with harmless arguments (on a machine without the policy they fail
/// for other reasons — `EFAULT`, `EBADF`, `EPERM` without privileges — or succeed), and must fail
/// with `ENOSYS`, as on a kernel built without it. What must keep working works.
#[test]
fn issue36_rows4_11_the_calls_the_judge_does_not_give_are_refused() {
    let _one = serial();
    // (call, arguments): pointers are NULL, descriptors -1 or a pipe, flags invalid where a
    // valid call would change the agent (clone: CLONE_NEWUSER with CLONE_THREAD).
    let mut refused: Vec<(&str, Vec<i64>)> = vec![
        ("io_uring_setup", vec![0, 0]),
        ("io_uring_enter", vec![-1, 0, 0, 0, 0, 0]),
        ("io_uring_register", vec![-1, 0, 0, 0]),
        ("add_key", vec![0, 0, 0, 0, 0]),
        ("request_key", vec![0, 0, 0, 0]),
        ("keyctl", vec![0, -3, 0]), // KEYCTL_GET_KEYRING_ID of the session keyring
        ("clone", vec![0x1000_0000 | 0x10000, 0, 0, 0, 0]),
        ("clone3", vec![0, 0]),
        ("unshare", vec![0x4000_0000]), // CLONE_NEWNET: needs privileges without the filter
        ("setns", vec![-1, 0]),
        ("mount", vec![0, 0, 0, 0, 0]),
        ("umount2", vec![0, 0]),
        ("fsopen", vec![0, 0]),
        ("fsconfig", vec![-1, 0, 0, 0, 0]),
        ("fsmount", vec![-1, 0, 0]),
        ("fspick", vec![-1, 0, 0]),
        ("open_tree", vec![-1, 0, 0]),
        ("move_mount", vec![-1, 0, -1, 0, 0]),
        ("mount_setattr", vec![-1, 0, 0, 0, 0]),
        ("pivot_root", vec![0, 0]),
        ("chroot", vec![0]),
        ("personality", vec![0x0040000]), // ADDR_NO_RANDOMIZE
        ("bpf", vec![0, 0, 0]),
        ("perf_event_open", vec![0, 0, -1, -1, 0]),
        ("userfaultfd", vec![0]),
        ("ptrace", vec![0x7fff, 1, 0, 0]),
        ("process_vm_readv", vec![1, 0, 0, 0, 0, 0]),
        ("process_vm_writev", vec![1, 0, 0, 0, 0, 0]),
        ("process_madvise", vec![-1, 0, 0, 0, 0]),
        ("pidfd_getfd", vec![-1, 0, 0]),
        ("kcmp", vec![1, 1, 0, 0, 0]),
        ("init_module", vec![0, 0, 0]),
        ("finit_module", vec![-1, 0, 0]),
        ("delete_module", vec![0, 0]),
        ("kexec_load", vec![0, 0, 0, 0]),
        ("kexec_file_load", vec![-1, -1, 0, 0, 0]),
        ("reboot", vec![0, 0, 0, 0]),
        ("swapon", vec![0, 0]),
        ("swapoff", vec![0]),
        ("acct", vec![0]),
        ("quotactl", vec![0, 0, 0, 0]),
        ("syslog", vec![10, 0, 0]), // SYSLOG_ACTION_SIZE_BUFFER
        ("open_by_handle_at", vec![-1, 0, 0]),
        ("socket", vec![16, 3, 15]), // AF_NETLINK, SOCK_RAW, NETLINK_KOBJECT_UEVENT
        ("inotify_init1", vec![0]),
        ("fanotify_init", vec![0, 0]),
        ("fcntl", vec![0, 1026, 0]), // F_NOTIFY
    ];
    if cfg!(target_arch = "x86_64") {
        refused.extend([("inotify_init", vec![]), ("iopl", vec![3]), ("ioperm", vec![0, 1, 1])]);
    }
    // Still there: what a Python agent and its libraries use.
    let allowed: Vec<(&str, Vec<i64>)> = vec![
        ("personality", vec![0xffff_ffff]), // the query
        ("socket", vec![16, 3, 0]),         // NETLINK_ROUTE (glibc's getaddrinfo, getifaddrs)
        ("fcntl", vec![0, 1, 0]),           // F_GETFD
        ("unshare", vec![0]),
    ];
    let call = |(name, args): &(&str, Vec<i64>)| {
        let args: Vec<String> = std::iter::once(nr(name)).chain(args.iter().copied()).map(|a| a.to_string()).collect();
        format!("    report('{name}', sys_call({}))\n", args.join(", "))
    };
    let mut source = format!("{SYSCALL}\ndef decide(stav):\n");
    source.extend(refused.iter().map(call));
    source.push_str("    report('affinity', sys_call(");
    source.push_str(&format!(
        "{}, 0, 128, ctypes.addressof((ctypes.c_uint64 * 16)(*[~0] * 16))))\n",
        nr("sched_setaffinity")
    ));
    source.push_str("    return []\n");
    let boxed = duel("calls", &source, None, true, &["--rounds", "1"]);
    let log = boxed.log(0);
    let mut wrong = Vec::new();
    for (name, _) in &refused {
        let got = boxed.reported(0, name);
        if got.first() != Some(&ENOSYS) {
            wrong.push(format!("{name}: {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "not refused with ENOSYS: {wrong:?}\n{log}");
    assert_eq!(boxed.reported(0, "affinity"), vec![EPERM], "{log}");
    let mut source = format!("{SYSCALL}\ndef decide(stav):\n");
    source.extend(allowed.iter().map(call));
    source.push_str("    return []\n");
    let boxed = duel("calls-allowed", &source, None, true, &["--rounds", "1"]);
    for (name, _) in &allowed {
        assert_eq!(boxed.reported(0, name), vec![0], "{name}: {}", boxed.log(0));
    }
}

/// Row 11 of issue 36 as an attacker does it: a child makes a user namespace (with capabilities
/// in it) and mounts a tmpfs in a mount namespace of its own — a large kernel surface the judge
/// does not give. Refused.
#[test]
fn issue36_row11_no_user_namespace_and_no_mount_inside_it() {
    let _one = serial();
    let hostile = format!(
        r#"{SYSCALL}
def decide(stav):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        got = sys_call({unshare}, 0x10000000 | 0x20000)   # CLONE_NEWUSER | CLONE_NEWNS
        if got == 0:
            libc_mount = _libc.mount
            libc_mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_void_p]
            ctypes.set_errno(0)
            got = 1000 + (0 if libc_mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0 else ctypes.get_errno())
        os.write(w, str(got).encode())
        os._exit(0)
    os.close(w)
    got = int(os.read(r, 16) or b"-1")
    os.waitpid(pid, 0)
    report("userns", got)
    return []
"#,
        unshare = nr("unshare"),
    );
    let boxed = duel("userns", &hostile, None, true, &["--rounds", "1"]);
    // 1000: a user namespace and a mounted tmpfs; 1000 + errno: the namespace, not the mount.
    assert_eq!(boxed.reported(0, "userns"), vec![ENOSYS], "{}", boxed.log(0));
}

/// Row 3 of issue 36: descriptors left open by whoever started gbely (here a shell's `exec 7</`
/// and a file of the run folder open for writing as 8) reached every agent: it listed the
/// host's `/` and wrote the file. Now an agent has its pipes only, in the sandbox and without.
#[test]
fn issue36_row3_descriptors_left_open_by_the_caller_do_not_reach_agents() {
    let _one = serial();
    let hostile = r#"
def decide(stav):
    extra = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue  # the listing's own descriptor, closed by now
        if int(fd) > 2 and not target.startswith("pipe:"):
            extra += 1
    report("extra", extra)
    try:
        report("root", len(os.listdir(7)))
    except OSError:
        report("root", 0)
    try:
        report("wrote", os.write(8, b"written by the agent\n"))
    except OSError:
        report("wrote", 0)
    return []
"#;
    for sandbox in [true, false] {
        // A file of the run folder, open for writing, as a caller's tool might hold it.
        let start =
            Start { shell: Some("mkdir -p \"$0/run\" && exec 7</ 8>>\"$0/run/caller.txt\""), ..Start::default() };
        let played = duel_with("fds", hostile, None, sandbox, &["--rounds", "1"], start);
        let log = played.log(0);
        assert_eq!(played.reported(0, "extra"), vec![0], "sandbox {sandbox}: {log}");
        assert_eq!(played.reported(0, "root"), vec![0], "sandbox {sandbox}: {log}");
        assert_eq!(played.reported(0, "wrote"), vec![0], "sandbox {sandbox}: {log}");
        let written = std::fs::read_to_string(played.dir.join("run/caller.txt")).unwrap();
        assert_eq!(written, "", "sandbox {sandbox}");
    }
}

/// Row 5 of issue 36: `/dev` and `/dev/shm` were writable without a cap (1 GiB each, as an
/// ordinary user; as root `/dev/shm`). Now `/dev` is read-only and `/dev/shm` private, 64 MiB
/// like the other writable folders; a `memfd` is counted by the memory control group where there
/// is one, and refused where there is none.
#[test]
fn issue36_row5_dev_is_read_only_and_dev_shm_capped() {
    let _one = serial();
    let hostile = r#"
def fill(path, mib):
    written = 0
    chunk = b"x" * (1 << 20)
    try:
        with open(path, "wb") as f:
            for _ in range(mib):
                f.write(chunk)
                f.flush()
                written += 1
    except OSError:
        pass
    try:
        os.remove(path)
    except OSError:
        pass
    return written

def decide(stav):
    try:
        open("/dev/planted", "w").close()
        report("dev", 1)
    except OSError:
        report("dev", 0)
    report("shm", fill("/dev/shm/junk", 96))
    try:
        fd = os.memfd_create("junk")
        report("memfd", 1)
        os.close(fd)
    except OSError as e:
        report("memfd", -e.errno)
    return []
"#;
    let boxed = duel("dev", hostile, None, true, &["--rounds", "1"]);
    let log = boxed.log(0);
    assert_eq!(boxed.reported(0, "dev"), vec![0], "{log}");
    assert_eq!(boxed.reported(0, "shm"), vec![64], "{log}");
    let line = boxed.json["isolation"]["detail"].as_str().unwrap().to_string();
    let memfd = if line.contains("memory held in total") { 1 } else { -ENOSYS };
    assert_eq!(boxed.reported(0, "memfd"), vec![memfd], "{line}: {log}");
}

/// Row 12 of issue 36: the sandbox's init showed bubblewrap's arguments in `/proc/1/cmdline`,
/// among them the host's run folder, whose default name carries the opponent's name. Nothing
/// the agent can read in `/proc` (command lines, environments, mounts, control groups) or its
/// own environment names the run folder or the opponent now; without the sandbox it does.
#[test]
fn issue36_row12_nothing_inside_names_the_run_folder_or_the_opponent() {
    let _one = serial();
    let hostile = r#"
def texts():
    out = [os.getcwd(), repr(dict(os.environ))]
    for d in os.listdir("/proc"):
        if not (d.isdigit() or d == "self"):
            continue
        for name in ("cmdline", "environ", "mountinfo", "cgroup", "cwd"):
            path = "/proc/%s/%s" % (d, name)
            try:
                out.append(os.readlink(path) if name == "cwd" else open(path, "rb").read().decode("utf-8", "replace"))
            except OSError:
                pass
    return out

def decide(stav):
    needles = [NEEDLE_DIR, "opp" + "zq7"]
    found = [n for n in needles if any(n in t for t in texts())]
    report("found", len(found))
    print("found", found, file=sys.stderr)
    return []
"#;
    for (sandbox, ordinary_user) in [(false, false), (true, false), (true, true)] {
        let dir_name = format!("gbely-test-{}-sandbox-host", std::process::id());
        let hostile = format!("NEEDLE_DIR = {dir_name:?}\n{hostile}");
        let start = Start { default_run_dir: true, ordinary_user, ..Start::default() };
        let name = if ordinary_user { "host-user" } else { "host" };
        let played = duel_with(name, &hostile, Some(("oppzq7.py", &victim(0.0))), sandbox, &["--rounds", "1"], start);
        assert!(played.dir.to_string_lossy().contains(&dir_name));
        if ordinary_user && !played.isolated() {
            eprintln!("not sandboxed as an ordinary user here: {}", played.json["isolation"]);
            continue;
        }
        let found = played.reported(0, "found");
        if sandbox {
            assert_eq!(found, vec![0], "{}", played.log(0));
        } else {
            assert_eq!(found, vec![2], "without the sandbox its folder is in the run folder: {}", played.log(0));
        }
    }
}

/// Issue 36, what seats share: a lock on a file both seats can open (the runtime's) was a
/// channel from one seat to the other (one holds it or not; the other tries it each round). In
/// the sandbox locks are granted to everyone and hold nothing, so they carry nothing.
#[test]
fn issue36_locks_on_shared_files_carry_nothing_between_seats() {
    let _one = serial();
    let holder = r#"
import fcntl
held = open(os.__file__)
fcntl.flock(held, fcntl.LOCK_EX)

def decide(stav):
    return []
"#;
    let tester = r#"
import fcntl, os, sys, time

def decide(stav):
    time.sleep(0.2)
    with open(os.__file__) as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            blocked = 0
        except OSError:
            blocked = 1
    print("HOSTILE blocked=%d" % blocked, file=sys.stderr, flush=True)
    return []
"#;
    let bare = duel("locks", holder, Some(tester), false, &["--rounds", "3"]);
    assert!(bare.reported(1, "blocked").iter().sum::<i64>() > 0, "{}", bare.log(1));
    let boxed = duel("locks", holder, Some(tester), true, &["--rounds", "3"]);
    assert_eq!(boxed.reported(1, "blocked"), vec![0, 0, 0], "{}", boxed.log(1));
}

/// The control groups under `root` (depth-first, a few levels) named `gbely-PID-…`.
fn groups_of(pid: u32) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, prefix: &str, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let path = e.path();
            if !path.is_dir() || path.is_symlink() {
                continue;
            }
            if e.file_name().to_string_lossy().starts_with(prefix) {
                out.push(path);
            } else if depth > 0 {
                walk(&path, depth - 1, prefix, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(Path::new("/sys/fs/cgroup"), 5, &format!("gbely-{pid}-"), &mut out);
    out
}

/// Row 13 of issue 36: `kill -9` of gbely as root left its agents' memory control groups behind
/// for ever. The next gbely to start a sandboxed agent removes them.
#[test]
fn issue36_row13_control_groups_left_by_kill_9_are_removed_on_the_next_start() {
    let _one = serial();
    let dir = scratch("stale-groups");
    let file = format!("sleeper_{}.py", std::process::id());
    std::fs::write(dir.join(&file), "import time\ndef decide(stav):\n    time.sleep(100)\n").unwrap();
    let mut gbely = Command::new(env!("CARGO_BIN_EXE_gbely"))
        .args(["play", &file, "--quiet", "--time-limit", "off", "--sandbox=require", "--run-dir", "a"])
        .current_dir(&dir)
        .spawn()
        .unwrap();
    let pid = gbely.id();
    let t = Instant::now();
    // The agent running: bwrap, the sandbox's init and its Python name it (a gbely killed while
    // bwrap starts, before bwrap asks to die with its parent, would leave the agent running).
    let marker = format!("/gbely/{file}");
    while processes_with(&marker) < 3 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let groups = groups_of(pid);
    if groups.is_empty() {
        // No control group here: the summary says so (not root, or no cgroup to use).
        gbely.kill().unwrap();
        gbely.wait().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_gbely"))
            .args(["play", &file, "--json", "--rounds", "1", "--time-limit", "0.2", "--run-dir", "b"])
            .current_dir(&dir)
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let line = json["isolation"]["detail"].as_str().unwrap().to_string();
        assert!(line.contains("memory held per process, not in total"), "{line}");
        assert!(!nix::unistd::geteuid().is_root() || !Path::new("/sys/fs/cgroup").exists(), "{line}");
        return;
    }
    gbely.kill().unwrap(); // SIGKILL
    gbely.wait().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(processes_with(&marker), 0, "the agent died with gbely");
    assert!(groups.iter().all(|g| g.exists()), "gbely's groups stay after kill -9: {groups:?}");
    let out = Command::new(env!("CARGO_BIN_EXE_gbely"))
        .args(["play", "council", "--quiet", "--rounds", "1", "--sandbox=require", "--run-dir", "b"])
        .arg("--opponent")
        .arg(agents_dir().join("my_agent.py"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let left: Vec<&PathBuf> = groups.iter().filter(|g| g.exists()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Row 5 of issue 36 as it was found: gbely run by an ordinary user (here `nobody`, when the
/// test runs as root; else the test's own user). Its agents could write `/dev` and `/dev/shm`
/// without a cap, and a `memfd` that no address-space limit counts. Now `/dev` is read-only,
/// `/dev/shm` holds 64 MiB, and a `memfd` is refused where no control group holds the agent's
/// memory (the summary says which).
#[test]
fn issue36_row5_as_an_ordinary_user_dev_shm_and_memfd_are_held() {
    let _one = serial();
    let hostile = r#"
def fill(write, mib):
    written = 0
    chunk = b"x" * (1 << 20)
    try:
        for _ in range(mib):
            write(chunk)
            written += 1
    except OSError:
        pass
    return written

def decide(stav):
    try:
        with open("/dev/planted", "wb") as f:
            report("dev", fill(f.write, 8))
    except OSError:
        report("dev", 0)
    try:
        with open("/dev/shm/junk", "wb") as f:
            report("shm", fill(lambda c: (f.write(c), f.flush()), 96))
    except OSError:
        report("shm", 0)
    try:
        fd = os.memfd_create("junk")
        report("memfd", fill(lambda c: os.write(fd, c), 96))
    except OSError as e:
        report("memfd", -e.errno)
    return []
"#;
    let start = Start { ordinary_user: true, ..Start::default() };
    let played = duel_with("ordinary-user", hostile, None, true, &["--rounds", "1"], start);
    let line = played.json["isolation"]["detail"].as_str().unwrap().to_string();
    if !played.isolated() {
        // No user namespaces for this user here: it says so, and there is nothing to hold.
        assert!(!line.is_empty());
        eprintln!("not sandboxed as an ordinary user here: {line}");
        return;
    }
    let log = played.log(0);
    assert_eq!(played.reported(0, "dev"), vec![0], "{log}");
    assert_eq!(played.reported(0, "shm"), vec![64], "{log}");
    let memfd = if line.contains("memory held in total") { 96 } else { -ENOSYS };
    assert_eq!(played.reported(0, "memfd"), vec![memfd], "{line}: {log}");
}
