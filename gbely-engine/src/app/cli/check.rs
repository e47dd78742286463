//! `gbely check`: the submission check ([`crate::app::check`]), printed.

use super::*;
use crate::app::check::{check_agent, TestMatch};

/// The submission check (`gbely check`).
pub(super) fn cmd_check(a: CheckArgs) -> Result<u8> {
    let py = resolve_python(&python(a.python.as_deref()))?;
    let path = &a.agent;
    std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    // A named pipe or a device (a link to /dev/zero) would hang the check: refused unopened.
    crate::files::check_regular(path).with_context(|| format!("cannot check {}", path.display()))?;
    let r = check_agent(
        path,
        &py,
        TestMatch { rounds: a.rounds, sandbox: a.sandbox.mode() },
        Path::new(Defaults::RUNS_FOLDER),
    )?;
    let r = if a.strict { r.strict() } else { r };
    let ok = r.ok();
    let (problems, notes, warnings, timing, startup) = (&r.problems, &r.notes, &r.warnings, r.timing, r.startup);
    if a.json {
        println!("{}", r.to_json());
    } else {
        // What the file holds (its name, GAME_VERSION, a syntax error's line, what decide
        // raised) is shown escaped: it is the agent's text.
        use crate::text::printable;
        println!("gbely check {}", printable(&path.display().to_string()));
        for n in notes {
            println!("  ok    {}", printable(&n.text));
        }
        if let Some((max, p95, n)) = timing {
            println!(
                "  time  per decision over {n} rounds: max {:.3} s, p95 {:.3} s (limit {:.1} s)",
                max,
                p95,
                constants::ROUND_TIME_LIMIT_S
            );
        }
        if !r.slowest.is_empty() {
            println!("  time  slowest answers: {}", r.time_limit.slowest_text(&r.slowest));
        }
        if let Some(t) = startup {
            println!("  start-up  {t:.3} s (counts toward round 0's {} s)", constants::ROUND_TIME_LIMIT_S);
        }
        for w in warnings {
            println!("  WARN  {}", printable(&w.text));
        }
        for p in problems {
            println!("  FAIL  {}", printable(&p.text));
        }
        println!("{}", if ok { "the submission passes the check" } else { "the submission would FAIL" });
    }
    Ok(if ok { exit::OK } else { exit::CHECK_FAILED })
}
