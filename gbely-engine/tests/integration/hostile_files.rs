//! Files a hostile competitor (or a crafted download) hands gbely, by every command that reads
//! them (issue 36, rows 1 and 9): modules planted beside an agent and in the working folder
//! never run outside the sandbox; named pipes and devices are refused unopened; SIGTERM stops a
//! gbely that is blocked.

#[cfg(target_os = "linux")]
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
#[cfg(unix)]
use std::time::{Duration, Instant};

use crate::common::scratch;

fn agents_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../agents"))
}

fn gbely(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gbely"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("gbely runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The modules a Python started in `dir` (or on a script in `dir`) would import from there before
/// anything of the user's: each, when imported, writes a marker file named after itself into
/// `markers` (an absolute path outside every sandbox).
fn plant_poison(dir: &Path, markers: &Path) {
    let code = |name: &str| {
        format!(
            "open({:?}, 'w').write('ran')\n",
            markers.join(format!("{}-{name}", dir.file_name().unwrap().to_string_lossy())).to_str().unwrap()
        )
    };
    for module in [
        "json",
        "ast",
        "tokenize",
        "token",
        "re",
        "io",
        "abc",
        "site",
        "sitecustomize",
        "usercustomize",
        "argparse",
        "zlib",
        "pathlib",
        "typing",
        "dataclasses",
        "numpy",
    ] {
        std::fs::write(dir.join(format!("{module}.py")), code(module)).unwrap();
    }
    for package in ["encodings", "gbely", "importlib", "collections"] {
        std::fs::create_dir_all(dir.join(package)).unwrap();
        std::fs::write(dir.join(package).join("__init__.py"), code(package)).unwrap();
    }
    std::fs::create_dir_all(dir.join("gbely")).unwrap();
    std::fs::write(dir.join("gbely").join("pack.py"), code("gbely.pack")).unwrap();
}

fn markers_in(markers: &Path) -> Vec<String> {
    let mut found: Vec<String> =
        std::fs::read_dir(markers).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    found.sort();
    found
}

/// Regression (issue 36, row 1): `json.py` or `ast.py` beside an agent or in the working folder
/// ran as the user running gbely (reading an agent's name and imports started `python3 -c …`
/// there without `-I`). Every command that reads agents or starts Python for them — `play`,
/// `league`, `ab`, `check`, `agents`, `pack` — runs with poisoned modules beside the agents and
/// in the working folder, and none of the poisoned code runs.
#[test]
fn modules_planted_beside_agents_and_in_the_working_folder_never_run() {
    let root = scratch("poison");
    let markers = root.join("markers");
    let work = root.join("work");
    let agents = root.join("agents");
    for d in [&markers, &work, &agents] {
        std::fs::create_dir_all(d).unwrap();
    }
    plant_poison(&work, &markers);
    plant_poison(&agents, &markers);
    let a = agents.join("a.py");
    let b = agents.join("b.py");
    let template = std::fs::read_to_string(agents_dir().join("my_agent.py")).unwrap();
    std::fs::write(&a, format!("AGENT_NAME = \"alfa\"\n{template}")).unwrap();
    std::fs::copy(agents_dir().join("expander.py"), &b).unwrap();
    // Agents named relative to the working folder, as a user would: where the poison is.
    std::fs::copy(&a, work.join("a.py")).unwrap();
    std::fs::copy(&b, work.join("b.py")).unwrap();
    std::fs::write(work.join("w.json"), r#"{"w": [1.0, 2.0]}"#).unwrap();
    std::fs::write(work.join("packme.py"), "WEIGHTS = None\ndef decide(stav):\n    return []\n").unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let small = ["--map", "seed:poison", "--size", "14", "--rounds", "3"];
    let mut runs: Vec<(&str, Vec<&str>)> = vec![
        ("play", [&["play", "a.py", "--opponent", "b.py", "--no-replay"][..], &small].concat()),
        ("play", [&["play", a, "--opponent", b, "--no-replay"][..], &small].concat()),
        ("check", vec!["check", "a.py"]),
        ("check", vec!["check", a]),
        ("agents", vec!["agents", "."]),
        ("agents", vec!["agents", agents.to_str().unwrap()]),
        ("league", vec!["league", "a.py", b, "--maps", "seed:poison", "--rounds", "3", "-q", "-j", "1"]),
        ("ab", vec!["ab", "a.py", b, "--max-pairs", "1", "--rounds", "3", "-q", "-j", "1", "--maps", "seed:poison"]),
        ("pack", vec!["pack", "w.json", "packme.py", "-o", "packed.py", "--no-timing"]),
    ];
    for (what, args) in runs.drain(..) {
        let out = gbely(&work, &args);
        let ran = markers_in(&markers);
        assert!(ran.is_empty(), "`gbely {}` ran planted code: {ran:?}", args.join(" "));
        // `pack` needs the Python package, which this interpreter may not have: it may fail
        // saying so; every other command succeeds.
        if what != "pack" {
            assert!(out.status.success(), "{what} {args:?}: {}{}", text(&out.stdout), text(&out.stderr));
        }
        if what == "play" || what == "check" || what == "agents" {
            // The agent files were read: alfa is the name `a.py` gives itself.
            assert!(text(&out.stdout).contains("alfa"), "{what} {args:?}: {}", text(&out.stdout));
        }
    }
}

/// Regression (issue 36, row 9): an agent path that is a named pipe made `gbely play` block
/// forever in `open` (copying the agent into its sandbox), and `gbely check` of a symlink to
/// `/dev/zero` read without end. Both are refused before they are opened, saying what they are,
/// as a map or a replay that is a pipe or a device.
#[cfg(unix)]
#[test]
fn named_pipes_and_devices_are_refused_unopened() {
    let dir = scratch("special");
    let fifo = dir.join("agent.py");
    let status = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(status.success());
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.py")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.map")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.json.gz")).unwrap();
    Command::new("mkfifo").arg(dir.join("pipe.map")).status().unwrap();
    Command::new("mkfifo").arg(dir.join("pipe.json")).status().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["play", "agent.py", "--rounds", "2", "--no-replay"], "agent `agent.py`: it is a named pipe"),
        (&["play", "zero.py", "--rounds", "2", "--no-replay"], "agent `zero.py`: it is a device"),
        (&["play", "council", "--opponent", "agent.py", "--rounds", "2", "--no-replay"], "it is a named pipe"),
        (&["check", "zero.py"], "zero.py: it is a device, not a regular file"),
        (&["check", "agent.py"], "agent.py: it is a named pipe, not a regular file"),
        (&["play", "council", "--map", "pipe.map", "--rounds", "2", "--no-replay"], "it is a named pipe"),
        (&["play", "council", "--map", "zero.map", "--rounds", "2", "--no-replay"], "it is a device"),
        (&["replay", "stats", "pipe.json"], "it is a named pipe"),
        (&["replay", "verify", "zero.json.gz"], "it is a device"),
        (&["replay", "show", "pipe.json"], "it is a named pipe"),
        (&["league", "council", "agent.py", "--rounds", "2", "-q"], "it is a named pipe"),
    ];
    for (args, want) in cases {
        let start = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_gbely"))
            .args(*args)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Bounded: a gbely blocked on the pipe is killed, and the test fails saying so.
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > Duration::from_secs(60) {
                child.kill().unwrap();
                child.wait().unwrap();
                panic!("`gbely {}` still ran after 60 s", args.join(" "));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains(want), "`gbely {}`: `{err}` should say `{want}`", args.join(" "));
    }
}

