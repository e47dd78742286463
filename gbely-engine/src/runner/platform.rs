//! What the runner needs from the operating system, one place per OS: keeping an agent's
//! processes together, killing all of them, limiting their memory, and the scheduler's figures.
//!
//! | | Linux | macOS, other Unix | Windows |
//! |---|---|---|---|
//! | the agent's processes | own process group | own process group | own Job object, own console process group |
//! | kill | the group, then every process carrying the agent's token (`/proc`), orphans reaped as subreaper | the group | the Job: its whole tree, children that detached included |
//! | memory limit | `RLIMIT_AS` (harness / `ulimit -v`) | the same where the OS honours it | measured by the runner: the main process's committed memory, every 50 ms while it thinks and at its answer |
//! | pipe buffer | 1 MiB (`F_SETPIPE_SZ`) | OS default | OS default |
//! | CPU figures (fairness notes) | `/proc/PID/schedstat` | none | none |
//!
//! Where a feature is missing the runner still plays by the same rules (time limit, restart,
//! violations); only the note or the figure is absent.

use std::process::{Child, Command};

/// Whether an agent's address space is limited here (`RLIMIT_AS`: set by the Python harness,
/// and by `/bin/sh -c "ulimit -v …; exec …"` for executables). Unix only.
pub const LIMITS_MEMORY: bool = cfg!(unix);

/// Whether the runner measures an agent's memory itself ([`committed_memory`]) and stops the agent
/// when it is over its limit. Windows only: nothing there limits a process's memory the way
/// `RLIMIT_AS` does without `unsafe` calls the workspace forbids (a Job's memory limit is not
/// offered by the `win32job` crate, nor is its memory use, nor a handle to each of its
/// processes). So the runner's check sees only the agent's main process.
pub const MEASURES_MEMORY: bool = cfg!(windows);

/// What the agent's log says, once, about how a memory limit of `limit` bytes is held; `None`
/// where `RLIMIT_AS` holds it (nothing to say).
pub fn memory_limit_note(limit: u64, every: std::time::Duration) -> Option<String> {
    if LIMITS_MEMORY {
        None
    } else if MEASURES_MEMORY {
        Some(format!(
            "the memory limit ({}) is checked by the runner on this system (Windows): the committed memory of the \
             agent's main process (processes it starts are not counted), every {} ms while it thinks and when it \
             answers; over the limit the agent is stopped (a crash)",
            mib(limit),
            every.as_millis()
        ))
    } else {
        Some("the memory limit is not enforced on this system: the agent may use all the memory it finds".into())
    }
}

/// Bytes as MiB for the agent's log and violation details: `256 MiB`, `0.5 MiB`.
pub fn mib(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
    }
}

/// The most memory the agent's main process has committed (private memory backed by RAM or the
/// page file) in its life so far, in bytes. Windows: `GetProcessMemoryInfo` through `win32job`,
/// the larger of its peak and current commit charge, so that memory taken and freed between two
/// looks is still seen (Wine reports no peak: there both are the anonymous memory the process
/// has touched now, `RssAnon` + `VmSwap`). Processes the agent started are not counted. The
/// `Child` owns the handle this reads: it stays valid for the call. Elsewhere: `Unsupported`.
pub fn committed_memory(child: &Child) -> std::io::Result<u64> {
    #[cfg(windows)]
    {
        use std::os::windows::io::AsRawHandle;
        let m = win32job::utils::get_process_memory_info(child.as_raw_handle() as isize)?;
        Ok(m.peak_pagefile_usage.max(m.pagefile_usage).max(m.private_usage) as u64)
    }
    #[cfg(not(windows))]
    {
        let _ = child;
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "the runner measures memory on Windows only"))
    }
}

