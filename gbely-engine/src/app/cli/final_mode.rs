//! `gbely final`: the 8-army final.

use super::play::{after_the_match, match_exit, print_final, run_seats};
use super::*;
use crate::app::service::unique_names;
use std::collections::HashMap;

pub(super) fn cmd_final(a: FinalArgs) -> Result<u8> {
    let map = Arc::new(load_final_map(&a.map, a.size)?);
    let finalists = map.seats().len() - 1;
    if a.agents.len() > finalists {
        bail!("{} agents for {finalists} seats", a.agents.len());
    }
    let mut entries: Vec<AgentSpec> = a.agents.clone();
    let fill = if a.fill == "self" { a.agents[0].clone() } else { a.fill.parse()? };
    if fill == AgentSpec::COUNCIL {
        bail!("--fill council: the Council already holds the centre; fill with template, expander, self or a file");
    }
    while entries.len() < finalists {
        entries.push(fill.clone());
    }
    for e in &entries {
        e.check()?;
    }
    let entry_of = final_seating(&map, &a.seats)?;
    let resolved = super::play::run_python(a.run.game.python.as_deref(), &entries)?;
    let py = resolved.clone().unwrap_or_else(|| python(a.run.game.python.as_deref()));
    let mut names: HashMap<&AgentSpec, String> = HashMap::new();
    for e in &entries {
        if !names.contains_key(e) {
            names.insert(e, super::play::named(e, &py));
        }
    }
    let mut seat_specs: Vec<AgentSpec> = (0..finalists).map(|seat| entries[entry_of[seat]].clone()).collect();
    seat_specs.push(AgentSpec::COUNCIL);
    let mut seat_names: Vec<String> =
        seat_specs.iter().map(|s| names.get(s).cloned().unwrap_or_else(|| s.to_string())).collect();
    unique_names(&mut seat_names);
    let specs: Vec<(AgentSpec, String)> = seat_specs.into_iter().zip(seat_names).collect();
    let default_dir = format!("{}-final-{}", timestamp(), a.agents[0].stem());
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
