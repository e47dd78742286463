//! `gbely final`: the 8-army final.

use super::play::{after_the_match, headline, match_exit, print_fairness, run_seats};
use super::*;
use crate::app::service::unique_names;
use crate::text::printable;

pub(super) fn cmd_final(a: FinalArgs) -> Result<u8> {
    let map = Arc::new(load_final_map(&a.map, a.size)?);
    let finalists = map.seats().len() - 1;
    if a.agents.len() > finalists {
        bail!("{} agents for {finalists} seats", a.agents.len());
    }
    let mut entries: Vec<String> = a.agents.clone();
    let fill = if a.fill == "self" { a.agents[0].clone() } else { a.fill.clone() };
    if fill == "council" {
        bail!("--fill council: the Council already holds the centre; fill with template, expander, self or a file");
    }
    while entries.len() < finalists {
        entries.push(fill.clone());
    }
    for e in entries.iter().filter(|e| *e != crate::app::web::live::HUMAN) {
        check_spec(e)?;
    }
    let entry_of = final_seating(&map, &a.seats)?;
    let all: Vec<&str> = entries.iter().map(String::as_str).collect();
    let resolved = super::play::run_python(a.run.game.python.as_deref(), &all)?;
    let py = resolved.clone().unwrap_or_else(|| python(a.run.game.python.as_deref()));
    let mut names: BTreeMap<&str, String> = BTreeMap::new();
    for e in &entries {
        if !names.contains_key(e.as_str()) {
            names.insert(e, super::play::named(e, &py));
        }
    }
    let mut seat_specs: Vec<&str> = (0..finalists).map(|seat| entries[entry_of[seat]].as_str()).collect();
    seat_specs.push("council");
    let mut seat_names: Vec<String> =
        seat_specs.iter().map(|s| names.get(s).cloned().unwrap_or_else(|| s.to_string())).collect();
    unique_names(&mut seat_names);
    let specs: Vec<(String, String)> = seat_specs.iter().map(|s| s.to_string()).zip(seat_names).collect();
    let default_dir = format!("{}-final-{}", timestamp(), file_stem(&a.agents[0]));
    let (played, served) = run_seats(&map, &specs, &a.run, &default_dir, resolved, None)?;
    let (rec, replay_path, python) = (&played.record, played.replay.as_ref(), played.python.as_deref());
    if a.run.json {
        emit_json(played.result_json())?;
    } else if !a.run.quiet {
        print_final(&map, rec, replay_path.map(PathBuf::as_path), python)?;
        super::play::print_slowest(rec, a.run.game.time_limit)?;
    }
    after_the_match(served, &a.run, replay_path.map(PathBuf::as_path))?;
    // The first agent named is the user's, wherever it was seated.
    let mine = entry_of.iter().position(|&e| e == 0).expect("the first agent has a seat");
    Ok(match_exit(rec, Some(mine)))
}

pub(super) fn print_final(map: &Map, rec: &MatchRecord, replay: Option<&Path>, python: Option<&str>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let total = map.len() as f64;
    writeln!(out, "final {}", headline(map, rec))?;
    let width = rec.names.iter().map(|n| n.chars().count()).max().unwrap_or(8).max(8);
    writeln!(
        out,
        "  {:>4}  {:<width$}  {:>4} {:<6}  {:>8}  {:>6}  {:>10}  violations",
        "rank", "agent", "seat", "", "share", "cells", "tie-break"
    )?;
    let rows = final_table(map, rec);
    for r in &rows {
        writeln!(
            out,
            "  {:>4}  {:<width$}  {:>4} {:<6}  {:>8}  {:>6}  {:>10}  {}",
            r.rank.map_or("DQ".into(), |k| k.to_string()),
            r.name,
            r.seat,
            r.class,
            r.share.map_or("—".into(), |s| format!("{s:.2} %")),
            r.cells,
            r.tiebreak.map_or("-".into(), |t| format!("round {t}")),
            r.violations
        )?;
    }
    let council = map.seats().len() - 1;
    let cc = rec.outcome[council].cells;
    let neutral = map.len() as u32 - rec.outcome.iter().map(|o| o.cells).sum::<u32>();
    writeln!(
        out,
        "        {:<width$}  {:>11}  {:>8}  {:>6}",
        "council",
        "",
        format!("{:.2} %", cc as f64 / total * 100.0),
        cc
    )?;
    writeln!(
        out,
        "        {:<width$}  {:>11}  {:>8}  {:>6}",
        "hbp (neutral)",
        "",
        format!("{:.2} %", neutral as f64 / total * 100.0),
        neutral
    )?;
    match rec.council_fell {
        Some(r) => writeln!(out, "  the Council fell in round {r}")?,
        None => writeln!(out, "  the Council held out")?,
    }
    for (s, name) in rec.names.iter().enumerate() {
        if let Some(o) = rec.outcome.get(s).and_then(|o| o.disqualified) {
            let cause = rec.violations[s].last().map_or(String::new(), |(_, _, d)| format!(": {}", printable(d)));
            let name = printable(name);
            writeln!(out, "  {name}: disqualified in round {o} (the fourth violation{cause})")?;
        }
    }
    print_fairness(&mut out, rec)?;
    if let Some(p) = replay {
        writeln!(out, "  replay: {}   (gbely replay view {})", p.display(), p.display())?;
    }
    if let Some(py) = python {
        writeln!(out, "  python: {py}")?;
    }
    Ok(())
}
