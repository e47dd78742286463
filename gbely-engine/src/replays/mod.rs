//! Reading replays, as files and as matches: reading (plain or gzip, bounded), rebuilding the state of any
//! round (`frames`), re-simulating to verify and the observation a seat got (`verify`), figures
//! (`stats`), the terminal rendering (`terminal`) and the HTML viewer (`viewer`). Writing is
//! [`crate::recorder`]'s.

mod budget;
pub mod discards;
mod frames;
mod stats;
mod terminal;
mod verify;
#[cfg(feature = "gzip")]
pub mod viewer;

pub use budget::{changes_bound, estimate, within_budget, Work, READ_BUDGET};
pub use frames::{frame_after, frames, Frame, MAX_FRAME_CELLS};
pub use stats::{stats, stats_text};
pub use terminal::{render_frame, render_legend, seat_colors, terrain_color, SeatColor};
pub use verify::{
    answer_commands, expanded, observation_at, recorded_answer, recorded_notes, resimulate, resimulate_observing,
    resimulate_regenerating, session_after, verify, Mismatch, Verified,
};

use std::io::Read;

use std::path::Path;

use gbely_world::replay::ReplayError;
use gbely_world::Replay;

/// Largest replay read, uncompressed: 128 MiB.
///
/// A full 150-round match on the reference map is a few megabytes (version 2; about 25 MB in
/// version 1), a match of 100 000 rounds some tens. Reading streams through the decoder, so the
/// cap bounds the work a file (a gzip bomb) can ask for, and the longest string the parser may
/// have to hold, not memory set aside; what the parsed replay holds is bounded on its own
/// (`gbely_world::replay::MAX_REPLAY_HELD`), and the readers' work by [`READ_BUDGET`]. A match
/// whose agents answer megabytes every round can write a replay over the cap: it is refused,
/// whole.
pub const MAX_REPLAY_BYTES: u64 = 128 << 20;

/// Why a replay file could not be read. The message already says the cause, so the cause is not
/// also chained as a `source` (an error report walking the chain would print it twice).
#[derive(Debug, thiserror::Error)]
pub enum ReplayFileError {
    /// The file could not be opened or read (or not decompressed).
    #[error("cannot read {path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        error: std::io::Error,
    },
    /// The text was read but is not a valid replay.
    #[error("{path}: {error}")]
    Replay {
        /// The file.
        path: String,
        /// What is wrong with it, and where.
        error: ReplayError,
    },
    /// The (decompressed) bytes are not UTF-8 text.
    #[error("{path}: not a replay: not UTF-8 text (an invalid byte at offset {offset})")]
    NotText {
        /// The file.
        path: String,
        /// The offset of the first invalid byte, in the decompressed bytes.
        offset: u64,
    },
    /// Over [`MAX_REPLAY_BYTES`] uncompressed.
    #[error("{path}: larger than {MAX_REPLAY_BYTES} bytes uncompressed")]
    TooLarge {
        /// The file.
        path: String,
    },
    /// A file cut short ([`read_replay_or_cut`]) whose rounds would take more than the readers'
    /// [`READ_BUDGET`] to re-simulate.
    #[error("{path}: {why}")]
    OverBudget {
        /// The file.
        path: String,
        /// What it would take.
        why: String,
    },
}

/// Why a [`Guard`] stopped the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    TooLarge,
    NotText { offset: u64 },
}

/// The decompressed bytes on their way to the parser: at most `max` of them ([`MAX_REPLAY_BYTES`]),
/// and UTF-8. Checking as they flow keeps a bomb or a binary file from being read whole; why it
/// stopped is kept in `stop`, since the parser reports only that reading failed.
struct Guard<R> {
    inner: R,
    max: u64,
    read: u64,
    /// Bytes of a UTF-8 sequence cut at the end of the last read, checked with the next one.
    pending: Vec<u8>,
    stop: std::rc::Rc<std::cell::Cell<Option<Stop>>>,
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let stop = if self.read + n as u64 > self.max { Some(Stop::TooLarge) } else { self.utf8(&buf[..n]) };
        self.read += n as u64;
        if let Some(stop) = stop {
            self.stop.set(Some(stop));
            return Err(std::io::Error::other("the replay file was refused while reading"));
        }
        Ok(n)
    }
}

