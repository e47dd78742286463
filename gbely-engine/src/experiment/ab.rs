//! "Is B better than A?" for your own agents, in-process: paired matches of two [`Decide`]
//! factories and the exact SPRT of `gbely ab` (the [`crate::tournament::ab`] core, whose types
//! are re-exported here).
//!
//! [`Decide`]: gbely_rules::Decide

pub use crate::tournament::ab::{
    elo_to_score, score_to_elo, EloModel, Estimate, ExpectedPairs, Hypotheses, Interval, Sprt, Sweep, Verdict,
};
use crate::tournament::ab::{run_ab, AbDesign};

/// How an in-process A/B test is played ([`ab`]).
#[derive(Clone, Debug)]
pub struct AbPlan {
    /// Pair `k` plays `maps[k % maps.len()]`.
    pub maps: Vec<std::sync::Arc<gbely_world::Map>>,
    /// Rounds of each match.
    pub rounds: u32,
    /// Pairs at once; 0: one per core.
    pub threads: usize,
    /// The test stops undecided after this many pairs.
    pub max_pairs: usize,
    /// What the test weighs against what.
    pub hypotheses: Hypotheses,
    /// The error rate of a false "better" (α).
    pub alpha: f64,
    /// The error rate of a missed "better" (β).
    pub beta: f64,
    /// `None`: head to head (a pair is A against B twice, the seats swapped). Else both play
    /// this opponent from seat 0 on the same map, and a pair's outcome is B's share minus A's.
    pub against: Option<super::Entrant>,
}

impl AbPlan {
    /// `gbely ab`'s defaults: head to head, logistic Elo 0 against 40, α = β = 0.05, at most
    /// 2000 pairs, full matches, all cores.
    pub fn new(maps: Vec<std::sync::Arc<gbely_world::Map>>) -> AbPlan {
        AbPlan {
            maps,
            rounds: crate::limits::Defaults::ROUNDS,
            threads: 0,
            max_pairs: 2000,
            hypotheses: Hypotheses::Elo { model: EloModel::Logistic, elo0: 0.0, elo1: 40.0 },
            alpha: 0.05,
            beta: 0.05,
            against: None,
        }
    }
}

/// Is `b` better than `a`? Plays pairs until the SPRT decides or `max_pairs` are played, on
/// `plan.threads` threads, reading the outcomes in pair order (the verdict does not depend on
/// the number of threads). The [`Sprt`] it returns has the verdict, the pairs' outcomes and the
/// estimate.
///
/// # Panics
/// When there is no map, or a map is not a duel map.
pub fn ab(a: &super::Entrant, b: &super::Entrant, plan: &AbPlan) -> Sprt {
    assert!(!plan.maps.is_empty() && plan.maps.iter().all(|m| m.seats().len() == 2), "an A/B test plays duel maps");
    let mut who = vec![a, b];
    who.extend(plan.against.as_ref());
    let design = if plan.against.is_some() { AbDesign::Against } else { AbDesign::HeadToHead };
    let limit = crate::limits::TimeLimit::OFF;
    let arena = super::Factories { entrants: &who, maps: &plan.maps, rounds: plan.rounds, limit };
    let mut sprt = Sprt::new(plan.hypotheses, plan.alpha, plan.beta);
    let jobs = crate::tournament::Workers::new(plan.threads).jobs;
    let none = std::collections::BTreeMap::new();
    let Ok(_) =
        run_ab(&arena, design, &mut sprt, plan.max_pairs, jobs, &none, &|| false, &mut |_| {}, &mut |_, _| Ok(()));
    sprt
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin(name: &str) -> super::super::Entrant {
        super::super::Entrant::builtin(name).expect("a built-in agent")
    }

    #[test]
    fn an_in_process_ab_test_finds_the_stronger_agent_whatever_the_threads() {
        let maps = (0..4)
            .map(|k| std::sync::Arc::new(gbely_world::generate_duel(&format!("ab-{k}"), 30, 30).unwrap()))
            .collect();
        let plan = AbPlan { rounds: 60, threads: 1, ..AbPlan::new(maps) };
        // The Council's easy level against the expander: one of them is stronger.
        let one = ab(&builtin("council:easy"), &builtin("expander-rs"), &plan);
        let two = ab(&builtin("council:easy"), &builtin("expander-rs"), &AbPlan { threads: 2, ..plan.clone() });
        assert_eq!(one.outcomes, two.outcomes, "the verdict does not depend on the threads");
        assert_ne!(one.verdict(), Verdict::Undecided, "{:?}", one.outcomes);
        // A copy of itself is no better.
        let same = ab(&builtin("template-rs"), &builtin("template-rs"), &plan);
        assert_ne!(same.verdict(), Verdict::Better);
    }
}
