//! `gbely replay rerun`: the command line of [`crate::app::rerun`].

use super::*;
use crate::app::rerun::{default_run_dir, rerun, RerunPlan};
use crate::app::service::AgentLimits;

pub(super) fn cmd_rerun(a: RerunArgs) -> Result<u8> {
    let read = crate::replays::read_replay_or_cut(&a.file)?;
    if read.cut_short {
        eprintln!(
            "gbely: {} was cut short (its match was killed): rerunning the {} rounds it holds",
            a.file.display(),
            read.replay.turns.len()
        );
    }
    let replay = Arc::new(read.replay);
    let last = replay.turns.len().saturating_sub(1) as u32;
    let rounds = a.rounds.map(|(first, to)| (first.unwrap_or(0), to.unwrap_or(last)));
    // The agent is checked before anything is written: a missing file is one line, no folder.
    a.agent.check()?;
    let python = play::run_python(a.python.as_deref(), std::slice::from_ref(&a.agent))?.unwrap_or_default();
    let plan = RerunPlan {
        replay,
        seat: a.seat,
        agent: a.agent.clone(),
        rounds,
        limits: AgentLimits { time: a.time_limit, memory: a.memory_limit, cores: None, sandbox: a.sandbox.mode() },
        python,
        run_dir: a.run_dir.unwrap_or_else(|| default_run_dir(&a.agent)),
    };
    let show = !a.quiet && std::io::stderr().is_terminal();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let mut progress = |row: &crate::app::rerun::RerunRound, last: u32| {
        if !show {
            return;
        }
        let bar = bar.get_or_insert_with(|| {
            let bar = indicatif::ProgressBar::new(u64::from(last) + 1);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} round {pos:>3}/{len} [{bar:40}] {msg} ({elapsed})")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar
        });
        bar.set_position(u64::from(row.round) + 1);
        bar.set_message(format!("{:.3} s{}", row.seconds, if row.same() { "" } else { "  differs" }));
    };
    let guard = stop_guard()?;
    adopt_orphans();
    let report = rerun(plan, &mut progress);
    kill_leftovers();
    drop(guard);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let report = report.map_err(|e| anyhow!("{}: {e}", a.file.display()))?;
    if a.json {
        emit_json(report.to_json())?;
    } else {
        std::io::stdout().lock().write_all(report.text().as_bytes())?;
    }
    Ok(if report.interrupted {
        exit::INTERRUPTED
    } else if report.violations().next().is_some() {
        exit::RERUN_VIOLATION
    } else {
        exit::OK
    })
}
