//! `gbely replay view|show|verify|stats` (and `rerun`, in `rerun.rs`).

use super::*;
use crate::text::{printable, printable_lines};

pub(super) fn cmd_replay(cmd: ReplayCmd) -> Result<u8> {
    use crate::replays::{frame_after, observation_at, render_frame, render_legend, verify};
    let mut out = std::io::stdout().lock();
    // A file cut short (its match was killed) is read up to its last whole round, and said so.
    let read_replay = |file: &std::path::Path| -> Result<gbely_world::Replay> {
        let read = crate::replays::read_replay_or_cut(file)?;
        if read.cut_short {
            eprintln!("{}", cut_short_line(file, &read.replay));
        }
        Ok(read.replay)
    };
    match cmd {
        ReplayCmd::Rerun(a) => return super::rerun::cmd_rerun(a),
        ReplayCmd::View { file, output, open } => {
            let replay = read_replay(&file)?;
            let named = file.to_string_lossy();
            let html = crate::replays::viewer::viewer_html_of(&replay, Some(&named))
                .map_err(|e| anyhow!("{}: {e}", file.display()))?;
            let output = output.unwrap_or_else(|| {
                let name = file.file_name().map_or("replay".into(), |n| n.to_string_lossy().into_owned());
                let stem = name.trim_end_matches(".gz").trim_end_matches(".json").to_string();
                file.with_file_name(format!("{stem}.html"))
            });
            std::fs::write(&output, &html).with_context(|| format!("cannot write {}", output.display()))?;
            writeln!(out, "{} ({:.1} MB)", output.display(), html.len() as f64 / 1e6)?;
            if open && !open_in_browser(&output.to_string_lossy()) {
                writeln!(out, "open it in a browser: file://{}", std::fs::canonicalize(&output)?.display())?;
            }
        }
        ReplayCmd::Show { file, round, seat, observation, color, json: as_json } => {
            let replay = read_replay(&file)?;
            let last = replay
                .turns
                .len()
                .checked_sub(1)
                .ok_or_else(|| anyhow!("{}: the replay has no rounds", file.display()))? as u32;
            let round = round.unwrap_or(last);
            if round > last {
                bail!("round {round} was not played: {} has rounds 0…{last}", file.display());
            }
            if observation {
                let seat = seat.expect("clap requires --seat");
                let (obs, answer) =
                    observation_at(&replay, round, seat).map_err(|e| anyhow!("{}: {e}", file.display()))?;
                let discards =
                    discards_of(&replay, round, seat, &answer).map_err(|e| anyhow!("{}: {e}", file.display()))?;
                writeln!(
                    out,
                    "# the observation seat {seat} ({}) received in round {round}",
                    printable(&replay.seats[seat as usize].name)
                )?;
                if as_json {
                    writeln!(out, "{obs}")?;
                    if !discards.is_empty() {
                        let list: Vec<_> = discards
                            .iter()
                            .map(|(i, reason, by)| json!({"index": i, "reason": reason, "taken_by": by}))
                            .collect();
                        writeln!(out, "# its discarded commands\n{}", json!(list))?;
                    }
                } else {
                    let obs: serde_json::Value = serde_json::from_str(&obs)?;
                    out.write_all(one_item_a_line(&obs).as_bytes())?;
                }
                let names: Vec<String> = replay.seats.iter().map(|s| s.name.clone()).collect();
                match answer {
                    gbely_world::replay::Answer::Commands(list) if as_json => {
                        writeln!(out, "# its answer")?;
                        writeln!(out, "{}", json!({ "prikazy": list }))?
                    }
                    gbely_world::replay::Answer::Commands(list) => {
                        writeln!(
                            out,
                            "# its answer: {} items, {} discarded (#index item — why)",
                            list.len(),
                            discards.len()
                        )?;
                        for (k, item) in list.iter().enumerate() {
                            match discards.iter().find(|d| d.0 == k as u32) {
                                Some((_, reason, by)) => writeln!(
                                    out,
                                    "#{k:<4} {item} — discarded: {}",
                                    crate::replays::discards::reason_text(*reason, *by, &names)
                                )?,
                                None => writeln!(out, "#{k:<4} {item}")?,
                            }
                        }
                    }
                    gbely_world::replay::Answer::Violation(v) => {
                        writeln!(out, "# its answer")?;
                        writeln!(out, "violation ({}): {}", v.kind, printable(&v.detail))?
                    }
                    gbely_world::replay::Answer::Out => {
                        writeln!(out, "# its answer")?;
                        writeln!(out, "none: the seat was out of the game")?
                    }
                    // observation_at writes compact and regenerated commands out as commands.
                    gbely_world::replay::Answer::Compact(_) | gbely_world::replay::Answer::Regen => {}
                }
            } else if as_json {
                // The engine's own state and events of the round, re-simulated, for tools and tests.
                let map = std::sync::Arc::new(replay.check().map_err(|e| anyhow!("{}: {e}", file.display()))?);
                let mut got = None;
                crate::replays::resimulate(&replay, map, |r, m, report| {
                    if r as u32 == round {
                        got = Some((crate::replays::Frame::of(m), report.clone()));
                    }
                    (r as u32) < round
                });
                let (frame, report) =
                    got.ok_or_else(|| anyhow!("{}: round {round} did not re-simulate", file.display()))?;
                let events = |list: &[crate::sim::CaptureEvent]| -> Vec<serde_json::Value> {
                    list.iter().map(|c| json!([c.seat, c.cell.0, gbely_world::replay::owner_code(c.from)])).collect()
                };
                let doc = json!({
                    "round": round,
                    "owner": frame.owner,
                    "units": frame.units,
                    "fortification": frame.fortification,
                    "captures": events(&report.captures),
                    "failed": events(&report.failed),
                });
                writeln!(out, "{doc}")?;
                return Ok(exit::OK);
            } else {
                let map = replay.check().map_err(|e| anyhow!("{}: {e}", file.display()))?;
                let frame = frame_after(&replay, &map, round).map_err(|e| anyhow!("{}: {e}", file.display()))?;
                let color = match color.as_str() {
                    "always" => true,
                    "never" => false,
                    _ => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
                };
                out.write_all(render_frame(&replay, &map, &frame, Some(round), color).as_bytes())?;
                out.write_all(render_legend(&replay, &map, color).as_bytes())?;
            }
            write_notes(&mut out, &replay, round, seat)?;
        }
        ReplayCmd::Verify { file, source } => {
            // A competition's results manifest: every replay it names, checked and re-simulated.
            if let Some(manifest) = crate::app::manifest::read_if_manifest(&file).map_err(|e| anyhow!(e))? {
                if source.is_some() {
                    bail!("--source is for a fork's replay, not a results manifest");
                }
                let dir = file.parent().unwrap_or(Path::new(""));
                let check = crate::app::manifest::check_manifest(&mut out, dir, &manifest)?;
                return Ok(if check.mismatched == 0 { exit::OK } else { exit::VERIFY_FAILED });
            }
            let read = crate::replays::read_replay_or_cut(&file)?;
            let replay = read.replay;
            if let Err(why) = check_fork(&mut out, &replay, source.as_deref()) {
                writeln!(out, "MISMATCH in {}: {why}", file.display())?;
                return Ok(exit::VERIFY_FAILED);
            }
            match verify(&replay) {
                Ok(v) if read.cut_short => {
                    writeln!(out, "{}", cut_short_line(&file, &replay))?;
                    writeln!(out, "ok up to there: {} rounds re-simulated, {} seats, {} cells; every round's figures and discarded commands match", v.rounds, v.seats, v.cells)?;
                    return Ok(exit::CUT_SHORT);
                }
                Ok(v) => writeln!(out, "ok: {} re-simulated: {} rounds, {} seats, {} cells; every round's changes, the final state and the result match", file.display(), v.rounds, v.seats, v.cells)?,
                Err(m) => {
                    writeln!(out, "MISMATCH in {}: {m}", file.display())?;
                    return Ok(exit::VERIFY_FAILED);
                }
            }
        }
        ReplayCmd::Stats { file, json: as_json } => {
            let replay = read_replay(&file)?;
            let stats = crate::replays::stats(&replay).map_err(|e| anyhow!("{}: {e}", file.display()))?;
            if as_json {
                writeln!(out, "{stats}")?;
            } else {
                write!(out, "{}", crate::replays::stats_text(&replay, &stats))?;
            }
        }
    }
    Ok(exit::OK)
}

