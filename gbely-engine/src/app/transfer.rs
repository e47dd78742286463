//! Transfer to the hidden final (`gbely transfer`): an agent's share on the reference map (the
//! board's match: a duel against the Council) beside its shares on generated maps of the final's
//! size and shape, as one of eight finalists among built-in agents, against each level of the
//! Council — so an agent tuned to the reference map shows it.
//!
//! The matches are the tournament core's tasks ([`run_in_order`], the one scheduler: results in
//! task order, so the report does not depend on `jobs`), each played by the match service
//! ([`crate::app::service::run`]). The league's duel-shaped core (two seats, a winner) does not fit a match of
//! nine seats; the scheduler and the service do. The statistics ([`mean_interval`]) are pure.

use std::path::PathBuf;
use std::sync::Arc;

use gbely_world::{FinalConfig, Map};
use serde_json::{json, Value};

use crate::app::runs::agent_spec::AgentSpec;
use crate::app::runs::final_match::{final_seating, final_table};
use crate::app::runs::RunError;
use crate::app::service::{unique_names, AgentLimits, MatchPlan, Seat};
use crate::tournament::{run_in_order, Flow, Workers};

/// The Council's levels, weakest first (`builtins`): `council` is the leaderboard's.
pub const COUNCIL_LEVELS: [&str; 3] = ["council:easy", "council", "council:strong"];

/// Who fills the other seven finalist seats, in turn: the Rust twins of the example agents
/// (in-process, so a report costs the agent's time, not eight interpreters').
pub const FINAL_FILL: [&str; 2] = ["expander-rs", "template-rs"];

/// What to measure.
#[derive(Clone, Debug)]
pub struct TransferPlan {
    /// The agent: a file, `template`, `expander`, a built-in agent or a command.
    pub agent: AgentSpec,
    /// Generated final maps.
    pub maps: usize,
    pub rounds: u32,
    /// The final maps are `seed:SEED-1` … `seed:SEED-N`.
    pub seed: String,
    /// The side of the final maps (the final's: 90).
    pub size: u32,
    pub limits: AgentLimits,
    /// The interpreter of Python agents (resolved).
    pub python: String,
    /// Where the agents work and log: a folder per match.
    pub run_dir: PathBuf,
    /// Matches at once.
    pub jobs: usize,
}

/// Where a share was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// The reference map, a duel against the Council: the board's match.
    Reference,
    /// Generated final maps, eight armies and the Council in the centre.
    Final,
}

impl Setting {
    pub fn wire(self) -> &'static str {
        match self {
            Setting::Reference => "reference",
            Setting::Final => "final",
        }
    }
}

/// One match's figures for the agent.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub setting: Setting,
    pub council: &'static str,
    /// The map's name (`gbely`, `seed:…`).
    pub map: String,
    /// The agent's share of the map's cells at the end, 0 to 1 (0 when disqualified).
    pub share: f64,
    /// Its place among the finalists (a final); in a duel 1 when it holds more cells than the
    /// Council, else 2.
    pub rank: Option<usize>,
    pub violations: u32,
    pub disqualified: bool,
}

/// A row of the report: a setting against a Council level, over its maps.
#[derive(Clone, Debug, PartialEq)]
pub struct TransferRow {
    pub setting: Setting,
    pub council: &'static str,
    pub matches: Vec<Measured>,
    /// The mean share over the maps.
    pub mean: f64,
    /// The 95% Student-t interval of the mean share over the maps (`None` for one map).
    pub interval: Option<(f64, f64)>,
    /// The mean place among the finalists (finals only).
    pub mean_rank: Option<f64>,
}

/// The report of [`transfer`].
#[derive(Clone, Debug)]
pub struct TransferReport {
    pub agent: String,
    pub rounds: u32,
    pub size: u32,
    pub final_maps: Vec<String>,
    /// Per setting (the reference map first), per Council level (weakest first).
    pub rows: Vec<TransferRow>,
    /// Stopped by Ctrl-C: the rows hold the matches played.
    pub interrupted: bool,
}

/// Why a transfer report cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("--maps: give at least one final map")]
    NoMaps,
    #[error(transparent)]
    Run(#[from] RunError),
}

/// The mean of `xs` and its two-sided 95% Student-t interval (`None` with fewer than two values),
/// clamped to [0, 1] (the values are shares).
pub fn mean_interval(xs: &[f64]) -> (f64, Option<(f64, f64)>) {
    let n = xs.len();
    if n == 0 {
        return (0.0, None);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, None);
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    let half = t975(n - 1) * (var / n as f64).sqrt();
    (mean, Some(((mean - half).max(0.0), (mean + half).min(1.0))))
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom; past the table the value of
/// the table's next lower entry (wider: on the safe side).
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        31..=39 => 2.042,
        40..=59 => 2.021,
        60..=119 => 2.000,
        _ => 1.980,
    }
}

