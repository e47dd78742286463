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

/// Whether a stop was requested (Ctrl-C, SIGTERM, [`request`]) since the current `Guard` was
/// installed.
pub fn requested() -> bool {
    flag().load(Ordering::Relaxed)
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
        Ok(Guard { ids })
    }
}

#[cfg(feature = "runner")]
impl Drop for Guard {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
