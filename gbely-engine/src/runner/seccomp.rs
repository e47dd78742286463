//! The system calls an agent may not make in the sandbox (Linux): a deny-list of what the judge's
//! agents never need, compiled into seccomp filters by [`seccompiler`] (rust-vmm's crate, the one
//! Firecracker uses) and handed to bubblewrap (`--add-seccomp-fd`), which installs them just
//! before it starts the agent. Everything else is allowed: a Python agent, numpy and any program
//! a `cmd:` names run as they would at the judge.
//!
//! [`RULES`] is the policy, one row a call, with the reason; docs/protocol.md lists it. A refused
//! call fails with `ENOSYS`, as on a kernel built without it (libraries fall back: glibc's
//! `pthread_create` from `clone3` to `clone`, io_uring users to plain reads), except
//! `sched_setaffinity` (`EPERM`: the agent stays on its core) and file locks, which succeed
//! without locking anything ([`Refusal::Ignored`]): a lock on a file both seats can open (the
//! runtime in `/usr`) would carry a bit from one seat to the other, and an agent's own locks in its
//! private folders never contend with anyone.
//!
//! Another ABI's entry points (32-bit `int 0x80` on x86_64) would bypass rules written for the
//! native numbers: seccompiler's filters kill a process that uses them. x86_64's x32 entry points
//! share the native ABI's architecture word, so every rule is repeated for the x32 number too.

/// How the filter answers a call of [`RULES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Fails with `ENOSYS`, as on a kernel built without the call.
    Missing,
    /// Fails with `EPERM`.
    Forbidden,
    /// Returns 0 and does nothing.
    Ignored,
}

