//! `gbely final`: the 8-army final.

use super::play::{after_the_match, match_exit, print_final, run_seats};
use super::*;
use crate::app::service::unique_names;

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