/// Starts `cmd`. On Linux from one thread that lives as long as this process: a sandboxed
/// agent dies with the thread that started it (`bwrap --die-with-parent` uses the parent-death
/// signal, which follows the starting *thread*), and a match may be played from threads that
/// come and go (Python's, a pool's).
///
/// On Unix an agent gets its three pipes and nothing else of this process: every other
/// descriptor is marked close-on-exec first ([`close_inherited`]).
///
/// `cpu` (Linux): the process is confined to that CPU from its start. The starting thread
/// confines itself to it for the moment of the fork, and a child inherits its parent thread's
/// affinity: one `sched_setaffinity` instead of a `taskset` program in the chain (an exec
/// fewer per start). Elsewhere `cpu` is not used.
pub fn spawn(cmd: Command, cpu: Option<usize>) -> std::io::Result<Child> {
    close_inherited();
    #[cfg(target_os = "linux")]
    {
        use std::sync::mpsc::{channel, Sender};
        use std::sync::{Mutex, OnceLock};
        type Job = (Command, Option<usize>, Sender<std::io::Result<Child>>);
        static SPAWNER: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();
        let spawner = SPAWNER.get_or_init(|| {
            let (tx, rx) = channel::<Job>();
            std::thread::Builder::new()
                .name("gbely-spawner".into())
                .spawn(move || {
                    for (mut cmd, cpu, reply) in rx {
                        let _ = reply.send(spawn_on(&mut cmd, cpu));
                    }
                })
                .expect("a thread to start agents from");
            Mutex::new(tx)
        });
        let (reply, answer) = channel();
        let sent = spawner.lock().unwrap_or_else(|e| e.into_inner()).send((cmd, cpu, reply));
        let child = match sent {
            Ok(()) => answer.recv().unwrap_or_else(|_| Err(std::io::Error::other("the agent starter stopped"))),
            Err(std::sync::mpsc::SendError((mut cmd, cpu, _))) => spawn_on(&mut cmd, cpu),
        };
        if let Ok(c) = &child {
            started().insert(c.id());
        }
        child
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        let mut cmd = cmd;
        cmd.spawn()
    }
}

/// Starts `cmd` from this thread, confined to `cpu` when one is given: this thread's affinity
/// is narrowed to it for the fork and given back after.
#[cfg(target_os = "linux")]
fn spawn_on(cmd: &mut Command, cpu: Option<usize>) -> std::io::Result<Child> {
    use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
    let Some(cpu) = cpu else { return cmd.spawn() };
    // Pid 0: the calling thread.
    let me = nix::unistd::Pid::from_raw(0);
    let own = sched_getaffinity(me)?;
    let mut one = CpuSet::new();
    one.set(cpu)?;
    sched_setaffinity(me, &one)
        .map_err(|e| std::io::Error::other(format!("cannot confine the agent to CPU {cpu}: {e}")))?;
    let child = cmd.spawn();
    // The set it had a moment ago (only a change of this process's cpuset could refuse it).
    let _ = sched_setaffinity(me, &own);
    child
}

/// Marks every descriptor of this process but stdin, stdout and stderr close-on-exec. Rust opens
/// its own files so, but a descriptor left open by whoever started gbely (a shell's `exec 7</`,
/// an IDE, a CI runner, a Python program's inheritable file) would otherwise reach every agent
/// through every program in between (bwrap passes on what it is given). gbely itself keeps
/// them; programs it starts later do not get them (a Python caller that wants one inherited
/// names it again: `pass_fds`).
pub fn close_inherited() {
    #[cfg(unix)]
    {
        use nix::fcntl::{fcntl, FcntlArg, FdFlag};
        let list = if cfg!(target_os = "linux") { "/proc/self/fd" } else { "/dev/fd" };
        let Ok(dir) = std::fs::read_dir(list) else { return };
        let fds: Vec<i32> =
            dir.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).filter(|&fd| fd > 2).collect();
        for fd in fds {
            // The listing's own descriptor is closed by now: EBADF, as for any that raced away.
            let _ = fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
        }
    }
}

/// Puts the agent about to start into its own group: Ctrl-C in the terminal reaches the runner,
/// which stops the match cleanly, and not the agents directly.
pub fn isolate(cmd: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        // CREATE_NEW_PROCESS_GROUP: Ctrl-C is not delivered to the agent's group.
        // CREATE_NO_WINDOW: no console window pops up for an agent started from a windowed program.
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        const CREATE_NO_WINDOW: u32 = 0x0800_0000;
        cmd.creation_flags(CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
    }
    #[cfg(not(any(unix, windows)))]
    let _ = cmd;
}

/// Everything an agent started, held so that it can be killed at once.
#[derive(Debug)]
pub struct Tree {
    /// Windows: a Job object the agent was assigned to just after it started. Its descendants
    /// belong to it too, whatever they do (the Job allows no breakaway), and closing the last
    /// handle kills every process in it (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`).
    #[cfg(windows)]
    job: Option<win32job::Job>,
}

impl Tree {
    /// Gathers the agent's processes. On Windows a failure to create or assign the Job is
    /// returned as a note: the agent still plays, killed alone when it must be.
    pub fn adopt(child: &Child) -> (Tree, Option<String>) {
        #[cfg(windows)]
        {
            use std::os::windows::io::AsRawHandle;
            let mut info = win32job::ExtendedLimitInfo::new();
            info.limit_kill_on_job_close();
            let job = win32job::Job::create_with_limit_info(&info);
            // The agent runs for a few microseconds before it is assigned; a program that starts
            // a child in that time leaves it out of the Job (Windows can only do better by
            // starting the agent suspended, which the standard library does not offer).
            match job.and_then(|job| job.assign_process(child.as_raw_handle() as isize).map(|()| job)) {
                Ok(job) => (Tree { job: Some(job) }, None),
                Err(e) => (
                    Tree { job: None },
                    Some(format!("could not put the agent in a Job object ({e}): its children may outlive it")),
                ),
            }
        }
        #[cfg(not(windows))]
        {
            let _ = child;
            (Tree {}, None)
        }
    }

