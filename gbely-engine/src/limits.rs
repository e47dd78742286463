//! What an agent is allowed, typed from where the user says it to where the runner holds it:
//! the round's [`TimeLimit`] and the [`MemoryLimit`], and every default of a match in one place
//! ([`Defaults`], after the rules' constants in `gbely_rules::constants`).

use std::time::Duration;

use gbely_rules::constants;

/// The defaults of a match, in one place: the rules' constants where the rules set them, and
/// the SDK's own choices. The command line's `--help`, the Python package's signatures and the
/// runner take them from here.
#[derive(Debug)]
pub struct Defaults;

impl Defaults {
    /// Rounds of a match (SPEC §12 `POCET_KOL`).
    pub const ROUNDS: u32 = constants::ROUNDS;
    /// The judge's time for a round (SPEC §12 `LIMIT_KOLA_S`).
    pub const TIME_LIMIT: TimeLimit = TimeLimit::JUDGE;
    /// Memory each agent process may use: 4 GiB, generous for any Python agent (numpy
    /// included), small enough that a leaking agent fails alone.
    pub const MEMORY_LIMIT: MemoryLimit = MemoryLimit::mib(4096);
    /// The folder run folders are made in (agents' working folders, logs, replays).
    pub const RUNS_FOLDER: &'static str = "gbely-runs";
    /// The other side of a duel when none is named.
    pub const OPPONENT: &'static str = "council";
}

/// A round's time limit (SPEC §8): seconds, more than 0 and at most [`TimeLimit::MAX_SECONDS`],
/// or none (debugging). Parsed once, from the command line (`"2"`, `"0.5"`, `"off"`) or from
/// Python (`time_limit=2.0` / `None`); `0`, negatives, NaN and infinities are refused rather than
/// read as "off": a zero limit is a mistake, not a wish. In JSON (league jobs) it is seconds or
/// `null`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeLimit(Option<Duration>);

/// What a time limit may be, for the error message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("seconds more than 0 and at most 3600 (e.g. 2 or 0.5), or `off` for no limit")]
pub struct TimeLimitError;

impl TimeLimit {
    /// The longest limit accepted: an hour.
    pub const MAX_SECONDS: f64 = 3600.0;
    /// No limit.
    pub const OFF: TimeLimit = TimeLimit(None);
    /// The judge's: `LIMIT_KOLA_S` = 2 s.
    pub const JUDGE: TimeLimit =
        TimeLimit(Some(Duration::from_millis((constants::ROUND_TIME_LIMIT_S * 1000.0) as u64)));

    /// The judge's limit ([`TimeLimit::JUDGE`]).
    pub fn judge() -> TimeLimit {
        TimeLimit::JUDGE
    }

    /// A limit of `secs` seconds: more than 0 and at most [`TimeLimit::MAX_SECONDS`].
    pub fn seconds(secs: f64) -> Result<TimeLimit, TimeLimitError> {
        if secs.is_finite() && secs > 0.0 && secs <= TimeLimit::MAX_SECONDS {
            Ok(TimeLimit(Some(Duration::from_secs_f64(secs))))
        } else {
            Err(TimeLimitError)
        }
    }

    /// From Python's or JSON's `seconds or None`.
    pub fn from_option(secs: Option<f64>) -> Result<TimeLimit, TimeLimitError> {
        secs.map_or(Ok(TimeLimit::OFF), TimeLimit::seconds)
    }

    /// The limit, `None` for no limit.
    pub fn duration(self) -> Option<Duration> {
        self.0
    }

    /// The limit in seconds, `None` for no limit.
    pub fn as_secs_f64(self) -> Option<f64> {
        self.0.map(|d| d.as_secs_f64())
    }

    /// Whether there is no limit.
    pub fn is_off(self) -> bool {
        self.0.is_none()
    }

    /// Whether an answer that took `elapsed` is over the limit: a timeout (SPEC §8). The one
    /// place this rule is written.
    pub fn exceeded_by(self, elapsed: Duration) -> bool {
        self.0.is_some_and(|limit| elapsed > limit)
    }
}

