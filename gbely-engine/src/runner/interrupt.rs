//! Stopping a match on Ctrl-C or SIGTERM.
//!
//! A `Guard` (feature `runner`) installs handlers that only raise a flag; the match loop and the
//! wait for agent answers look at it (at least every [`POLL`]) and end the match cleanly: agents
//! killed, the partial replay written and marked `interrupted`. Handlers are chained, not
//! replaced: inside a Python process the interpreter's own SIGINT handler still runs, so Python
//! raises `KeyboardInterrupt` when the engine hands control back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How often waits look at the flag: the upper bound on the reaction time to Ctrl-C.
pub const POLL: Duration = Duration::from_millis(50);

fn flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

std::thread_local! {
    /// The stop of the work this thread does for someone (a stand's match), if any.
    static SCOPE: std::cell::RefCell<Option<Arc<AtomicBool>>> = const { std::cell::RefCell::new(None) };
}

/// Whether a stop was requested (Ctrl-C, SIGTERM, [`request`]) since the current `Guard` was
/// installed, or the stop of the [`within`] this thread runs in was raised.
pub fn requested() -> bool {
    flag().load(Ordering::Relaxed) || SCOPE.with(|s| s.borrow().as_ref().is_some_and(|f| f.load(Ordering::Relaxed)))
}

/// Runs `f` on this thread with `stop` as its own stop, beside Ctrl-C: raising it stops the
/// matches `f` plays as Ctrl-C would, and nothing else (one of a stand's matches). The
/// tournament core's workers run in the scope of the thread that started them ([`scope`]).
pub fn within<T>(stop: Option<Arc<AtomicBool>>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Arc<AtomicBool>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            SCOPE.with(|s| *s.borrow_mut() = before);
        }
    }
    let _restore = Restore(SCOPE.with(|s| std::mem::replace(&mut *s.borrow_mut(), stop)));
    f()
}

/// The stop of the [`within`] this thread runs in, to hand to threads it starts.
pub fn scope() -> Option<Arc<AtomicBool>> {
    SCOPE.with(|s| s.borrow().clone())
}

/// Asks the running match to stop, as Ctrl-C does (for embedders and tests).
pub fn request() {
    flag().store(true, Ordering::Relaxed);
}

/// SIGINT and SIGTERM raise the stop flag while this lives (feature `runner`).
#[cfg(feature = "runner")]
#[derive(Debug)]
pub struct Guard {
    ids: Vec<signal_hook::SigId>,
    /// With [`Guard::install_exiting`]: lowered when the guard goes, which ends its watchdog.
    alive: Option<Arc<AtomicBool>>,
}

#[cfg(feature = "runner")]
impl Guard {
    /// Clears the flag and installs the handlers.
    pub fn install() -> std::io::Result<Guard> {
        flag().store(false, Ordering::Relaxed);
        let mut ids = Vec::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            ids.push(signal_hook::flag::register(sig, Arc::clone(flag()))?);
        }
        Ok(Guard { ids, alive: None })
    }
}

#[cfg(feature = "runner")]
impl Guard {
    /// [`Guard::install`] for a program that owns its process (the `gbely` command): a signal
    /// always stops it, even when it is blocked where the flag is not looked at (a write to a
    /// full pipe, a file system that does not answer). A second SIGINT or SIGTERM exits at once;
    /// after the first, the process exits by itself `grace` later if it is still running (the
    /// clean stop — agents killed, the replay written — takes far less). Both exit with 130, at
    /// once and silently (the blocked thread may hold the lock of stderr).
    /// Not for a library inside someone else's process (`gbely.play` in Python): there a signal
    /// only raises the flag.
    pub fn install_exiting(grace: Duration) -> std::io::Result<Guard> {
        flag().store(false, Ordering::Relaxed);
        // A signal, not `request()` (a league stopping itself on an error): only a signal arms
        // the exit.
        let signalled = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // Registered first, so that it sees the flag as the previous signal left it.
            ids.push(signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&signalled))?);
            ids.push(signal_hook::flag::register(sig, Arc::clone(&signalled))?);
            ids.push(signal_hook::flag::register(sig, Arc::clone(flag()))?);
        }
        let alive = Arc::new(AtomicBool::new(true));
        let watching = Arc::clone(&alive);
        std::thread::Builder::new().name("gbely-stop".into()).spawn(move || {
            while watching.load(Ordering::Relaxed) {
                if signalled.load(Ordering::Relaxed) {
                    let since = std::time::Instant::now();
                    while since.elapsed() < grace {
                        if !watching.load(Ordering::Relaxed) {
                            return;
                        }
                        std::thread::sleep(POLL);
                    }
                    exit_now(130);
                }
                std::thread::sleep(POLL);
            }
        })?;
        Ok(Guard { ids, alive: Some(alive) })
    }
}

/// Ends the process at once, as the second signal does: no clean-up, which could wait forever on
/// what the blocked thread holds (the lock of stderr, when it is stuck writing to a full pipe).
#[cfg(feature = "runner")]
fn exit_now(code: i32) -> ! {
    signal_hook::low_level::exit(code)
}

#[cfg(feature = "runner")]
impl Drop for Guard {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        if let Some(alive) = self.alive.take() {
            alive.store(false, Ordering::Relaxed);
        }
    }
}