impl<R> Guard<R> {
    /// Checks the next bytes (none at the end of the file) are UTF-8 text.
    fn utf8(&mut self, bytes: &[u8]) -> Option<Stop> {
        let start = self.read - self.pending.len() as u64;
        let joined;
        let chunk = if self.pending.is_empty() {
            bytes
        } else {
            self.pending.extend_from_slice(bytes);
            joined = std::mem::take(&mut self.pending);
            &joined[..]
        };
        match std::str::from_utf8(chunk) {
            Ok(_) => None,
            // A sequence cut by the end of this read: checked with the next (an error at the end).
            Err(e) if e.error_len().is_none() && !bytes.is_empty() => {
                self.pending = chunk[e.valid_up_to()..].to_vec();
                None
            }
            Err(e) => Some(Stop::NotText { offset: start + e.valid_up_to() as u64 }),
        }
    }
}

/// A replay file's JSON text as a stream, gzip-compressed or not: the content decides, not the name.
fn open_text(path: &Path) -> std::io::Result<(impl Read, std::rc::Rc<std::cell::Cell<Option<Stop>>>)> {
    use std::io::BufRead;
    let mut file = std::io::BufReader::new(crate::files::open_regular(path)?);
    let inner: Box<dyn Read> = if file.fill_buf()?.starts_with(&[0x1f, 0x8b]) {
        #[cfg(feature = "gzip")]
        {
            Box::new(flate2::bufread::MultiGzDecoder::new(file))
        }
        #[cfg(not(feature = "gzip"))]
        return Err(std::io::Error::other("gzip-compressed, and this build reads no gzip (feature `gzip`)"));
    } else {
        Box::new(file)
    };
    let stop = std::rc::Rc::new(std::cell::Cell::new(None));
    let guard = Guard { inner, max: MAX_REPLAY_BYTES, read: 0, pending: Vec::new(), stop: stop.clone() };
    Ok((std::io::BufReader::with_capacity(1 << 16, guard), stop))
}

/// Reads a replay file, gzip-compressed (`.json.gz`) or not, and checks its structure
/// ([`Replay::check`]). The text streams from the file into the parser, so memory holds the
/// replay, not its text; at most [`MAX_REPLAY_BYTES`] are read.
pub fn read_replay(path: &Path) -> Result<Replay, ReplayFileError> {
    let p = path.display().to_string();
    let io = |error| ReplayFileError::Io { path: p.clone(), error };
    let (text, stop) = open_text(path).map_err(io)?;
    let error = match Replay::from_reader(text) {
        Ok(replay) => return Ok(replay),
        Err(error) => error,
    };
    let error = match (stop.get(), error) {
        (Some(Stop::TooLarge), _) => return Err(ReplayFileError::TooLarge { path: p }),
        (Some(Stop::NotText { offset }), _) => return Err(ReplayFileError::NotText { path: p, offset }),
        (None, ReplayError::Json(e)) if e.is_io() => return Err(io(e.into())),
        // A document that does not parse as a replay may be another document altogether: a
        // second reading of its head says so.
        (None, ReplayError::Json(e)) => {
            let (text, _) = open_text(path).map_err(io)?;
            Replay::head_error(text).unwrap_or(ReplayError::Json(e))
        }
        (None, error) => error,
    };
    Err(ReplayFileError::Replay { path: p, error })
}

/// A replay file as [`read_replay_or_cut`] reads it.
#[derive(Debug)]
pub struct ReadReplay {
    /// The replay: a whole file's, or the rounds of one cut short.
    pub replay: Replay,
    /// The file stops after `replay`'s last round: its match's process was killed (`kill -9`,
    /// a crash, a power cut) before it wrote the rest, its final state and its result. Those
    /// are then the re-simulation's of the rounds kept, the result `ended_by: interrupted`
    /// (unless the rounds end the match): never a whole match's, and a reader says so.
    pub cut_short: bool,
}