/// When a rule applies to its call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Always.
    Always,
    /// When argument `.0` has any of the bits of `.1` set.
    AnyBit(u8, &'static [u64]),
    /// When argument `.0` is one of `.1`.
    OneOf(u8, &'static [u64]),
    /// When argument `.0` is none of `.1`.
    NoneOf(u8, &'static [u64]),
    /// `socket(AF_NETLINK, _, protocol)` with a protocol other than `NETLINK_ROUTE`.
    NetlinkBeyondRoute,
    /// Only where no control group holds the agent's memory in total: memory that no address
    /// space counts (a `memfd`, System V shared memory and message queues).
    MemoryNotHeld,
}

/// One row of the policy.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// The call's name.
    pub call: &'static str,
    /// When it is refused.
    pub when: When,
    /// How.
    pub refusal: Refusal,
    /// Why the judge's agents do without it.
    pub why: &'static str,
}

const NAMESPACES: &[u64] = &[
    0x0002_0000, // CLONE_NEWNS
    0x0200_0000, // CLONE_NEWCGROUP
    0x0400_0000, // CLONE_NEWUTS
    0x0800_0000, // CLONE_NEWIPC
    0x1000_0000, // CLONE_NEWUSER
    0x2000_0000, // CLONE_NEWPID
    0x4000_0000, // CLONE_NEWNET
];
/// `unshare` also takes CLONE_NEWTIME (in `clone`'s flags that bit is part of the exit signal).
const NAMESPACES_AND_TIME: &[u64] =
    &[0x0002_0000, 0x0200_0000, 0x0400_0000, 0x0800_0000, 0x1000_0000, 0x2000_0000, 0x4000_0000, 0x80];
const F_SETLK: u64 = 6;
const F_SETLKW: u64 = 7;
const F_OFD_SETLK: u64 = 37;
const F_OFD_SETLKW: u64 = 38;
const F_SETLEASE: u64 = 1024;
const F_NOTIFY: u64 = 1026;

const fn rule(call: &'static str, when: When, refusal: Refusal, why: &'static str) -> Rule {
    Rule { call, when, refusal, why }
}

use Refusal::{Forbidden, Ignored, Missing};
use When::{Always, AnyBit, MemoryNotHeld, NetlinkBeyondRoute, NoneOf, OneOf};

const IO_URING: &str = "its kernel threads (SQPOLL) spin on a core of their choosing, which no affinity moves";
const KEYS: &str = "the kernel keyring is not namespaced: keys outlive the match and reach the other seat";
const USERNS: &str = "a new user namespace gives the agent capabilities over a large kernel surface";
const MOUNTS: &str = "the agent's files are set up by the sandbox; mounting is for administrators";
const TRACE: &str = "reading or steering another process";
const KERNEL: &str = "the kernel and the machine are the administrator's";
const CHANNEL: &str = "events on files both seats can open would carry a bit between them";
const UNCOUNTED: &str = "memory that no address space counts (held only by a control group)";

/// The policy: what an agent may not do, call by call.
pub const RULES: &[Rule] = &[
    rule("io_uring_setup", Always, Missing, IO_URING),
    rule("io_uring_enter", Always, Missing, IO_URING),
    rule("io_uring_register", Always, Missing, IO_URING),
    rule("add_key", Always, Missing, KEYS),
    rule("request_key", Always, Missing, KEYS),
    rule("keyctl", Always, Missing, KEYS),
    rule("unshare", AnyBit(0, NAMESPACES_AND_TIME), Missing, USERNS),
    rule("clone", AnyBit(0, NAMESPACES), Missing, USERNS),
    rule("clone3", Always, Missing, "its flags cannot be read by a filter; glibc falls back to clone"),
    rule("setns", Always, Missing, "joining another namespace"),
    rule("mount", Always, Missing, MOUNTS),
    rule("umount2", Always, Missing, MOUNTS),
    rule("fsopen", Always, Missing, MOUNTS),
    rule("fsconfig", Always, Missing, MOUNTS),
    rule("fsmount", Always, Missing, MOUNTS),
    rule("fspick", Always, Missing, MOUNTS),
    rule("open_tree", Always, Missing, MOUNTS),
    rule("move_mount", Always, Missing, MOUNTS),
    rule("mount_setattr", Always, Missing, MOUNTS),
    rule("pivot_root", Always, Missing, MOUNTS),
    rule("chroot", Always, Missing, MOUNTS),
    rule("personality", NoneOf(0, &[0, 0xffff_ffff]), Missing, "execution domains other than Linux's default"),
    rule("bpf", Always, Missing, "programs run by the kernel"),
    rule("perf_event_open", Always, Missing, "the machine's performance counters (a timing channel)"),
    rule("userfaultfd", Always, Missing, "a classic aid to kernel exploits"),
    rule("ptrace", Always, Missing, TRACE),
    rule("process_vm_readv", Always, Missing, TRACE),
    rule("process_vm_writev", Always, Missing, TRACE),
    rule("process_madvise", Always, Missing, TRACE),
    rule("pidfd_getfd", Always, Missing, TRACE),
    rule("kcmp", Always, Missing, TRACE),
    rule("init_module", Always, Missing, KERNEL),
    rule("finit_module", Always, Missing, KERNEL),
    rule("delete_module", Always, Missing, KERNEL),
    rule("kexec_load", Always, Missing, KERNEL),
    rule("kexec_file_load", Always, Missing, KERNEL),
    rule("reboot", Always, Missing, KERNEL),
    rule("swapon", Always, Missing, KERNEL),
    rule("swapoff", Always, Missing, KERNEL),
    rule("acct", Always, Missing, KERNEL),
    rule("quotactl", Always, Missing, KERNEL),
    rule("syslog", Always, Missing, KERNEL),
    rule("open_by_handle_at", Always, Missing, "opens files by handle, around the mounts"),
    rule("socket", NetlinkBeyondRoute, Missing, "kernel interfaces over netlink (route, the resolver's, stays)"),
    rule("inotify_init1", Always, Missing, CHANNEL),
    rule("fanotify_init", Always, Missing, CHANNEL),
    // F_GETLK stays: with every lock of the sandbox held to nothing it sees none of them.
    rule("fcntl", OneOf(1, &[F_SETLEASE, F_NOTIFY]), Missing, CHANNEL),
    rule("flock", Always, Ignored, CHANNEL),
    rule("fcntl", OneOf(1, &[F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW]), Ignored, CHANNEL),
    rule("memfd_create", MemoryNotHeld, Missing, UNCOUNTED),
    rule("shmget", MemoryNotHeld, Missing, UNCOUNTED),
    rule("msgget", MemoryNotHeld, Missing, UNCOUNTED),
    rule("sched_setaffinity", Always, Forbidden, "the agent stays on the core it was given"),
];

/// The number of `call` on this architecture (`None`: it has no such call, e.g. `inotify_init`
/// on aarch64).
#[cfg(target_os = "linux")]
pub fn number(call: &str) -> Option<i64> {
    use libc as l;
    let n: l::c_long = match call {
        "io_uring_setup" => l::SYS_io_uring_setup,
        "io_uring_enter" => l::SYS_io_uring_enter,
        "io_uring_register" => l::SYS_io_uring_register,
        "add_key" => l::SYS_add_key,
        "request_key" => l::SYS_request_key,
        "keyctl" => l::SYS_keyctl,
        "unshare" => l::SYS_unshare,
        "clone" => l::SYS_clone,
        "clone3" => l::SYS_clone3,
        "setns" => l::SYS_setns,
        "mount" => l::SYS_mount,
        "umount2" => l::SYS_umount2,
        "fsopen" => l::SYS_fsopen,
        "fsconfig" => l::SYS_fsconfig,
        "fsmount" => l::SYS_fsmount,
        "fspick" => l::SYS_fspick,
        "open_tree" => l::SYS_open_tree,
        "move_mount" => l::SYS_move_mount,
        "mount_setattr" => l::SYS_mount_setattr,
        "pivot_root" => l::SYS_pivot_root,
        "chroot" => l::SYS_chroot,
        "personality" => l::SYS_personality,
        "bpf" => l::SYS_bpf,
        "perf_event_open" => l::SYS_perf_event_open,
        "userfaultfd" => l::SYS_userfaultfd,
        "ptrace" => l::SYS_ptrace,
        "process_vm_readv" => l::SYS_process_vm_readv,
        "process_vm_writev" => l::SYS_process_vm_writev,
        "process_madvise" => l::SYS_process_madvise,
        "pidfd_getfd" => l::SYS_pidfd_getfd,
        "kcmp" => l::SYS_kcmp,
        "init_module" => l::SYS_init_module,
        "finit_module" => l::SYS_finit_module,
        "delete_module" => l::SYS_delete_module,
        "kexec_load" => l::SYS_kexec_load,
        "kexec_file_load" => l::SYS_kexec_file_load,
        "reboot" => l::SYS_reboot,
        "swapon" => l::SYS_swapon,
        "swapoff" => l::SYS_swapoff,
        "acct" => l::SYS_acct,
        "quotactl" => l::SYS_quotactl,
        "syslog" => l::SYS_syslog,
        "open_by_handle_at" => l::SYS_open_by_handle_at,
        "socket" => l::SYS_socket,
        "inotify_init1" => l::SYS_inotify_init1,
        "fanotify_init" => l::SYS_fanotify_init,
        "fcntl" => l::SYS_fcntl,
        "flock" => l::SYS_flock,
        "memfd_create" => l::SYS_memfd_create,
        "shmget" => l::SYS_shmget,
        "msgget" => l::SYS_msgget,
        "sched_setaffinity" => l::SYS_sched_setaffinity,
        #[cfg(target_arch = "x86_64")]
        "inotify_init" => l::SYS_inotify_init,
        #[cfg(target_arch = "x86_64")]
        "iopl" => l::SYS_iopl,
        #[cfg(target_arch = "x86_64")]
        "ioperm" => l::SYS_ioperm,
        _ => return None,
    };
    #[allow(clippy::useless_conversion)] // `c_long` is `i32` on 32-bit systems
    let n = i64::from(n);
    Some(n)
}

/// Calls of this architecture only, refused as [`RULES`] would (x86_64's port access and its
/// older `inotify_init`).
pub const NATIVE_ONLY: &[Rule] = &[
    rule("inotify_init", Always, Missing, CHANNEL),
    rule("iopl", Always, Missing, KERNEL),
    rule("ioperm", Always, Missing, KERNEL),
];

/// The filters of the policy for this architecture, as `bwrap --add-seccomp-fd` reads them (the
/// `struct sock_filter` array), one per [`Refusal`] (a filter answers every call it matches the
/// same way); `memory_held`: a control group holds the agent's memory in total. `None` where
/// seccompiler knows no such architecture.
#[cfg(target_os = "linux")]
pub fn filters(memory_held: bool) -> Option<Vec<Vec<u8>>> {
    use seccompiler::{SeccompAction, SeccompFilter};
    let arch: seccompiler::TargetArch = std::env::consts::ARCH.try_into().ok()?;
    let mut out = Vec::new();
    for (refusal, action) in [
        (Missing, SeccompAction::Errno(libc::ENOSYS as u32)),
        (Forbidden, SeccompAction::Errno(libc::EPERM as u32)),
        (Ignored, SeccompAction::Errno(0)),
    ] {
        let mut rules: std::collections::BTreeMap<i64, Vec<seccompiler::SeccompRule>> = Default::default();
        for r in RULES.iter().chain(NATIVE_ONLY).filter(|r| r.refusal == refusal) {
            let Some(nr) = number(r.call) else { continue };
            let conditions = match conditions(r.when, memory_held) {
                Some(c) => c,
                None => continue,
            };
            // x32 entry points: the same number with bit 30 set, seen under x86_64's arch word.
            let twins: &[i64] = if cfg!(target_arch = "x86_64") { &[0, 0x4000_0000] } else { &[0] };
            for twin in twins {
                let entry = rules.entry(nr | twin).or_default();
                entry.extend(conditions.iter().cloned());
            }
        }
        // x32's own numbers of calls whose native ABI is another (see arch/x86's syscall_64.tbl).
        if cfg!(target_arch = "x86_64") && refusal == Missing {
            for nr in [521, 539, 540] {
                rules.entry(0x4000_0000 | nr).or_default();
            }
        }
        let filter = SeccompFilter::new(rules, SeccompAction::Allow, action, arch).ok()?;
        let program: seccompiler::BpfProgram = filter.try_into().ok()?;
        let mut bytes = Vec::with_capacity(program.len() * 8);
        for ins in program {
            bytes.extend_from_slice(&ins.code.to_ne_bytes());
            bytes.push(ins.jt);
            bytes.push(ins.jf);
            bytes.extend_from_slice(&ins.k.to_ne_bytes());
        }
        out.push(bytes);
    }
    Some(out)
}

/// The seccompiler rules (alternatives: any one matches) under which a call is refused; empty:
/// always; `None`: not at all.
#[cfg(target_os = "linux")]
fn conditions(when: When, memory_held: bool) -> Option<Vec<seccompiler::SeccompRule>> {
    use seccompiler::{SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as C, SeccompRule};
    let one = |conds: Vec<C>| SeccompRule::new(conds).expect("a rule with conditions");
    let cond = |arg: u8, op: Op, value: u64| C::new(arg, Len::Dword, op, value).expect("an argument of 0..6");
    Some(match when {
        When::Always => Vec::new(),
        When::MemoryNotHeld if memory_held => return None,
        When::MemoryNotHeld => Vec::new(),
        When::AnyBit(arg, bits) => bits.iter().map(|&b| one(vec![cond(arg, Op::MaskedEq(b), b)])).collect(),
        When::OneOf(arg, values) => values.iter().map(|&v| one(vec![cond(arg, Op::Eq, v)])).collect(),
        When::NoneOf(arg, values) => vec![one(values.iter().map(|&v| cond(arg, Op::Ne, v)).collect())],
        When::NetlinkBeyondRoute => {
            vec![one(vec![cond(0, Op::Eq, libc::AF_NETLINK as u64), cond(2, Op::Ne, libc::NETLINK_ROUTE as u64)])]
        }
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn every_call_of_the_policy_has_a_number_here() {
        for r in RULES {
            assert!(number(r.call).is_some(), "{}", r.call);
        }
    }

    #[test]
    fn the_filters_are_whole_instructions_ending_in_allow() {
        for held in [false, true] {
            let filters = filters(held).expect("x86_64 and aarch64 have filters");
            assert_eq!(filters.len(), 3);
            for bpf in filters {
                assert_eq!(bpf.len() % 8, 0);
                let last = &bpf[bpf.len() - 8..];
                // BPF_RET | BPF_K, SECCOMP_RET_ALLOW
                assert_eq!(u16::from_ne_bytes([last[0], last[1]]), 0x06);
                assert_eq!(u32::from_ne_bytes([last[4], last[5], last[6], last[7]]), 0x7FFF_0000);
            }
        }
    }
}
