//! Who plays a seat and how: the `Player` trait and in-process players (`player`), agent
//! processes with their harness, time limits and violations (`process`, feature `runner`), serving a Rust agent over the line protocol
//! (`serve`), stopping a match on Ctrl-C (`interrupt`), and sharing the cores between the
//! agents of many matches (`cores`).

#[cfg(feature = "runner")]
pub mod cores;
pub mod interrupt;
#[cfg(feature = "runner")]
pub mod platform;
pub mod player;
#[cfg(feature = "runner")]
pub mod process;
#[cfg(feature = "runner")]
pub mod sandbox;
pub mod serve;

use std::time::Duration;

/// A round's time limit (SPEC §8): seconds, more than 0 and at most [`TimeLimit::MAX_SECONDS`],
/// or none (debugging). Parsed once, from the command line (`"2"`, `"0.5"`, `"off"`) or from
/// Python (`time_limit=2.0` / `None`); `0`, negatives, NaN and infinities are refused rather than
/// read as "off": a zero limit is a mistake, not a wish.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeLimit(Option<Duration>);

/// What a time limit may be, for the error message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("seconds more than 0 and at most 3600 (e.g. 2 or 0.5), or `off` for no limit")]
pub struct TimeLimitError;

impl TimeLimit {
    pub const MAX_SECONDS: f64 = 3600.0;
    /// No limit.
    pub const OFF: TimeLimit = TimeLimit(None);

    /// The judge's: `LIMIT_KOLA_S` = 2 s.
    pub fn judge() -> TimeLimit {
        TimeLimit(Some(Duration::from_secs_f64(gbely_rules::constants::ROUND_TIME_LIMIT_S)))
    }

    pub fn seconds(secs: f64) -> Result<TimeLimit, TimeLimitError> {
        if secs.is_finite() && secs > 0.0 && secs <= TimeLimit::MAX_SECONDS {
            Ok(TimeLimit(Some(Duration::from_secs_f64(secs))))
        } else {
            Err(TimeLimitError)
        }
    }

    /// The limit, `None` for no limit.
    pub fn duration(self) -> Option<Duration> {
        self.0
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_parse_once_and_refuse_nonsense() {
        assert_eq!("2".parse(), Ok(TimeLimit::judge()));
        assert_eq!("0.5".parse::<TimeLimit>().unwrap().duration(), Some(Duration::from_millis(500)));
        assert_eq!("off".parse(), Ok(TimeLimit::OFF));
        assert_eq!("3600".parse::<TimeLimit>().unwrap().duration(), Some(Duration::from_secs(3600)));
        for bad in ["0", "-1", "1e20", "nan", "inf", "3600.5", "two", ""] {
            assert_eq!(bad.parse::<TimeLimit>(), Err(TimeLimitError), "{bad}");
        }
        assert_eq!(TimeLimit::seconds(f64::NAN), Err(TimeLimitError));
    }
}
