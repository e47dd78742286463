//! `gbely check`: the submission check.

use super::*;
use crate::app::inspect::{inspect_source, isolation_warnings, AgentMeta};
use crate::app::service::{MatchPlan, Seat};

/// The submission check (`gbely check`).
pub(super) fn cmd_check(a: CheckArgs) -> Result<u8> {
    let py = resolve_python(&python(a.python.as_deref()))?;
    let mut problems: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let path = &a.agent;
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    // A named pipe or a device (a link to /dev/zero) would hang the check: refused unopened.
    crate::files::check_regular(path).with_context(|| format!("cannot check {}", path.display()))?;
    if path.extension().and_then(|e| e.to_str()) != Some("py") {
        problems.push(format!("{} is not a .py file: the submission is one Python file", path.display()));
    }
    if meta.len() > constants::MAX_SUBMISSION_BYTES {
        problems.push(format!(
            "the file has {} bytes; the limit is {} (512 KiB)",
            meta.len(),
            constants::MAX_SUBMISSION_BYTES
        ));
    } else {
        notes.push(format!("size {} bytes of 524288 allowed", meta.len()));
    }
    let inspect = inspect_source(&py, path)?;
    if let Some(err) = inspect.get("syntax_error").and_then(|v| v.as_str()) {
        problems.push(format!("the file does not parse: {err}"));
    }
    let mut warnings: Vec<String> = Vec::new();
    let meta = AgentMeta::of(&inspect);
    let file_name = agent_name(&path.to_string_lossy());
    if meta.name.is_some() || meta.version.is_some() {
        notes.push(format!("name {} (AGENT_NAME / AGENT_VERSION)", meta.display_name(&file_name)));
    }
    warnings.extend(meta.game_version_warning(&file_name));
    match inspect.get("decide").filter(|d| !d.is_null()) {
        None if inspect["syntax_error"].is_null() => {
            problems.push("the file defines no top-level function decide(stav)".into());
        }
        None => {}
        Some(d) => {
            for other in d["maybe"].as_array().into_iter().flatten().filter_map(|m| m.as_str()) {
                warnings.push(format!("on another branch: {other}"));
            }
            if let Some(p) = d["problem"].as_str() {
                problems.push(p.to_string());
            } else if d["kind"] == "assigned" {
                warnings.push(format!(
                    "decide (line {}) is assigned the result of an expression: the check cannot see that it is a function",
                    d["line"]
                ));
            }
        }
    }
    let foreign: Vec<String> = inspect
        .get("non_stdlib")
        .and_then(|v| v.as_array())
        .map(|l| l.iter().filter_map(|x| x.as_str().map(String::from)).collect())
        .unwrap_or_default();
    if !foreign.is_empty() {
        problems.push(format!(
            "imports outside the standard library (the judge will not have them): {}",
            foreign.join(", ")
        ));
    }
    let optional: Vec<&str> =
        inspect["optional"].as_array().map(|l| l.iter().filter_map(|x| x.as_str()).collect()).unwrap_or_default();
    if !optional.is_empty() {
        warnings.push(format!(
            "optional imports outside the standard library, guarded by try/except ImportError: {} \
             (the judge will not have them: your fallback will run)",
            optional.join(", ")
        ));
    }
    // Warnings, not failures: the call may sit on a path the agent never takes at the judge.
    warnings.extend(isolation_warnings(&inspect));
    let mut timing = None;
    let mut startup = None;
    let mut violations = Vec::new();
    if problems.is_empty() {
        let run_dir = unique_dir(PathBuf::from(Defaults::RUNS_FOLDER).join(format!(
            "{}-check-{}",
            timestamp(),
            file_stem(&path.to_string_lossy())
        )));
        std::fs::create_dir_all(&run_dir)?;
        let spec = path.to_string_lossy().into_owned();
        let seats = vec![Seat::spec(&spec, agent_name(&spec)), Seat::spec("council", "council")];
        let mut plan = MatchPlan::new(Arc::new(gbely_world::reference_map()), seats);
        plan.rounds = a.rounds;
        plan.limits.sandbox = a.sandbox.mode();
        plan.python = py.clone();
        plan.run_dir = Some(run_dir.clone());
        let played = crate::app::service::run(plan, &mut ())?;
        let rec = &played.record;
        let stats = rec.agents[0].unwrap_or_default();
        timing = Some((stats.max_answer_seconds, stats.p95_answer_seconds, stats.answered_rounds as usize));
        violations = rec.violations[0].clone();
        // SPEC §8: the process starts just before its first observation, so the time to answer
        // round 0 is the start-up (interpreter, imports, the first decide) the 2 s limit counts.
        if !violations.iter().any(|(round, _, _)| *round == 0) {
            startup = stats.first_answer_seconds;
        }
        if stats.dropped_lines > 0 {
            warnings.push(format!(
                "{} line(s) written after a round's answer were dropped: the first line after an observation is \
                 the answer, one a round (print to stderr, not stdout)",
                stats.dropped_lines
            ));
        }
        for (round, kind, detail) in &violations {
            problems.push(format!("violation in round {round}: {} — {detail}", kind.wire()));
        }
        notes.push(format!(
            "test match: {} rounds against the Council on the reference map; {} cells at the end; {}",
            rec.last_round + 1,
            rec.outcome[0].cells,
            rec.discard_line(0)
        ));
        if let Some(log) = &played.logs[0] {
            notes.push(format!("log: {}", log.display()));
        }
    }
    // Whether the test match ran as at the judge (no network, no other files), in one line.
    let isolation = crate::runner::sandbox::isolation(a.sandbox.mode());
    if isolation.sandboxed {
        notes.push(format!("test match {}: as at the judge, no network and no files but its own", isolation.line()));
    } else {
        warnings.push(format!("the test match ran {}", isolation.line()));
    }
    let ok = problems.is_empty();
    if a.json {
        let doc = json!({
            "file": path.display().to_string(),
            "ok": ok,
            "problems": problems,
            "notes": notes,
            "warnings": warnings,
            "decision_seconds": timing.map(|(max, p95, n)| json!({"max": max, "p95": p95, "rounds": n})),
            "startup_seconds": startup,
            "meta": meta,
            "violations": violations.len(),
            "isolation": isolation,
        });
        println!("{doc}");
    } else {
        // What the file holds (its name, GAME_VERSION, a syntax error's line, what decide
        // raised) is shown escaped: it is the agent's text.
        use crate::text::printable;
        println!("gbely check {}", printable(&path.display().to_string()));
        for n in &notes {
            println!("  ok    {}", printable(n));
        }
        if let Some((max, p95, n)) = timing {
            println!(
                "  time  per decision over {n} rounds: max {:.3} s, p95 {:.3} s (limit {:.1} s)",
                max,
                p95,
                constants::ROUND_TIME_LIMIT_S
            );
        }
        if let Some(t) = startup {
            println!("  start-up  {t:.3} s (counts toward round 0's {} s)", constants::ROUND_TIME_LIMIT_S);
        }
        for w in &warnings {
            println!("  WARN  {}", printable(w));
        }
        for p in &problems {
            println!("  FAIL  {}", printable(p));
        }
        println!("{}", if ok { "the submission passes the check" } else { "the submission would FAIL" });
    }
    Ok(if ok { exit::OK } else { exit::CHECK_FAILED })
}