    /// Kills the agent and everything it started that is still in its group (its Job on
    /// Windows), and reaps the agent, and those of its descendants that were handed to this
    /// process when their parent died (Linux, as a subreaper: the sandbox's inner bwrap, a
    /// grandchild), so that a long-running server piles up no zombies.
    pub fn kill(self, child: &mut Child) {
        #[cfg(target_os = "linux")]
        let family = descendants(child.id());
        #[cfg(unix)]
        {
            use nix::sys::signal::{killpg, Signal};
            use nix::unistd::Pid;
            let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
        }
        // Dropping the last handle of the Job kills every process in it.
        #[cfg(windows)]
        drop(self.job);
        #[cfg(not(windows))]
        let _ = self;
        let _ = child.kill();
        let _ = child.wait();
        #[cfg(target_os = "linux")]
        {
            started().remove(&child.id());
            reap_adopted(&family);
            reap_orphaned_sessions();
        }
    }
}

/// The agents this process started ([`spawn`]) and has not reaped through [`Tree::kill`]: its
/// own children, whose exit their `Child` collects.
#[cfg(target_os = "linux")]
fn started() -> std::sync::MutexGuard<'static, std::collections::HashSet<u32>> {
    static STARTED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<u32>>> = std::sync::OnceLock::new();
    STARTED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner())
}

/// Reaps the zombies among this process's children that lead a session of their own and that
/// it did not start: the sandbox's inner bwrap (its pid 1, which runs in a new session), handed
/// here as a subreaper when the outer bwrap exits before it, which it does when the agent ends
/// by itself (a crash, its end) and after the sandbox's probe. Nothing this process starts
/// leads a session ([`isolate`] makes a group, not a session), so no `Child`'s exit is taken.
#[cfg(target_os = "linux")]
fn reap_orphaned_sessions() {
    use nix::sys::wait::{waitpid, WaitPidFlag};
    use nix::unistd::Pid;
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else { return };
    for pid in dir.flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()) {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        // state, ppid, pgrp, session
        let fields: Vec<&str> = rest.split_whitespace().take(4).collect();
        let zombie_of_mine = fields.first() == Some(&"Z") && fields.get(1) == Some(&me.to_string().as_str());
        if zombie_of_mine && fields.get(3) == Some(&pid.to_string().as_str()) && !started().contains(&pid) {
            let _ = waitpid(Pid::from_raw(pid as i32), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// Every descendant of `pid` now (Linux: from `/proc`), children before grandchildren, each with
/// its start time (which tells it from a later process given the same pid).
#[cfg(target_os = "linux")]
fn descendants(pid: u32) -> Vec<(u32, u64)> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let links: Vec<(u32, u32, u64)> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| {
            let (parent, start) = parent_and_start(p)?;
            Some((p, parent, start))
        })
        .collect();
    let mut family = vec![(pid, 0)];
    let mut next = 0;
    while next < family.len() {
        let parent = family[next].0;
        for &(p, pp, start) in &links {
            if pp == parent && !family.iter().any(|&(f, _)| f == p) {
                family.push((p, start));
            }
        }
        next += 1;
    }
    family.remove(0);
    family
}

/// Kills and reaps those of an agent's former descendants (found before it was killed) that are
/// now this process's children: handed here when their parent died, because this process is a
/// subreaper ([`become_subreaper`]); elsewhere they went to init, which reaps them. The start
/// time tells the descendant from a process that took its pid since.
#[cfg(target_os = "linux")]
fn reap_adopted(family: &[(u32, u64)]) {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let me = std::process::id();
    for &(pid, start) in family {
        if parent_and_start(pid) == Some((me, start)) {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
            let _ = nix::sys::wait::waitpid(Pid::from_raw(pid as i32), None);
        }
    }
}

/// A larger pipe to the agent: a whole observation (up to ~400 KB at 60×60) fits in one buffer,
/// so fewer switches between the writer and the agent. Best effort, Linux only: the default size
/// works everywhere.
pub fn enlarge_pipe(stdin: &std::process::ChildStdin) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let _ = nix::fcntl::fcntl(stdin.as_raw_fd(), nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
    }
    #[cfg(not(target_os = "linux"))]
    let _ = stdin;
}

