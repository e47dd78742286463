//! The sandbox every agent process runs in where the OS allows it (SPEC §8: an agent "has
//! neither the reference implementation of the Council nor the engine available; it sees only
//! what the judge sends it", and has no network).
//!
//! Linux: [bubblewrap](https://github.com/containers/bubblewrap) (`bwrap`), the sandbox of
//! Flatpak: namespaces for mounts, processes, network, IPC and host name (and users when gbely
//! is not root), set up by a small, audited program rather than by `unsafe` code in this
//! workspace (which forbids it). Inside, an agent sees:
//!
//! | path | what |
//! |---|---|
//! | `/usr` (and `/bin`, `/lib` …), a few files of `/etc`, its Python's prefixes, read-only | the runtime |
//! | `/gbely`, read-only | the harness, `pravidla.py`, a copy of its agent file (Python agents), copied into a tmpfs |
//! | the files its `cmd:` names, read-only | a program agent |
//! | `/scratch` (its working folder, `HOME`), `/tmp` and `/dev/shm`, writable, [`SCRATCH_BYTES`] each | tmpfs, private, gone when it stops |
//! | `/dev`, read-only | bwrap's devices: null, zero, full, random, urandom, tty, a private pts |
//! | `/proc` | its own processes only |
//! | descriptors | its three pipes (every other is close-on-exec in gbely: [`platform::close_inherited`](crate::runner::platform::close_inherited)) |
//! | network | its own loopback only |
//!
//! Not the run folder, the replay, the logs, other seats, the engine, the caller's home or
//! project. Resources held for all of an agent's processes together: processes
//! ([`MAX_TASKS`], `RLIMIT_NPROC` counted in the agent's own user (namespace)), CPU (its
//! processes are confined to one core with `sched_setaffinity`, which the system-call policy then
//! forbids them to change: [`seccomp`](crate::runner::seccomp)), disk (the tmpfs sizes); memory
//! is limited per process (`RLIMIT_AS`) and, where a control group can be had ([`MemoryGroup`]),
//! in total — elsewhere the policy refuses the memory no address space counts (`memfd`, System V
//! shared memory). Nothing of the host shows inside: bwrap reads its arguments from a descriptor
//! and starts with no environment of gbely's caller (see [`Sandbox::command`]). Lifetime: `--die-with-parent` and the pid namespace: when the agent's first
//! process dies, everything it started dies with it, also when `gbely` itself is killed.
//!
//! gbely as root (CI, containers) runs each agent as its own unprivileged user (uid
//! [`FIRST_UID`]+, no capabilities, no groups), switched by `setpriv` inside the sandbox.
//!
//! Where `bwrap` is missing or cannot make namespaces (user namespaces disabled, unprivileged
//! containers), and on other systems, agents run unsandboxed and the summary says why in one
//! line ([`Isolation`]); `--sandbox require` refuses to play instead.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::runner::player::Isolation;

/// Bytes each of an agent's writable folders (`/scratch`, `/tmp`) may hold.
pub const SCRATCH_BYTES: u64 = 64 << 20;

/// Processes and threads an agent may have at once (all of its processes together).
pub const MAX_TASKS: u32 = 256;

/// gbely as root runs agents as users from this uid on, one per agent process tree.
pub const FIRST_UID: u32 = 200_000;

/// Where the sandbox mounts an agent's read-only files (harness, `pravidla.py`, agent file).
pub const BOX_DIR: &str = "/gbely";

/// An agent's writable working folder inside the sandbox.
pub const SCRATCH_DIR: &str = "/scratch";

/// Whether to sandbox agent processes: `auto` (where possible, else say why), `require` (refuse
/// to play without), `off` (`--no-sandbox`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SandboxMode {
    /// Sandboxed where the machine allows; otherwise played unsandboxed, saying why.
    Auto,
    /// Sandboxed, or not played at all.
    Require,
    /// Not sandboxed (`--no-sandbox`).
    Off,
}

impl SandboxMode {
    /// The default, declared once: the command line's `--sandbox`, the Python package's
    /// `sandbox=` (`gbely._gbely.DEFAULT_SANDBOX`) and every `ProcessConfig` read it.
    pub const DEFAULT: SandboxMode = SandboxMode::Auto;

    /// As the command line and Python spell it.
    pub const fn word(self) -> &'static str {
        match self {
            SandboxMode::Auto => "auto",
            SandboxMode::Require => "require",
            SandboxMode::Off => "off",
        }
    }
}