/// How summaries word answer times against the limit (`gbely play`'s, `gbely check`'s, the
/// arena's status page; the viewer's graph writes seconds the same way).
impl TimeLimit {
    /// One answer: `round 87: 1.91 s of 2 s` (without `of …` when there is no limit).
    pub fn answer_text(self, round: u32, ms: u32) -> String {
        let of = self.as_secs_f64().map_or(String::new(), |l| format!(" of {}", seconds_text(l)));
        format!("round {round}: {}{of}", seconds_text(f64::from(ms) / 1000.0))
    }

    /// A seat's slowest answers, `(round, milliseconds)` slowest first (as
    /// [`crate::session::MatchRecord::slowest`] keeps them), in one line:
    /// `round 87: 1.91 s of 2 s, round 3: 0.5 s of 2 s`.
    pub fn slowest_text(self, slowest: &[(u32, u32)]) -> String {
        slowest.iter().map(|&(r, ms)| self.answer_text(r, ms)).collect::<Vec<_>>().join(", ")
    }
}

/// `1.91 s`, `2 s`, `0.004 s`: seconds as a person reads them.
pub fn seconds_text(s: f64) -> String {
    if s >= 0.1 || s == 0.0 {
        format!("{} s", format!("{s:.2}").trim_end_matches('0').trim_end_matches('.'))
    } else {
        format!("{s:.3} s")
    }
}

impl Default for TimeLimit {
    fn default() -> TimeLimit {
        Defaults::TIME_LIMIT
    }
}

impl std::str::FromStr for TimeLimit {
    type Err = TimeLimitError;

    fn from_str(s: &str) -> Result<TimeLimit, TimeLimitError> {
        match s.trim() {
            "off" | "none" => Ok(TimeLimit::OFF),
            t => TimeLimit::seconds(t.parse().map_err(|_| TimeLimitError)?),
        }
    }
}

/// `2`, `0.5` or `off`: what [`FromStr`](std::str::FromStr) reads back.
impl std::fmt::Display for TimeLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.as_secs_f64() {
            Some(s) => write!(f, "{s}"),
            None => f.write_str("off"),
        }
    }
}

