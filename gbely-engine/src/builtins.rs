//! The built-in agents: the Council at each level and the Rust twins of the example agents, by
//! the names agents are given on the command line and in replays. Played in-process (fast), and
//! deterministic from their observation alone, so replays regenerate their commands on reading
//! instead of storing them.

use gbely_rules::Decide;

/// The built-in agent name of the Council in replays.
pub const BUILTIN_COUNCIL: &str = "council";

/// The built-in agents' names (each made by [`builtin_agent`], checked by a test).
pub const BUILTIN_AGENTS: [&str; 5] = [BUILTIN_COUNCIL, "council:easy", "council:strong", "template-rs", "expander-rs"];

/// A fresh built-in agent by its replay name: `council`, and the Rust twins of the example agents
/// `template-rs` and `expander-rs` (the one place their names meet their code); `None` for a name
/// this build does not know. Each decides from its observation alone and deterministically, so
/// its commands can be made again on reading.
pub fn builtin_agent(name: &str) -> Option<Box<dyn Decide + Send>> {
    match name {
        BUILTIN_COUNCIL => Some(Box::new(gbely_council::Council::new())),
        "council:easy" => Some(Box::new(gbely_council::Council::easy())),
        "council:strong" => Some(Box::new(gbely_council::StrongCouncil::new())),
        "template-rs" => Some(Box::new(agents::Template::default())),
        "expander-rs" => Some(Box::new(agents::Expander::default())),
        _ => None,
    }
}

/// The built-in agent a spec names (its name as `&'static str`), if it names one.
pub fn builtin_of(spec: &str) -> Option<&'static str> {
    BUILTIN_AGENTS.into_iter().find(|b| *b == spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_built_in_agent_can_be_made() {
        for name in BUILTIN_AGENTS {
            assert!(builtin_agent(name).is_some(), "{name}");
            assert_eq!(builtin_of(name), Some(name));
        }
        assert!(builtin_agent("nobody").is_none() && builtin_of("nobody").is_none());
    }
}