impl std::str::FromStr for SandboxMode {
    type Err = String;

    fn from_str(s: &str) -> Result<SandboxMode, String> {
        match s {
            "auto" | "on" => Ok(SandboxMode::Auto),
            "require" => Ok(SandboxMode::Require),
            "off" => Ok(SandboxMode::Off),
            _ => Err(format!("`{s}`: auto, require or off")),
        }
    }
}

impl Default for SandboxMode {
    fn default() -> SandboxMode {
        SandboxMode::DEFAULT
    }
}

/// In JSON and TOML (the stand's page, a league's job, the arena's configuration) the word the
/// command line takes; a word it does not take is refused when the file is read.
impl serde::Serialize for SandboxMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.word())
    }
}

impl<'de> serde::Deserialize<'de> for SandboxMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SandboxMode, D::Error> {
        <String as serde::Deserialize>::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// The sandbox as this machine offers it (probed once per process).
#[derive(Debug)]
pub struct Sandbox {
    bwrap: PathBuf,
    version: String,
    /// gbely runs as root: no user namespace; `setpriv` makes each agent its own user.
    root: bool,
    /// Whether the system-call policy ([`seccomp`](crate::runner::seccomp)) has filters for this
    /// architecture (it holds the CPU too: it forbids changing the affinity).
    seccomp: bool,
    /// The CPUs this process may use: agents are confined to one of them each.
    cpus: Vec<usize>,
    /// Where agents get a control group that holds the memory of all their processes together.
    groups: Option<GroupBase>,
    description: String,
}

/// The sandbox, or why there is none here (probed once, on first use). `GBELY_BWRAP` names
/// the `bwrap` program (tests use it to see the fallback).
pub fn sandbox() -> &'static Result<Sandbox, String> {
    static PROBE: OnceLock<Result<Sandbox, String>> = OnceLock::new();
    PROBE.get_or_init(probe)
}

/// What the summary says of the isolation of agents under `mode`.
pub fn isolation(mode: SandboxMode) -> Isolation {
    match (mode, sandbox()) {
        (SandboxMode::Off, _) => Isolation::unsandboxed("the sandbox is off (--no-sandbox)"),
        (_, Ok(s)) => Isolation::sandboxed(s.describe()),
        (_, Err(why)) => Isolation::unsandboxed(why),
    }
}

/// The sandbox to run agents in under `mode`: `Ok(None)` when agents run without one, an error
/// when `require`d and unavailable (before any agent starts).
pub fn for_mode(mode: SandboxMode) -> Result<Option<&'static Sandbox>, String> {
    match (mode, sandbox()) {
        (SandboxMode::Off, _) => Ok(None),
        (_, Ok(s)) => Ok(Some(s)),
        (SandboxMode::Auto, Err(_)) => Ok(None),
        (SandboxMode::Require, Err(why)) => {
            Err(format!("the sandbox is required (--sandbox require) but not available here: {why}"))
        }
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

fn probe() -> Result<Sandbox, String> {
    if !cfg!(target_os = "linux") {
        return Err("no sandbox on this system (Linux only): agents can read your files and each other's".into());
    }
    let bwrap = match std::env::var_os("GBELY_BWRAP") {
        Some(p) => PathBuf::from(p),
        None => find_on_path("bwrap").ok_or_else(|| {
            "bubblewrap (`bwrap`) is not installed (Debian/Ubuntu: apt install bubblewrap)".to_string()
        })?,
    };
    let version = Command::new(&bwrap)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bwrap.display()))?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    #[cfg(unix)]
    let root = nix::unistd::geteuid().is_root();
    #[cfg(not(unix))]
    let root = false;
    let mut cpus = allowed_cpus();
    if cpus.is_empty() {
        cpus.push(0);
    }
    // Not root: a group where cgroup v2 delegates the memory controller to this user.
    let groups = GroupBase::find();
    let seccomp = seccomp_filters(false).is_some();
    let mut sandbox = Sandbox { bwrap, version, root, seccomp, cpus, groups, description: String::new() };
    sandbox.description = sandbox.description();
    // A real start of the smallest program, with every option a match uses.
    let true_bin = ["/usr/bin/true", "/bin/true"].into_iter().find(|p| Path::new(p).exists()).unwrap_or("true");
    let jail = Jail { uid: FIRST_UID, ..Jail::default() };
    let aux = std::env::temp_dir().join(format!("gbely-probe-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&aux);
    let (mut cmd, _) = sandbox.command(&jail, &[true_bin.into()], Some((&aux, 0)));
    let out = cmd.stdin(Stdio::null()).stdout(Stdio::null()).output();
    let _ = std::fs::remove_dir_all(&aux);
    let out = out.map_err(|e| format!("cannot run {}: {e}", sandbox.bwrap.display()))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let said = said.lines().next().unwrap_or("").trim();
        return Err(format!(
            "{} cannot make a sandbox here ({}{}{})",
            sandbox.bwrap.display(),
            out.status,
            if said.is_empty() { "" } else { ": " },
            said
        ));
    }
    Ok(sandbox)
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        let Ok(set) = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)) else { return Vec::new() };
        (0..nix::sched::CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false)).collect()
    }
    #[cfg(not(target_os = "linux"))]
    Vec::new()
}