/// Kills every process whose environment carries `GBELY_AGENT_TOKEN=token`: descendants of an
/// agent that left its process group (`setsid()`, double forks). Those that were re-parented to
/// this process (a child subreaper, see [`become_subreaper`]) are reaped too. Linux only: other
/// Unixes show no other process's environment (the process group is all that is killed there),
/// and on Windows the Job already holds every descendant.
#[cfg(target_os = "linux")]
pub fn sweep_token(token: &str) {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let needle = format!("GBELY_AGENT_TOKEN={token}\0");
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else { return };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid == me {
            continue;
        }
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else { continue };
        if !env.windows(needle.len()).any(|w| w == needle.as_bytes()) {
            continue;
        }
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        if parent_of(pid) == Some(me) {
            let _ = nix::sys::wait::waitpid(Pid::from_raw(pid as i32), None);
        }
    }
}

/// Does nothing off Linux: other Unixes show no other process's environment, and on Windows the
/// Job already holds every descendant.
#[cfg(not(target_os = "linux"))]
pub fn sweep_token(_token: &str) {}

/// A process's parent and start time (clock ticks after boot), from `/proc/PID/stat`.
#[cfg(target_os = "linux")]
fn parent_and_start(pid: u32) -> Option<(u32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the last ')': state, ppid, … starttime (the 20th).
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let parent = fields.nth(1)?.parse().ok()?;
    Some((parent, fields.nth(17)?.parse().ok()?))
}

#[cfg(target_os = "linux")]
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split after the last ')'.
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// Makes this process the reaper of its orphaned descendants (Linux), so that an agent's
/// grandchild whose parent died is re-parented here rather than to init, where
/// [`kill_orphans`] finds it. For a process that owns its children (the `gbely` command line);
/// a library embedded in someone else's program should not call it. Elsewhere it does nothing:
/// macOS has no subreapers, and on Windows the Job objects hold the orphans.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// Kills and reaps every child of this process (for the command line when its matches are over:
/// what is left are orphaned agent descendants, even those that cleared their environment).
/// Linux only, with [`become_subreaper`].
pub fn kill_orphans() {
    #[cfg(target_os = "linux")]
    {
        use nix::sys::signal::{kill, Signal};
        use nix::unistd::Pid;
        let me = std::process::id();
        let Ok(dir) = std::fs::read_dir("/proc") else { return };
        for entry in dir.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            if parent_of(pid) == Some(me) {
                let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
                let _ = nix::sys::wait::waitpid(Pid::from_raw(pid as i32), None);
            }
        }
    }
}

/// The scheduler's figures of one process (Linux: `/proc/PID/schedstat`, nanoseconds; `None`
/// elsewhere, where the fairness notes are left out).
#[derive(Clone, Copy, Debug)]
pub struct SchedStat {
    /// Time spent on a CPU.
    pub run_ns: u64,
    /// Time spent runnable, waiting for a CPU.
    pub wait_ns: u64,
}

impl SchedStat {
    /// The figures of process `pid` now; `None` when they cannot be read.
    #[cfg(target_os = "linux")]
    pub fn of(pid: u32) -> Option<SchedStat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?;
        let mut it = text.split_whitespace().map(|x| x.parse::<u64>().ok());
        Some(SchedStat { run_ns: it.next()??, wait_ns: it.next()?? })
    }

    /// Always `None` off Linux.
    #[cfg(not(target_os = "linux"))]
    pub fn of(_pid: u32) -> Option<SchedStat> {
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The CPUs a process started by `spawn` may use, as `/proc/self/status` lists them.
    fn allowed_of_started(cpu: Option<usize>) -> String {
        let mut cmd = Command::new("grep");
        cmd.args(["Cpus_allowed_list", "/proc/self/status"]).stdout(std::process::Stdio::piped());
        let out = spawn(cmd, cpu).expect("grep starts").wait_with_output().expect("grep ends");
        String::from_utf8_lossy(&out.stdout).split_whitespace().nth(1).unwrap_or("").to_string()
    }

    #[test]
    fn a_process_started_on_a_cpu_has_that_one_and_the_next_is_free_again() {
        let own = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
        let cpus: Vec<usize> = (0..nix::sched::CpuSet::count()).filter(|&c| own.is_set(c).unwrap_or(false)).collect();
        let last = *cpus.last().expect("a CPU");
        assert_eq!(allowed_of_started(Some(last)), last.to_string());
        // The starting thread was given its CPUs back: a process started without one has them all.
        let free = allowed_of_started(None);
        let listed: usize = free
            .split(',')
            .map(|r| match r.split_once('-') {
                Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
                None => 1,
            })
            .sum();
        assert_eq!(listed, cpus.len(), "{free}");
    }
}
