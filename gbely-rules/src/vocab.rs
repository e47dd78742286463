//! The words of a match record: how a match is played, who sits where, how a round can go wrong
//! and how a match ends. Enums with their wire names (replays, `--json`, Python), parsed once.

use serde::{Deserialize, Serialize};

/// The rules of play a map's seats imply (SPEC §9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Two sides; each sees the other as `zastupitelstvo`; either side's elimination or
    /// disqualification ends the match.
    Duel,
    /// Finalists (seats with the army role) and the Council: finalists cannot attack each other,
    /// labels are relative, the match ends when the Council has no cell.
    Final,
}

/// What a seat is for (SPEC §1, §9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatRole {
    /// An army (`armada`): an agent's seat.
    Army,
    /// The Council's seat (in a duel of two agents, the second agent plays it).
    Council,
}

/// Why a round counted as a violation (SPEC §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// No full answer within the round limit.
    Timeout,
    /// The process crashed or exited (or, in-process, the agent raised).
    Crash,
    /// The answer is not a JSON object with a `prikazy` list, nor a list.
    Unreadable,
}

/// Why a match ended (SPEC §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// All rounds were played.
    Rounds,
    /// A duel side has no cell left.
    Elimination,
    /// A duel side's fourth violation.
    Disqualification,
    /// The final's Council has no cell left.
    CouncilFell,
    /// Stopped from outside (Ctrl-C, SIGTERM, a session finished early) before its end: never
    /// decided by the rules, only by whoever runs the match.
    Interrupted,
    /// Still being played: a result read in the middle of a match.
    Unfinished,
}

/// The wire name of each variant, and back.
macro_rules! wire_names {
    ($ty:ident { $($variant:ident => $name:literal),* $(,)? }) => {
        impl $ty {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),*];

            /// The name used in replays, `--json` and Python.
            pub const fn wire(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),*
                }
            }

            /// The variant of a wire name.
            pub fn from_wire(name: &str) -> Option<$ty> {
                match name {
                    $($name => Some($ty::$variant),)*
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.wire())
            }
        }
    };
}

wire_names!(Mode { Duel => "duel", Final => "final" });
wire_names!(SeatRole { Army => "army", Council => "council" });
wire_names!(ViolationKind { Timeout => "timeout", Crash => "crash", Unreadable => "unreadable" });
wire_names!(EndReason {
    Rounds => "rounds",
    Elimination => "elimination",
    Disqualification => "disqualification",
    CouncilFell => "council_fell",
    Interrupted => "interrupted",
    Unfinished => "unfinished",
});

#[cfg(test)]
mod tests {
    use super::*;

    /// The wire names are the serde names, and each parses back to its variant.
    fn check<T: Copy + PartialEq + std::fmt::Debug + Serialize + for<'a> Deserialize<'a>>(
        all: &[T],
        wire: fn(T) -> &'static str,
        from: fn(&str) -> Option<T>,
    ) {
        for &v in all {
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{}\"", wire(v)));
            assert_eq!(from(wire(v)), Some(v));
            assert_eq!(serde_json::from_str::<T>(&format!("\"{}\"", wire(v))).unwrap(), v);
        }
        assert_eq!(from("nonsense"), None);
    }

    #[test]
    fn wire_names_round_trip() {
        check(Mode::ALL, Mode::wire, Mode::from_wire);
        check(SeatRole::ALL, SeatRole::wire, SeatRole::from_wire);
        check(ViolationKind::ALL, ViolationKind::wire, ViolationKind::from_wire);
        check(EndReason::ALL, EndReason::wire, EndReason::from_wire);
        assert_eq!(EndReason::CouncilFell.wire(), "council_fell");
    }
}