/// What one agent process tree gets, besides the runtime.
#[derive(Clone, Debug, Default)]
pub struct Jail {
    /// Mounted read-only at [`BOX_DIR`].
    pub box_dir: Option<PathBuf>,
    /// Mounted read-only at the same path (a Python's prefixes, the files a `cmd:` names).
    pub read_only: Vec<PathBuf>,
    /// Environment (the sandbox starts from an empty one).
    pub env: Vec<(String, OsString)>,
    /// The user it runs as when gbely is root.
    pub uid: u32,
    /// Address space of each process, bytes.
    pub memory: Option<u64>,
    /// The file through which its first process joins the control group that holds all its
    /// processes ([`MemoryGroup::join_file`]).
    pub group: Option<PathBuf>,
}

impl Sandbox {
    /// One line for summaries: what holds the agents.
    pub fn describe(&self) -> &str {
        &self.description
    }

    fn description(&self) -> String {
        let cpu = if self.seccomp { "one core and " } else { "" };
        let who = if self.root { ", as unprivileged users" } else { "" };
        let unheld = if self.seccomp { "" } else { "; CPU and system calls not held on this architecture" };
        let memory = if self.groups.is_some() {
            "in total"
        } else {
            "per process, not in total (memfd and System V shared memory refused)"
        };
        format!(
            "sandboxed ({}: no network, only their own files and processes, {cpu}at most {MAX_TASKS} tasks \
             each{who}{unheld}; memory held {memory})",
            self.version
        )
    }

    /// The CPU that core slot `slot` (a seat, or a lease of the league's gate) confines an agent to.
    pub fn cpu_of(&self, slot: usize) -> usize {
        self.cpus[slot % self.cpus.len()]
    }