/// [`read_replay`], and for a file that stops in the middle (the replay of a match whose process
/// was killed: the writer flushes every round, see `crate::recorder::ReplayWriter`) the rounds it
/// holds whole, marked [`ReadReplay::cut_short`]. Any other fault is refused as by [`read_replay`],
/// and so is a file that stops before its rounds begin.
///
/// For the readers a person runs on such a file (`gbely replay verify`, `stats`, `show`,
/// `view`); a reader that takes a replay as a match's record (results, data sets) uses
/// [`read_replay`], which refuses it. The file's text is held while its rounds are read (at most
/// [`MAX_REPLAY_BYTES`]), and the rounds are re-simulated once, within [`READ_BUDGET`].
pub fn read_replay_or_cut(path: &Path) -> Result<ReadReplay, ReplayFileError> {
    let error = match read_replay(path) {
        Ok(replay) => return Ok(ReadReplay { replay, cut_short: false }),
        Err(e) => e,
    };
    let stops_early = match &error {
        // A gzip stream without its end (the decompressor's words for it).
        ReplayFileError::Io { error, .. } => error.kind() == std::io::ErrorKind::UnexpectedEof,
        ReplayFileError::Replay { error: ReplayError::Json(e), .. } => e.is_eof(),
        _ => false,
    };
    if !stops_early {
        return Err(error);
    }
    let p = path.display().to_string();
    let (mut text, stop) = open_text(path).map_err(|error| ReplayFileError::Io { path: p.clone(), error })?;
    let mut bytes = Vec::new();
    // What was read before the stream stopped is kept (`read_to_end` leaves it in `bytes`).
    let _ = text.read_to_end(&mut bytes);
    match stop.get() {
        Some(Stop::TooLarge) => return Err(ReplayFileError::TooLarge { path: p }),
        Some(Stop::NotText { offset }) => return Err(ReplayFileError::NotText { path: p, offset }),
        None => {}
    }
    let text = match std::str::from_utf8(&bytes) {
        Ok(t) => t,
        // A character cut by the end of the file: what comes before it.
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&bytes[..e.valid_up_to()]).expect("valid up to"),
        Err(e) => return Err(ReplayFileError::NotText { path: p, offset: e.valid_up_to() as u64 }),
    };
    /// Why a cut-short file was refused.
    enum Refused {
        Replay(ReplayError),
        OverBudget(String),
    }
    impl From<ReplayError> for Refused {
        fn from(e: ReplayError) -> Refused {
            Refused::Replay(e)
        }
    }
    let replay = Replay::from_unfinished(text, |replay, map| {
        within_budget(replay, map, Work::Resimulate).map_err(Refused::OverBudget)?;
        let m = resimulate(replay, std::sync::Arc::new(map.clone()), |_, _, _| true);
        let names: Vec<String> = replay.seats.iter().map(|s| s.name.clone()).collect();
        let final_state = gbely_world::replay::FinalState::of(m.owners(), m.all_units(), m.all_fortifications());
        Ok((final_state, crate::recorder::stopped_result(&m, &names)))
    });
    match replay {
        Ok(replay) => Ok(ReadReplay { replay, cut_short: true }),
        Err(Refused::Replay(error)) => Err(ReplayFileError::Replay { path: p, error }),
        Err(Refused::OverBudget(why)) => Err(ReplayFileError::OverBudget { path: p, why }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `bytes` through a [`Guard`] of `max` bytes, `chunk` bytes per read.
    fn guarded(bytes: &[u8], max: u64, chunk: usize) -> (Vec<u8>, Option<Stop>) {
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let stop = std::rc::Rc::new(std::cell::Cell::new(None));
        let mut g = Guard { inner: Chunks(bytes, chunk), max, read: 0, pending: Vec::new(), stop: stop.clone() };
        let mut out = Vec::new();
        let _ = g.read_to_end(&mut out);
        (out, stop.get())
    }

    #[test]
    fn the_guard_passes_utf8_cut_anywhere_and_stops_at_a_bad_byte_or_the_cap() {
        let text = "{\"name\": \"Žilina – 🦀\"}".as_bytes();
        for chunk in 1..=text.len() {
            assert_eq!(guarded(text, 1000, chunk), (text.to_vec(), None), "chunk {chunk}");
        }
        let mut bad = text.to_vec();
        bad[12] = 0xff;
        assert_eq!(guarded(&bad, 1000, 5).1, Some(Stop::NotText { offset: 12 }));
        // A sequence cut by the end of the file.
        assert_eq!(guarded(&text[..text.len() - 4], 1000, 3).1, Some(Stop::NotText { offset: 22 }));
        assert_eq!(guarded(text, text.len() as u64, 7).1, None);
        assert_eq!(guarded(text, text.len() as u64 - 1, 7).1, Some(Stop::TooLarge));
    }
}