/// `replay verify` of a fork: says where it came from, and with its `source` checks that it is
/// that replay's fork (the SHA-256 it names) and that its rounds before the fork are the
/// source's (every seat's cells, units and discarded commands; the answers may be recorded in
/// another form, a built-in's regenerated there and stored here). Re-simulating the fork's file
/// then checks both parts as one match.
fn check_fork(out: &mut impl Write, replay: &gbely_world::Replay, source: Option<&Path>) -> Result<(), String> {
    let Some(fork) = &replay.fork else {
        return match source {
            Some(_) => Err("--source: this replay is not a fork (it records no source)".into()),
            None => Ok(()),
        };
    };
    let (r, short) = (fork.round, &fork.source[..fork.source.len().min(16)]);
    let _ = writeln!(
        out,
        "a fork at round {r} of the replay with SHA-256 {short}…: rounds before {r} are its, played again"
    );
    let Some(path) = source else { return Ok(()) };
    let source = crate::replays::read_replay_or_cut(path).map_err(|e| e.to_string())?.replay;
    let sha = crate::app::runs::fork::replay_sha256(&source);
    if sha != fork.source {
        return Err(format!(
            "{} is not its source: its SHA-256 is {}…, the fork's source {short}…",
            path.display(),
            &sha[..16]
        ));
    }
    for k in 0..r as usize {
        let (mine, theirs) = (replay.turns.get(k), source.turns.get(k));
        let same = match (mine, theirs) {
            (Some(a), Some(b)) => {
                a.cells == b.cells
                    && a.units.iter().map(|u| u.to_bits()).eq(b.units.iter().map(|u| u.to_bits()))
                    && a.discarded == b.discarded
            }
            _ => false,
        };
        if !same {
            return Err(format!("round {k} is not the source's round {k} (the fork's rounds before {r} must be)"));
        }
    }
    let _ = writeln!(out, "its rounds 0…{} are {}'s", r.saturating_sub(1), path.display());
    Ok(())
}