    /// The command that starts `argv` in a sandbox made of `jail`, and the CPU (that of slot
    /// `aux.1`) it is to be confined to: started with [`platform::spawn`](crate::runner::platform::spawn)'s `cpu`, which confines
    /// it from its first instruction, before the filters forbid any change (`None` where the
    /// filters cannot hold it there). What bwrap reads from files (the system-call filters, its
    /// own arguments, the files of [`BOX_DIR`]) is opened by the starting shell as descriptors 3
    /// to 9; the filters and the arguments are written to the folder `aux.0` first.
    ///
    /// Nothing of the host shows inside: bwrap's arguments (which name the host's folders) reach
    /// it through a descriptor (`--args`), so the sandbox's init (`/proc/1/cmdline`) shows
    /// `bwrap --args 4 -- ` and the agent's own command; bwrap starts with an empty environment
    /// but `PATH`; [`BOX_DIR`]'s files are copied into a tmpfs of the sandbox rather than mounted
    /// from the run folder (whose path a bind mount would show in `/proc/self/mountinfo`).
    pub fn command(&self, jail: &Jail, argv: &[OsString], aux: Option<(&Path, usize)>) -> (Command, Option<usize>) {
        let mut args: Vec<OsString> = Vec::new();
        let mut a = |s: &str| args.push(s.into());
        // Descriptors the starting shell opens for bwrap (`fd=path`); single digits, as sh allows.
        let mut open: Vec<(u8, PathBuf)> = Vec::new();
        let mut next_fd = 3u8;
        let write_aux = |name: &str, bytes: &[u8]| -> Option<PathBuf> {
            let file = aux?.0.join(name);
            std::fs::write(&file, bytes).ok().map(|()| file)
        };
        let filters = if self.seccomp { seccomp_filters(jail.group.is_some()) } else { None };
        let mut filtered = false;
        for (i, bpf) in filters.iter().flatten().enumerate() {
            if let Some(file) = write_aux(&format!("seccomp-{i}.bpf"), bpf) {
                a("--add-seccomp-fd");
                a(&next_fd.to_string());
                open.push((next_fd, file));
                next_fd += 1;
                filtered = true;
            }
        }
        // The arguments file's descriptor is taken now, its contents written at the end.
        let args_fd = next_fd;
        next_fd += 1;
        if self.root {
            // No user namespace: setpriv (given the two capabilities it needs) switches users.
            for f in ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"] {
                a(f);
            }
            a("--cap-add");
            a("CAP_SETUID");
            a("--cap-add");
            a("CAP_SETGID");
        } else {
            for f in ["--unshare-user", "--disable-userns", "--unshare-ipc", "--unshare-pid", "--unshare-net"] {
                a(f);
            }
            a("--unshare-uts");
            a("--unshare-cgroup-try");
        }
        for f in ["--die-with-parent", "--new-session", "--clearenv", "--hostname", "gbely"] {
            a(f);
        }
        let bind = |args: &mut Vec<OsString>, kind: &str, from: &Path, to: &Path| {
            args.push(kind.into());
            args.push(from.into());
            args.push(to.into());
        };
        bind(&mut args, "--ro-bind", Path::new("/usr"), Path::new("/usr"));
        for top in ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] {
            let p = Path::new(top);
            match std::fs::read_link(p) {
                Ok(target) => {
                    args.push("--symlink".into());
                    args.push(target.into());
                    args.push(top.into());
                }
                Err(_) if p.is_dir() => bind(&mut args, "--ro-bind", p, p),
                Err(_) => {}
            }
        }
        // bwrap would make `/etc` 0700 for its files: unreadable to an agent run as another user.
        args.extend(["--perms".into(), "0755".into(), "--dir".into(), "/etc".into()]);
        for etc in ETC {
            bind(&mut args, "--ro-bind-try", Path::new(etc), Path::new(etc));
        }
        // The private folders first: files a `cmd:` names under /tmp are mounted over them.
        // `/dev` holds bwrap's few devices (null, zero, full, random, urandom, tty, a private
        // pts) and is read-only but for its own capped `/dev/shm`.
        for s in ["--proc", "/proc", "--dev", "/dev"] {
            args.push(s.into());
        }
        for dir in [SCRATCH_DIR, "/tmp", "/dev/shm"] {
            for s in ["--size", &SCRATCH_BYTES.to_string(), "--perms", "1777", "--tmpfs", dir] {
                args.push(s.into());
            }
        }
        for s in ["--remount-ro", "/dev"] {
            args.push(s.into());
        }
        // The folders above a mount are made 0755 (bwrap would copy a private `/root`'s 0700,
        // and an agent running as another user could not reach its own Python).
        let mounts: Vec<&PathBuf> = jail.read_only.iter().filter(|p| !p.starts_with("/usr") && p.exists()).collect();
        let mut above: Vec<&Path> =
            mounts.iter().flat_map(|p| p.ancestors().skip(1)).filter(|a| a.parent().is_some()).collect();
        above.sort();
        above.dedup();
        for dir in above {
            let private = [SCRATCH_DIR, "/tmp"].iter().any(|p| dir == Path::new(p));
            if !dir.starts_with("/usr") && !private && !mounts.iter().any(|m| dir.starts_with(m)) {
                args.extend(["--perms".into(), "0755".into(), "--dir".into(), dir.into()]);
            }
        }
        for p in mounts {
            bind(&mut args, "--ro-bind", p, p);
        }
        if let Some(dir) = &jail.box_dir {
            for s in ["--perms", "0755", "--tmpfs", BOX_DIR] {
                args.push(s.into());
            }
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            for file in files {
                let Some(name) = file.file_name() else { continue };
                if next_fd > 9 {
                    break; // sh opens single-digit descriptors only; the box holds three files
                }
                args.extend(["--perms".into(), "0444".into(), "--file".into(), next_fd.to_string().into()]);
                args.push(Path::new(BOX_DIR).join(name).into());
                open.push((next_fd, file));
                next_fd += 1;
            }
            for s in ["--remount-ro", BOX_DIR] {
                args.push(s.into());
            }
        }
        args.push("--chdir".into());
        args.push(SCRATCH_DIR.into());
        let mut env = |k: &str, v: &std::ffi::OsStr| {
            args.push("--setenv".into());
            args.push(k.into());
            args.push(v.into());
        };
        env("PATH", "/usr/local/bin:/usr/bin:/bin".as_ref());
        env("HOME", SCRATCH_DIR.as_ref());
        env("TMPDIR", "/tmp".as_ref());
        env("LANG", "C.UTF-8".as_ref());
        for (k, v) in &jail.env {
            env(k, v);
        }
        // What follows `--` is the agent's own command: bwrap does not read it from a file, and
        // it names nothing of the run (the harness and agent file as `/gbely/...`).
        let mut command: Vec<OsString> = Vec::new();
        if self.root {
            let uid = jail.uid.to_string();
            for s in ["setpriv", "--reuid", &uid, "--regid", &uid, "--clear-groups", "--inh-caps=-all"] {
                command.push(s.into());
            }
            command.push("--bounding-set=-all".into());
            command.push("--".into());
        }
        // Never above what gbely itself may have (prlimit could not raise a hard limit).
        command.push("prlimit".into());
        command.push(format!("--nproc={}", hard_limit(Limit::Tasks).min(u64::from(MAX_TASKS))).into());
        if let Some(m) = jail.memory {
            command.push(format!("--as={}", hard_limit(Limit::AddressSpace).min(m)).into());
        }
        command.push("--".into());
        command.extend(argv.iter().cloned());
        let mut c = Command::new("/bin/sh");
        // bwrap and the programs before it get no environment of gbely's caller (the sandbox's
        // init is bwrap, and an agent of the same user could read its `/proc/1/environ`); the
        // shell's own `PWD` (the run folder) is unset too.
        c.env_clear().env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        let mut packed = Vec::new();
        for arg in &args {
            packed.extend_from_slice(arg.as_encoded_bytes());
            packed.push(0);
        }
        let args_file = write_aux("bwrap.args", &packed);
        // One starting shell for every case: it opens bwrap's descriptors, joins the agent's
        // control group (if any: everything after is held by it; `0` is the writer itself, see
        // [`MemoryGroup::join_file`]), then becomes bwrap. Its words: `N=path` (open as
        // descriptor N), `g=path` (join), then `--`.
        c.arg("-c")
            .arg(
                "unset PWD OLDPWD; while [ \"$1\" != -- ]; do p=${1#*=}; case $1 in g=*) echo 0 > \"$p\" || exit 121;; \
                 [3-9]=*) eval \"exec ${1%%=*}<\\\"\\$p\\\"\" || exit 122;; esac; shift; done; shift; exec \"$@\"",
            )
            .arg("sh");
        for (fd, path) in &open {
            let mut word = OsString::from(format!("{fd}="));
            word.push(path);
            c.arg(word);
        }
        if let Some(file) = &args_file {
            let mut word = OsString::from(format!("{args_fd}="));
            word.push(file);
            c.arg(word);
        }
        if let Some(g) = &jail.group {
            let mut word = OsString::from("g=");
            word.push(g);
            c.arg(word);
        }
        c.arg("--");
        c.arg(&self.bwrap);
        match args_file {
            Some(_) => c.args(["--args".into(), OsString::from(args_fd.to_string())]),
            // No folder to write the arguments file to: they go on the command line.
            None => c.args(&args),
        };
        c.arg("--").args(command);
        let cpu = match (filtered, aux) {
            (true, Some((_, slot))) => Some(self.cpu_of(slot)),
            _ => None,
        };
        (c, cpu)
    }
}

