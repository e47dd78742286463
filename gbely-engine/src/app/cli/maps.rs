//! `gbely map show|export|stats`.

use super::*;

pub(super) fn cmd_map(cmd: MapCmd) -> Result<u8> {
    let mut out = std::io::stdout().lock();
    match cmd {
        MapCmd::Show(m) => {
            let map = m.load()?;
            out.write_all(render_map(&map).as_bytes())?;
        }
        MapCmd::Export { map: m, output } => {
            let map = m.load()?;
            let text = write_map_file(&map);
            match output {
                Some(p) => std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))?,
                None => out.write_all(text.as_bytes())?,
            }
        }
        MapCmd::Stats(m) => {
            let map = m.load()?;
            writeln!(out, "map          {} ({}×{})", map.name(), map.width(), map.height())?;
            writeln!(out, "fingerprint  {}", map.fingerprint())?;
            let g = map.grid();
            for (k, s) in map.seats().iter().enumerate() {
                writeln!(out, "seat {k}       {} ({})", g.id(s.base), s.role.wire())?;
            }
            write!(out, "{}", MapStats::of(&map))?;
        }
    }
    Ok(exit::OK)
}