/// One match to play.
struct Task {
    setting: Setting,
    council: &'static str,
    map: Arc<Map>,
}

/// Plays the plan's matches — per Council level the reference duel and the final on each
/// generated map — and reports the agent's shares. `progress` is told each match as it is taken
/// (how many done, of how many, the match).
pub fn transfer(
    plan: &TransferPlan,
    progress: &mut dyn FnMut(usize, usize, &Measured),
) -> Result<TransferReport, TransferError> {
    if plan.maps == 0 {
        return Err(TransferError::NoMaps);
    }
    plan.agent.check()?;
    let reference = Arc::new(gbely_world::reference_map());
    let final_maps: Vec<Arc<Map>> = (1..=plan.maps)
        .map(|k| {
            let seed = format!("{}-{k}", plan.seed);
            Ok(Arc::new(
                gbely_world::generate_final(&seed, FinalConfig::for_size(plan.size))?.with_name(format!("seed:{seed}")),
            ))
        })
        .collect::<Result<_, RunError>>()?;
    let mut tasks = Vec::new();
    for setting in [Setting::Reference, Setting::Final] {
        for council in COUNCIL_LEVELS {
            match setting {
                Setting::Reference => tasks.push(Task { setting, council, map: reference.clone() }),
                Setting::Final => tasks.extend(final_maps.iter().map(|m| Task { setting, council, map: m.clone() })),
            }
        }
    }
    let name = plan.agent.display_name();
    let mut measured: Vec<Measured> = Vec::new();
    let mut error = None;
    let total = tasks.len();
    let play = |k: usize| play_task(plan, &name, k, &tasks[k]);
    run_in_order(
        0..total,
        Workers::new(plan.jobs.max(1)).in_step(),
        &crate::runner::interrupt::requested,
        play,
        |_, r| match r {
            Ok(Some(m)) => {
                progress(measured.len() + 1, total, &m);
                measured.push(m);
                Flow::Go
            }
            Ok(None) => Flow::Stop,
            Err(e) => {
                error.get_or_insert(e);
                Flow::Stop
            }
        },
    );
    if let Some(e) = error {
        return Err(e.into());
    }
    let interrupted = measured.len() < total;
    let mut rows = Vec::new();
    for setting in [Setting::Reference, Setting::Final] {
        for council in COUNCIL_LEVELS {
            let matches: Vec<Measured> =
                measured.iter().filter(|m| m.setting == setting && m.council == council).cloned().collect();
            if matches.is_empty() {
                continue;
            }
            let shares: Vec<f64> = matches.iter().map(|m| m.share).collect();
            let (mean, interval) = mean_interval(&shares);
            let ranks: Vec<f64> = matches.iter().filter_map(|m| m.rank).map(|r| r as f64).collect();
            let mean_rank = (setting == Setting::Final && !ranks.is_empty())
                .then(|| ranks.iter().sum::<f64>() / ranks.len() as f64);
            rows.push(TransferRow { setting, council, matches, mean, interval, mean_rank });
        }
    }
    Ok(TransferReport {
        agent: name,
        rounds: plan.rounds,
        size: plan.size,
        final_maps: final_maps.iter().map(|m| m.name().to_string()).collect(),
        rows,
        interrupted,
    })
}

/// Plays one task; `None` when it was interrupted (it does not count).
fn play_task(plan: &TransferPlan, name: &str, k: usize, task: &Task) -> Result<Option<Measured>, RunError> {
    let map = task.map.clone();
    let (seats, mine) = match task.setting {
        Setting::Reference => {
            (vec![Seat::spec(plan.agent.clone(), name), Seat::spec(AgentSpec::Builtin(task.council), task.council)], 0)
        }
        Setting::Final => {
            let finalists = map.seats().len() - 1;
            // Entry 0 is the agent, seated where the map's seed puts it (as `gbely final` does).
            let entry_of = final_seating(&map, &[])?;
            let spec_of = |entry: usize| {
                if entry == 0 {
                    plan.agent.clone()
                } else {
                    AgentSpec::Builtin(FINAL_FILL[entry % 2])
                }
            };
            let mut specs: Vec<AgentSpec> = entry_of.iter().map(|&e| spec_of(e)).collect();
            specs.push(AgentSpec::Builtin(task.council));
            let mut names: Vec<String> = specs
                .iter()
                .enumerate()
                .map(|(s, spec)| if s < finalists && entry_of[s] == 0 { name.to_string() } else { spec.to_string() })
                .collect();
            unique_names(&mut names);
            let mine = entry_of.iter().position(|&e| e == 0).expect("the agent has a seat");
            (specs.into_iter().zip(names).map(|(spec, n)| Seat::spec(spec, n)).collect(), mine)
        }
    };
    let mut match_plan = MatchPlan::new(map.clone(), seats);
    match_plan.rounds = plan.rounds;
    match_plan.limits = plan.limits.clone();
    match_plan.python = plan.python.clone();
    match_plan.run_dir =
        Some(plan.run_dir.join(format!("{k:03}-{}-{}", task.setting.wire(), task.council.replace(':', "-"))));
    let rec = crate::app::service::run(match_plan, &mut ())?.record;
    if rec.interrupted() {
        return Ok(None);
    }
    let o = &rec.outcome[mine];
    let rank = match task.setting {
        Setting::Final => final_table(&map, &rec).iter().find(|r| r.seat == mine).and_then(|r| r.rank),
        Setting::Reference => (o.disqualified.is_none()).then(|| if o.cells > rec.outcome[1].cells { 1 } else { 2 }),
    };
    Ok(Some(Measured {
        setting: task.setting,
        council: task.council,
        map: map.name().to_string(),
        share: o.score.map_or(0.0, |s| s / 100.0),
        rank,
        violations: o.violations,
        disqualified: o.disqualified.is_some(),
    }))
}