/// The policy's filters ([`seccomp::filters`](crate::runner::seccomp::filters)), where this
/// system and architecture have them.
fn seccomp_filters(memory_held: bool) -> Option<Vec<Vec<u8>>> {
    #[cfg(target_os = "linux")]
    return crate::runner::seccomp::filters(memory_held);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = memory_held;
        None
    }
}

enum Limit {
    Tasks,
    AddressSpace,
}

/// This process's hard limit (`u64::MAX` for none).
fn hard_limit(which: Limit) -> u64 {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::resource::{getrlimit, Resource};
        let r = match which {
            Limit::Tasks => Resource::RLIMIT_NPROC,
            Limit::AddressSpace => Resource::RLIMIT_AS,
        };
        getrlimit(r).map_or(u64::MAX, |(_, hard)| hard)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = which;
        u64::MAX
    }
}

/// Where agents' control groups are made: cgroup v1's memory hierarchy (our own group's folder),
/// or v2's (beside our own group, whose parent hands out the memory controller): as root, or as
/// a user to whom cgroup v2 delegates that parent (systemd's `user@UID.service`).
#[derive(Debug)]
struct GroupBase {
    dir: PathBuf,
    v2: bool,
}

impl GroupBase {
    /// The first of v1 and v2 where a group can be made and limited here (tried for real).
    fn find() -> Option<GroupBase> {
        let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        // `ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS … - FSTYPE SOURCE SUPEROPTIONS`
        let mount = |fstype: &str, option: Option<&str>| -> Option<(PathBuf, PathBuf)> {
            mounts.lines().find_map(|l| {
                let (left, right) = l.split_once(" - ")?;
                let mut r = right.split_whitespace();
                let (ty, _, opts) = (r.next()?, r.next()?, r.next().unwrap_or(""));
                if ty != fstype || option.is_some_and(|o| !opts.split(',').any(|x| x == o)) {
                    return None;
                }
                let f: Vec<&str> = left.split_whitespace().collect();
                Some((PathBuf::from(f.get(3)?), PathBuf::from(f.get(4)?)))
            })
        };
        let under = |root: &Path, point: &Path, path: &str| -> PathBuf {
            let rel = Path::new(path).strip_prefix(root).unwrap_or(Path::new(path));
            point.join(rel.strip_prefix("/").unwrap_or(rel))
        };
        let mut candidates = Vec::new();
        for line in groups.lines() {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            if controllers.split(',').any(|c| c == "memory") {
                if let Some((root, point)) = mount("cgroup", Some("memory")) {
                    candidates.push(GroupBase { dir: under(&root, &point, path), v2: false });
                }
            } else if controllers.is_empty() {
                if let Some((root, point)) = mount("cgroup2", None) {
                    let own = under(&root, &point, path);
                    let parent = if own == point { own } else { own.parent()?.to_path_buf() };
                    let handed = std::fs::read_to_string(parent.join("cgroup.subtree_control")).unwrap_or_default();
                    if handed.split_whitespace().any(|c| c == "memory") {
                        candidates.push(GroupBase { dir: parent, v2: true });
                    }
                }
            }
        }
        let base = candidates.into_iter().find(|base| {
            let probe = MemoryGroup::create(base, &format!("gbely-probe-{}", std::process::id()), 64 << 20);
            probe.is_ok()
        })?;
        base.sweep();
        Some(base)
    }