/// What a reader says of a file cut short (`replays::ReadReplay::cut_short`): where it stops,
/// and that it is not a whole match.
fn cut_short_line(file: &std::path::Path, replay: &gbely_world::Replay) -> String {
    let through = match replay.turns.len() {
        0 => "before its first round ended".to_string(),
        n => format!("after round {} (rounds 0…{} of {})", n - 1, n - 1, replay.rounds),
    };
    format!(
        "INCOMPLETE: {} stops {through}: its match was killed before the replay was finished; \
         what follows is of the rounds it holds, the final state and result re-simulated from them",
        file.display()
    )
}

/// The agents' notes on a round (all seats', or `seat`'s), each cell's note by its id: the
/// agents' text, shown escaped ([`printable`]), a line of it on a line of its own.
fn write_notes(out: &mut impl Write, replay: &gbely_world::Replay, round: u32, seat: Option<u8>) -> Result<()> {
    let Some(turn) = replay.turns.get(round as usize) else { return Ok(()) };
    let width = replay.map.width;
    for n in turn.notes.iter().filter(|n| seat.is_none_or(|s| s == n.seat)) {
        let name = replay.seats.get(n.seat as usize).map_or("", |s| s.name.as_str());
        writeln!(out, "# notes of seat {} ({}) in round {round}", n.seat, printable(name))?;
        for line in printable_lines(&n.text) {
            writeln!(out, "  {line}")?;
        }
        for (cell, note) in &n.cells {
            let id = gbely_rules::format_cell_id(cell / width, cell % width);
            writeln!(out, "  {id}: {}", printable(note))?;
        }
        // Drawings: `drawn: dot P12_07 #ff00ff`, `drawn: line P12_07 P20_07`, `drawn: label P20_07 "go"`.
        let id = |cell: u32| gbely_rules::format_cell_id(cell / width, cell % width);
        for d in &n.draw {
            let shape = match (d.dot, d.fill, d.line, d.label) {
                (Some(c), ..) => format!("dot {}", id(c)),
                (_, Some(c), ..) => format!("fill {}", id(c)),
                (_, _, Some([a, b]), _) => format!("line {} {}", id(a), id(b)),
                (.., Some(c)) => format!("label {} \"{}\"", id(c), printable(&d.text)),
                _ => continue,
            };
            let color = if d.color.is_empty() { String::new() } else { format!(" {}", d.color) };
            writeln!(out, "  drawn: {shape}{color}")?;
        }
    }
    Ok(())
}

