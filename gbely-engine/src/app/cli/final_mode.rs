//! `gbely final`: the 8-army final.

use super::play::{headline, match_exit, print_fairness, run_seats, SeatsRun};
use super::*;

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
    for e in entries.iter().filter(|e| *e != crate::app::watch::HUMAN) {
        check_spec(e)?;
    }
    let entry_of = final_seating(&map, &a.seats)?;
    let mut specs: Vec<(String, String)> = Vec::new();
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    let all: Vec<&str> = entries.iter().map(String::as_str).collect();
    let resolved = super::play::run_python(a.run.game.python.as_deref(), &all)?;
    let py = resolved.clone().unwrap_or_else(|| python(a.run.game.python.as_deref()));
    let mut names: BTreeMap<&str, String> = BTreeMap::new();
    for e in &entries {
        if !names.contains_key(e.as_str()) {
            names.insert(e, super::play::named(e, &py));
        }
    }
    for seat in 0..finalists {
        let spec = entries[entry_of[seat]].clone();
        let base = names[spec.as_str()].clone();
        let k = counts.entry(base.clone()).or_default();
        *k += 1;
        let total = entries.iter().filter(|e| names[e.as_str()] == base).count();
        let name = if total > 1 { format!("{base} #{k}") } else { base };
        specs.push((spec, name));
    }
    specs.push(("council".into(), "council".into()));
    let default_dir = format!("{}-final-{}", timestamp(), file_stem(&a.agents[0]));
    let SeatsRun { rec, replay: replay_path, logs, python } = run_seats(&map, &specs, &a.run, &default_dir, resolved)?;
    if a.run.json {
        let mut doc = result_json(&map, &rec, replay_path.as_deref(), &logs);
        doc["python"] = json!(python);
        doc["table"] = json!(final_table(&map, &rec).iter().map(|r| json!({
            "rank": r.rank, "seat": r.seat, "class": r.class, "name": r.name, "share": r.share,
            "cells": r.cells, "tiebreak_round": r.tiebreak, "violations": r.violations, "disqualified": r.disqualified,
        })).collect::<Vec<_>>());
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &doc)?;
        writeln!(out)?;
    } else if !a.run.quiet {
        print_final(&map, &rec, replay_path.as_deref(), python.as_deref())?;
    }
    // The first agent named is the user's, wherever it was seated.
    let mine = entry_of.iter().position(|&e| e == 0).expect("the first agent has a seat");
    Ok(match_exit(&rec, Some(mine)))
}

fn print_final(map: &Map, rec: &MatchRecord, replay: Option<&Path>, python: Option<&str>) -> Result<()> {
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
            let cause = rec.violations[s].last().map_or(String::new(), |(_, _, d)| format!(": {d}"));
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