    /// Removes the groups that a gbely killed with `kill -9` left (`gbely-PID-N`, `gbely-probe-PID`
    /// of a process that is gone): its agents died with it, so the groups are empty. A group
    /// that still holds a process is not removed (the kernel refuses), whoever made it.
    fn sweep(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("gbely-")) else { continue };
            let pid = rest.strip_prefix("probe-").unwrap_or(rest).split('-').next().unwrap_or("");
            let Ok(pid) = pid.parse::<u32>() else { continue };
            if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
}

/// A control group holding the memory of all of an agent's processes together (its scratch
/// files included): over the limit, the kernel stops the largest of them (a crash). Removed
/// when dropped, once its processes are gone.
#[derive(Debug)]
pub struct MemoryGroup {
    dir: PathBuf,
    v2: bool,
}

impl MemoryGroup {
    /// A group named `name` for an agent of `sandbox` with `limit` bytes, where this machine
    /// offers one (`None`: memory is held per process only).
    pub fn new(sandbox: &Sandbox, name: &str, limit: u64) -> Option<MemoryGroup> {
        MemoryGroup::create(sandbox.groups.as_ref()?, name, limit).ok()
    }

    fn create(base: &GroupBase, name: &str, limit: u64) -> std::io::Result<MemoryGroup> {
        let dir = base.dir.join(name);
        std::fs::create_dir(&dir)?;
        let group = MemoryGroup { dir, v2: base.v2 };
        let write = |file: &str, value: &str| std::fs::write(group.dir.join(file), value);
        if base.v2 {
            write("memory.max", &limit.to_string())?;
            let _ = write("memory.swap.max", "0");
        } else {
            write("memory.limit_in_bytes", &limit.to_string())?;
            // With swap accounting, memory and swap together (not more than memory alone).
            let _ = write("memory.memsw.limit_in_bytes", &limit.to_string());
        }
        Ok(group)
    }

