//! The maps a user names: `gbely`, `seed:TEXT` or a map file, with `--size` for generated ones;
//! and a final's map.

use gbely_world::{parse_map_file, Map, MapSpec};

use super::{Result, RunError};

/// The largest map file read: a 1000×1000 map (the largest there is) takes about 1 MB.
pub const MAX_MAP_FILE_BYTES: u64 = 16 << 20;

/// `N` or `WxH`.
pub fn parse_size(s: &str) -> Result<(u32, u32)> {
    let parse = |x: &str| x.trim().parse::<u32>().map_err(|_| RunError::BadSize(s.to_string()));
    match s.split_once(['x', 'X', '×']) {
        Some((w, h)) => Ok((parse(w)?, parse(h)?)),
        None => {
            let n = parse(s)?;
            Ok((n, n))
        }
    }
}

/// Loads the map a user named.
pub fn load_map(spec: &str, size: Option<&str>) -> Result<Map> {
    let size = size.map(parse_size).transpose()?;
    let spec = MapSpec::parse(spec);
    match spec.generate(size) {
        Some(r) => Ok(r?),
        None => {
            let MapSpec::File(path) = &spec else { unreachable!() };
            if size.is_some() {
                return Err(RunError::SizeOfMapFile(path.clone()));
            }
            let text = crate::files::read_text_bounded(std::path::Path::new(path), MAX_MAP_FILE_BYTES)
                .map_err(|error| RunError::MapUnreadable { path: path.clone(), error })?;
            parse_map_file(&text).map_err(|error| RunError::MapFile { path: path.clone(), error })
        }
    }
}

/// A final map named on the command line: `seed:TEXT` / `final:TEXT` generate one, else a file.
pub fn load_final_map(spec: &str, size: u32) -> Result<Map> {
    let seed = spec.strip_prefix("seed:").or_else(|| spec.strip_prefix("final:"));
    let map = match seed {
        Some(seed) => gbely_world::generate_final(seed, gbely_world::FinalConfig::for_size(size))?,
        None => load_map(spec, None)?,
    };
    let armies = map.seats().iter().filter(|s| s.role == gbely_world::SeatRole::Army).count();
    if map.seats().len() < 3 || map.seats().last().map(|s| s.role) != Some(gbely_world::SeatRole::Council) {
        let why = "it needs finalists and the Council's seat last";
        return Err(RunError::NotAFinalMap { map: map.name().to_string(), why });
    }
    if armies != map.seats().len() - 1 {
        let why = "only the last seat may be the Council's";
        return Err(RunError::NotAFinalMap { map: map.name().to_string(), why });
    }
    Ok(map)
}