impl serde::Serialize for TimeLimit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_secs_f64().serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for TimeLimit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TimeLimit, D::Error> {
        TimeLimit::from_option(Option::<f64>::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// The memory an agent process may use, in bytes (see the runner for how each OS holds it), or
/// none. From the command line in MiB (`4096`, `off`); in JSON bytes or `null`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct MemoryLimit(Option<u64>);

/// What a memory limit may be, for the error message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("give MiB from 64 to 1048576 (e.g. 4096), or `off`")]
pub struct MemoryLimitError;

impl MemoryLimit {
    /// No limit.
    pub const OFF: MemoryLimit = MemoryLimit(None);
    /// The smallest and largest limits, in MiB.
    pub const MIB_RANGE: (u64, u64) = (64, 1 << 20);

    /// A limit of `mib` MiB, as given (not checked against [`MemoryLimit::MIB_RANGE`], which
    /// [`MemoryLimit::from_mib`] and parsing do).
    pub const fn mib(mib: u64) -> MemoryLimit {
        MemoryLimit(Some(mib << 20))
    }

    /// A limit in bytes (`None`: no limit).
    pub fn bytes(self) -> Option<u64> {
        self.0
    }

    /// A limit of `bytes` (`None`: no limit), as a library caller gives it.
    pub fn from_bytes(bytes: Option<u64>) -> MemoryLimit {
        MemoryLimit(bytes)
    }

    /// From Python's `MiB or None`, in the command line's range.
    pub fn from_mib(mib: Option<u64>) -> Result<MemoryLimit, MemoryLimitError> {
        match mib {
            None => Ok(MemoryLimit::OFF),
            Some(m) if (MemoryLimit::MIB_RANGE.0..=MemoryLimit::MIB_RANGE.1).contains(&m) => Ok(MemoryLimit::mib(m)),
            Some(_) => Err(MemoryLimitError),
        }
    }
}

impl Default for MemoryLimit {
    fn default() -> MemoryLimit {
        Defaults::MEMORY_LIMIT
    }
}

impl std::str::FromStr for MemoryLimit {
    type Err = MemoryLimitError;

    fn from_str(s: &str) -> Result<MemoryLimit, MemoryLimitError> {
        match s.trim() {
            "off" | "none" => Ok(MemoryLimit::OFF),
            t => MemoryLimit::from_mib(Some(t.parse().map_err(|_| MemoryLimitError)?)),
        }
    }
}

/// MiB or `off`: what [`FromStr`](std::str::FromStr) reads back.
impl std::fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(b) => write!(f, "{}", b >> 20),
            None => f.write_str("off"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_parse_once_and_refuse_nonsense() {
        assert_eq!("2".parse(), Ok(TimeLimit::judge()));
        assert_eq!(TimeLimit::JUDGE.duration(), Some(Duration::from_secs(2)), "SPEC §12: LIMIT_KOLA_S = 2");
        assert_eq!("0.5".parse::<TimeLimit>().unwrap().duration(), Some(Duration::from_millis(500)));
        assert_eq!("off".parse(), Ok(TimeLimit::OFF));
        assert_eq!("3600".parse::<TimeLimit>().unwrap().duration(), Some(Duration::from_secs(3600)));
        for bad in ["0", "-1", "1e20", "nan", "inf", "3600.5", "two", ""] {
            assert_eq!(bad.parse::<TimeLimit>(), Err(TimeLimitError), "{bad}");
        }
        assert_eq!(TimeLimit::seconds(f64::NAN), Err(TimeLimitError));
        // Answer times as the summaries word them.
        assert_eq!(TimeLimit::JUDGE.answer_text(87, 1910), "round 87: 1.91 s of 2 s");
        assert_eq!(
            TimeLimit::JUDGE.slowest_text(&[(1, 310), (0, 41), (2, 0)]),
            "round 1: 0.31 s of 2 s, round 0: 0.041 s of 2 s, round 2: 0 s of 2 s"
        );
        assert_eq!(TimeLimit::OFF.answer_text(3, 2500), "round 3: 2.5 s");
        assert_eq!(TimeLimit::from_option(None), Ok(TimeLimit::OFF));
        assert_eq!(TimeLimit::from_option(Some(0.0)), Err(TimeLimitError));
    }

    #[test]
    fn a_time_limit_reads_back_what_it_prints_and_travels_as_seconds_or_null() {
        for t in [TimeLimit::JUDGE, TimeLimit::OFF, TimeLimit::seconds(0.25).unwrap()] {
            assert_eq!(t.to_string().parse(), Ok(t));
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(serde_json::from_str::<TimeLimit>(&json).unwrap(), t);
        }
        assert_eq!(serde_json::to_string(&TimeLimit::JUDGE).unwrap(), "2.0");
        assert_eq!(serde_json::to_string(&TimeLimit::OFF).unwrap(), "null");
        assert!(serde_json::from_str::<TimeLimit>("-3").is_err());
    }

    #[test]
    fn only_an_answer_slower_than_the_limit_is_a_timeout() {
        let two = TimeLimit::JUDGE;
        assert!(!two.exceeded_by(Duration::from_secs(2)), "exactly the limit is in time");
        assert!(two.exceeded_by(Duration::from_millis(2001)));
        assert!(!TimeLimit::OFF.exceeded_by(Duration::from_secs(100_000)));
    }

    #[test]
    fn memory_limits_are_mib_in_range_or_off() {
        assert_eq!("4096".parse(), Ok(Defaults::MEMORY_LIMIT));
        assert_eq!(Defaults::MEMORY_LIMIT.bytes(), Some(4 << 30));
        assert_eq!("off".parse(), Ok(MemoryLimit::OFF));
        assert_eq!("64".parse::<MemoryLimit>().unwrap().bytes(), Some(64 << 20));
        for bad in ["63", "1048577", "-1", "lots", ""] {
            assert_eq!(bad.parse::<MemoryLimit>(), Err(MemoryLimitError), "{bad}");
        }
        for m in [Defaults::MEMORY_LIMIT, MemoryLimit::OFF] {
            assert_eq!(m.to_string().parse(), Ok(m));
        }
    }
}