    /// The group's folder in the cgroup file system.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file a process joins the group through by writing `0` (itself) to it. cgroup v1:
    /// `tasks`, which moves the one thread that writes (the starting shell has one) without
    /// the lock that moving a whole process takes, whose writer waits for an RCU grace period
    /// (the kernel's `cgroup_threadgroup_rwsem`: 7–25 ms a start on a loaded 2-core machine,
    /// against 0.1 ms); its children are born in the group. cgroup v2 moves threads only
    /// inside a threaded subtree: `cgroup.procs`, and that wait stays (a hierarchy mounted
    /// with `favordynmods` has none).
    pub fn join_file(&self) -> PathBuf {
        self.dir.join(if self.v2 { "cgroup.procs" } else { "tasks" })
    }
}

impl Drop for MemoryGroup {
    fn drop(&mut self) {
        // Killed processes may take a moment to leave it.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Files of `/etc` the runtime reads (the dynamic linker's cache, time zone, users and groups
/// for `getpwuid`, `alternatives` behind some of `/usr/bin`).
const ETC: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/alternatives",
];

/// What a Python interpreter needs inside the sandbox: the interpreter to start and the folders
/// to mount (prefixes, site-packages, the user's site-packages), found once per interpreter by
/// asking it.
#[derive(Clone, Debug)]
pub struct PythonRuntime {
    /// `sys.executable` (a venv's own path, so that the venv applies).
    pub executable: PathBuf,
    /// The folders mounted read-only for it: prefixes and site-packages.
    pub folders: Vec<PathBuf>,
    /// `site.getuserbase()`, given to the agent as `PYTHONUSERBASE` (its `HOME` is the scratch).
    pub user_base: Option<PathBuf>,
}

const PYTHON_PROBE: &str = "import json, site, sys\n\
paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]\n\
paths += [p for p in sys.path if 'site-packages' in p or 'dist-packages' in p]\n\
try:\n    paths.append(site.getusersitepackages())\nexcept Exception:\n    pass\n\
print(json.dumps({'exe': sys.executable, 'paths': paths, 'userbase': site.getuserbase()}))";

/// The runtime of the Python `python` (cached); an error names what failed.
pub fn python_runtime(python: &str) -> Result<PythonRuntime, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Result<PythonRuntime, String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(python) {
        return found.clone();
    }
    let found = ask_python(python);
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(python.to_string(), found.clone());
    found
}

fn ask_python(python: &str) -> Result<PythonRuntime, String> {
    let out = Command::new(python)
        .args(["-I", "-c", PYTHON_PROBE])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{python} failed to describe itself: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("{python} described itself oddly: {e}"))?;
    let exe = v["exe"].as_str().filter(|s| !s.is_empty()).ok_or_else(|| format!("{python} has no sys.executable"))?;
    let mut folders: Vec<PathBuf> = Vec::new();
    let exe = PathBuf::from(exe);
    // The interpreter itself, through its links (a venv's python links to the base one).
    let mut resolved = vec![exe.clone()];
    if let Ok(real) = std::fs::canonicalize(&exe) {
        resolved.push(real);
    }
    for p in v["paths"].as_array().into_iter().flatten().filter_map(|p| p.as_str()) {
        let p = PathBuf::from(p);
        if p.is_dir() {
            folders.push(p);
        }
    }
    for r in resolved {
        if !folders.iter().any(|f| r.starts_with(f)) {
            folders.push(r);
        }
    }
    folders.sort();
    folders.dedup();
    // Keep the outermost of nested folders; bind mounts of the inner ones would be redundant.
    let mut outer: Vec<PathBuf> = Vec::new();
    for f in folders {
        if !outer.iter().any(|o| f.starts_with(o)) {
            outer.push(f);
        }
    }
    let user_base = v["userbase"].as_str().map(PathBuf::from).filter(|p| p.is_dir());
    Ok(PythonRuntime { executable: exe, folders: outer, user_base })
}