impl TransferReport {
    /// The `--json` document.
    pub fn to_json(&self) -> Value {
        json!({
            "agent": self.agent,
            "rounds": self.rounds,
            "final_size": self.size,
            "final_maps": self.final_maps,
            "interval": "95% Student-t interval of the mean share over the maps (null for one map)",
            "interrupted": self.interrupted,
            "rows": self.rows.iter().map(|r| json!({
                "setting": r.setting.wire(),
                "council": r.council,
                "maps": r.matches.len(),
                "mean_share": r.mean,
                "interval": r.interval.map(|(lo, hi)| [lo, hi]),
                "mean_rank": r.mean_rank,
                "violations": r.matches.iter().map(|m| m.violations).sum::<u32>(),
                "disqualified": r.matches.iter().filter(|m| m.disqualified).count(),
                "matches": r.matches.iter().map(|m| json!({
                    "map": m.map, "share": m.share, "rank": m.rank,
                    "violations": m.violations, "disqualified": m.disqualified,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    /// The table for a terminal.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let pct = |x: f64| format!("{:.1} %", x * 100.0);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "transfer of {}: its share of the map's cells after {} rounds (mean over the maps, 95% Student-t interval)",
            self.agent, self.rounds
        );
        let _ = writeln!(
            s,
            "  {:<30}  {:<14}  {:>4}  {:>7}  {:<17}  {:>8}  {:>3}",
            "setting", "council", "maps", "share", "95% interval", "rank", "DQ"
        );
        for r in &self.rows {
            let setting = match r.setting {
                Setting::Reference => "reference map, duel".to_string(),
                Setting::Final => format!("final {0}×{0}, 8 armies", self.size),
            };
            let interval = r.interval.map_or("—".to_string(), |(lo, hi)| format!("[{}, {}]", pct(lo), pct(hi)));
            let rank = match (r.setting, r.mean_rank) {
                (Setting::Final, Some(k)) => format!("{k:.1} of 8"),
                _ => "—".to_string(),
            };
            let dq = r.matches.iter().filter(|m| m.disqualified).count();
            let _ = writeln!(
                s,
                "  {:<30}  {:<14}  {:>4}  {:>7}  {:<17}  {:>8}  {:>3}",
                setting,
                r.council,
                r.matches.len(),
                pct(r.mean),
                interval,
                rank,
                dq
            );
        }
        let _ = writeln!(
            s,
            "  the board: the reference map against `council`; final maps: {} (the other finalists: {} in turn)",
            self.final_maps.join(", "),
            FINAL_FILL.join(", ")
        );
        if self.interrupted {
            let _ = writeln!(s, "  INTERRUPTED: the rows hold the matches played");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand: mean 0.2, sample deviation 0.1, t(2) = 4.303, half-width
    /// 4.303 × 0.1 / √3 = 0.24843…, clamped at 0 below.
    #[test]
    fn the_interval_of_three_shares_is_students_t_clamped_to_shares() {
        let (mean, interval) = mean_interval(&[0.1, 0.2, 0.3]);
        assert!((mean - 0.2).abs() < 1e-12);
        let (lo, hi) = interval.unwrap();
        assert_eq!(lo, 0.0);
        assert!((hi - (0.2 + 4.303 * 0.1 / 3f64.sqrt())).abs() < 1e-12, "{hi}");
        assert_eq!(mean_interval(&[0.4]), (0.4, None));
        let (m, i) = mean_interval(&[0.5, 0.5]);
        assert_eq!((m, i), (0.5, Some((0.5, 0.5))));
    }
}
