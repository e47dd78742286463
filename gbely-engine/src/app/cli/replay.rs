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
            let html = crate::replays::viewer::viewer_html(&replay).map_err(|e| anyhow!("{}: {e}", file.display()))?;
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
        ReplayCmd::Show { file, round, seat, observation, color } => {
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
                writeln!(
                    out,
                    "# the observation seat {seat} ({}) received in round {round}",
                    printable(&replay.seats[seat as usize].name)
                )?;
                writeln!(out, "{obs}")?;
                writeln!(out, "# its answer")?;
                match answer {
                    gbely_world::replay::Answer::Commands(list) => writeln!(out, "{}", json!({ "prikazy": list }))?,
                    gbely_world::replay::Answer::Violation(v) => {
                        writeln!(out, "violation ({}): {}", v.kind, printable(&v.detail))?
                    }
                    gbely_world::replay::Answer::Out => writeln!(out, "none: the seat was out of the game")?,
                    // observation_at writes compact and regenerated commands out as commands.
                    gbely_world::replay::Answer::Compact(_) | gbely_world::replay::Answer::Regen => {}
                }
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