/// The absolute paths named in a command line's words that exist (a `cmd:` agent's program and
/// files): the sandbox mounts them read-only. Quotes are taken off; `/` alone is not a file.
pub fn named_paths(words: &[String]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for w in words {
        for token in w.split(|c: char| c.is_whitespace() || c == '=' || c == ':') {
            let token = token.trim_matches(|c| c == '"' || c == '\'');
            if token.starts_with('/') && token.len() > 1 && Path::new(token).exists() {
                found.push(PathBuf::from(token));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Every process and thread of the tree under `pid` (through `/proc/PID/task/TID/children`).
pub fn tree_tasks(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        if out.len() > 4 * MAX_TASKS as usize {
            break;
        }
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else { continue };
        for t in tasks.flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            out.push(tid);
            if let Ok(children) = std::fs::read_to_string(format!("/proc/{p}/task/{tid}/children")) {
                todo.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
            }
        }
    }
    out
}

/// Confines every process and thread of the tree under `pid` to `cpu` (a league's agent moves
/// to the core its lease names), then lets them run again (`SIGCONT`) when its turn comes. One
/// walk of the tree serves both: a stopped tree starts no process (and at its first turn, the
/// processes that the walk misses were born on the core the agent started on, no other).
pub fn resume_tree(pid: u32, cpu: usize) {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::signal::{kill, Signal};
        let tasks = tree_tasks(pid);
        let mut set = nix::sched::CpuSet::new();
        if set.set(cpu).is_ok() {
            for &tid in &tasks {
                let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(tid as i32), &set);
            }
        }
        for tid in tasks {
            let _ = kill(nix::unistd::Pid::from_raw(tid as i32), Signal::SIGCONT);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (pid, cpu);
}

/// Stops every process of the tree under `pid` (`SIGSTOP`), again until no new one appears (a
/// stopped process starts no other; at most [`MAX_TASKS`] can exist): a league's agent between
/// its turns, so that nothing it left running takes a core lent to another agent.
pub fn stop_tree(pid: u32) {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::signal::{kill, Signal};
        let mut stopped = std::collections::HashSet::new();
        for _ in 0..8 {
            let fresh: Vec<u32> = tree_tasks(pid).into_iter().filter(|t| !stopped.contains(t)).collect();
            if fresh.is_empty() {
                break;
            }
            for t in fresh {
                let _ = kill(nix::unistd::Pid::from_raw(t as i32), Signal::SIGSTOP);
                stopped.insert(t);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pid;
}

/// Lets the tree under `pid` run again (`SIGCONT`) when its agent's turn comes.
pub fn continue_tree(pid: u32) {
    #[cfg(target_os = "linux")]
    for t in tree_tasks(pid) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(t as i32), nix::sys::signal::Signal::SIGCONT);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pid;
}

/// The agent's own first process under the sandbox's (`bwrap` → its pid 1 → the agent), for
/// the scheduler's figures; `None` while it is starting.
pub fn agent_pid(bwrap_pid: u32) -> Option<u32> {
    let child_of = |p: u32| -> Option<u32> {
        let text = std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")).ok()?;
        text.split_whitespace().next()?.parse().ok()
    };
    child_of(child_of(bwrap_pid)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse() {
        assert_eq!("auto".parse(), Ok(SandboxMode::Auto));
        assert_eq!("require".parse(), Ok(SandboxMode::Require));
        assert_eq!("off".parse(), Ok(SandboxMode::Off));
        assert!("maybe".parse::<SandboxMode>().is_err());
        for m in [SandboxMode::Auto, SandboxMode::Require, SandboxMode::Off] {
            assert_eq!(m.word().parse(), Ok(m));
        }
    }

    #[test]
    fn modes_travel_as_their_words_and_a_wrong_word_is_refused_when_read() {
        for m in [SandboxMode::Auto, SandboxMode::Require, SandboxMode::Off] {
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.word()));
            assert_eq!(serde_json::from_str::<SandboxMode>(&json).unwrap(), m);
        }
        // As the command line reads it: `on` is `auto`.
        assert_eq!(serde_json::from_str::<SandboxMode>("\"on\"").unwrap(), SandboxMode::Auto);
        let e = serde_json::from_str::<SandboxMode>("\"maybe\"").unwrap_err().to_string();
        assert!(e.contains("`maybe`: auto, require or off"), "{e}");
    }

    #[test]
    fn named_paths_are_existing_absolute_words() {
        let words = vec!["-c".to_string(), "exec '/bin/sh' /no/such/file --x=/usr /".to_string()];
        assert_eq!(named_paths(&words), vec![PathBuf::from("/bin/sh"), PathBuf::from("/usr")]);
    }
}