/// The kernel's name for what a process waits on (Linux).
#[cfg(target_os = "linux")]
fn wchan(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default()
}

/// Regression (issue 36, row 9): a gbely blocked somewhere SIGTERM's flag is not looked at (here:
/// writing its progress to a pipe nobody reads) ignored SIGTERM forever. It now stops within a
/// bounded wait after the signal, with the exit code of an interrupt (130).
#[cfg(target_os = "linux")]
#[test]
fn sigterm_stops_a_blocked_gbely() {
    let dir = scratch("sigterm");
    let mut child = Command::new(env!("CARGO_BIN_EXE_gbely"))
        .args(["play", "council", "--opponent", "council:easy", "--rounds", "100000", "--no-replay", "-v"])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // The verbose lines fill the stderr pipe (64 KiB) within some hundred rounds: then gbely
    // blocks in the write.
    let start = Instant::now();
    while !wchan(pid).contains("pipe_write") {
        assert!(child.try_wait().unwrap().is_none(), "gbely ended before it blocked");
        assert!(start.elapsed() < Duration::from_secs(120), "gbely never blocked on its stderr");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(wchan(pid).contains("pipe_write"), "blocked writing");
    nix_kill(pid, "TERM");
    let signalled = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if signalled.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("gbely still ran 30 s after SIGTERM (waiting in {})", wchan(pid));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130), "{status:?}");
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(err.contains("round"), "{}", &err[..err.len().min(300)]);
}

#[cfg(target_os = "linux")]
fn nix_kill(pid: u32, sig: &str) {
    let status = Command::new("kill").arg(format!("-{sig}")).arg(pid.to_string()).status().unwrap();
    assert!(status.success());
}