/// The discarded commands of `seat` in round `round` (its answer's items, as
/// [`crate::replays::observation_at`] writes them out): index, reason, and the seat that took the
/// command's cell earlier in the round where one did (from the round's captures, re-simulated).
fn discards_of(
    replay: &gbely_world::Replay,
    round: u32,
    seat: u8,
    answer: &gbely_world::replay::Answer,
) -> Result<Vec<(u32, gbely_rules::DiscardReason, Option<u8>)>, String> {
    let turn = &replay.turns[round as usize];
    let mine: Vec<_> = turn.discarded.iter().filter(|d| d.seat == seat).collect();
    if mine.is_empty() {
        return Ok(Vec::new());
    }
    let map = std::sync::Arc::new(replay.check().map_err(|e| e.to_string())?);
    let mut captures = Vec::new();
    crate::replays::resimulate(replay, map.clone(), |r, _, report| {
        if r == round as usize {
            captures = report.captures.clone();
        }
        r < round as usize
    });
    let list = match answer {
        gbely_world::replay::Answer::Commands(list) => list.as_slice(),
        _ => &[],
    };
    let seats = replay.seats.len();
    Ok(mine
        .iter()
        .map(|d| {
            let by = crate::replays::discards::taken_by(
                round,
                seats,
                seat,
                d.reason,
                list.get(d.index as usize),
                map.grid(),
                &captures,
            );
            (d.index, d.reason, by)
        })
        .collect())
}

/// A JSON document with each item of its arrays on a line of its own (an observation: a cell a
/// line), the rest as compact JSON: still JSON, and readable.
fn one_item_a_line(v: &serde_json::Value) -> String {
    let mut s = String::new();
    match v {
        serde_json::Value::Object(m) => {
            s.push_str("{\n");
            for (k, (key, value)) in m.iter().enumerate() {
                let comma = if k + 1 < m.len() { "," } else { "" };
                match value {
                    serde_json::Value::Array(items) if !items.is_empty() => {
                        s.push_str(&format!("  {}: [\n", json!(key)));
                        for (j, item) in items.iter().enumerate() {
                            let c = if j + 1 < items.len() { "," } else { "" };
                            s.push_str(&format!("    {item}{c}\n"));
                        }
                        s.push_str(&format!("  ]{comma}\n"));
                    }
                    _ => s.push_str(&format!("  {}: {value}{comma}\n", json!(key))),
                }
            }
            s.push_str("}\n");
        }
        other => s.push_str(&format!("{other}\n")),
    }
    s
}
