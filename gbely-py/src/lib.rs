//! The native part of the `gbely` Python package (`gbely._gbely`). Thin bindings only: every
//! behaviour lives in the Rust crates; pure-Rust work runs with the GIL released.

mod convert;
mod dataset;
mod env;
mod errors;
mod maps;
mod play;
mod render;
mod schema;
mod step;
mod tournament;
mod vector;

use std::ffi::OsString;

use errors::{MapError, ReplayError};
use gbely_engine::app::cli;
use gbely_engine::app::runs::final_match;
use maps::PyMap;
use play::play_match;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use step::PyMatch;

/// Runs the `gbely` command line (the same code as the Rust binary); returns the exit code.
#[pyfunction]
fn cli_main(py: Python<'_>, args: Vec<String>) -> u8 {
    let args: Vec<OsString> = args.into_iter().map(OsString::from).collect();
    py.allow_threads(|| cli::run_code(args))
}
/// The viewer page (one self-contained HTML file) for a replay given as JSON text.
#[pyfunction]
fn replay_html(py: Python<'_>, text: String) -> PyResult<String> {
    let replay = gbely_world::Replay::from_json(&text).map_err(|e| ReplayError::new_err(e.to_string()))?;
    py.allow_threads(|| gbely_engine::replays::viewer::viewer_html(&replay)).map_err(PyValueError::new_err)
}

/// Re-simulates a replay given as JSON text; `None` when it matches, else where it differs.
#[pyfunction]
fn replay_verify(py: Python<'_>, text: String) -> PyResult<Option<String>> {
    let replay = gbely_world::Replay::from_json(&text).map_err(|e| ReplayError::new_err(e.to_string()))?;
    Ok(py.allow_threads(|| gbely_engine::replays::verify(&replay).err().map(|m| m.to_string())))
}

/// For each finalist seat, the index of the entry that plays it (see `gbely final`).
#[pyfunction]
#[pyo3(signature = (map, pinned = Vec::new()))]
fn final_seating(map: &PyMap, pinned: Vec<u8>) -> PyResult<Vec<usize>> {
    if map.inner.seats().len() < 3 || map.inner.seats().last().map(|s| s.role) != Some(gbely_world::SeatRole::Council) {
        return Err(MapError::new_err(format!("{} is not a final map", map.inner.name())));
    }
    final_match::final_seating(&map.inner, &pinned).map_err(|e| PyValueError::new_err(format!("{e:#}")))
}

/// Plays one league match given as a job (JSON text, see `gbely_engine::app::league::remote`)
/// in the folder `dir`, Python agents with `python`; returns the result row as JSON text. What a
/// Ray worker runs for `gbely league --ray`.
#[pyfunction]
fn league_match(py: Python<'_>, job: String, python: String, dir: String) -> PyResult<String> {
    let job: gbely_engine::app::league::remote::MatchJob =
        serde_json::from_str(&job).map_err(|e| PyValueError::new_err(format!("not a league match job: {e}")))?;
    let row = py
        .allow_threads(|| gbely_engine::app::league::remote::play_job(&job, &python, std::path::Path::new(&dir)))
        .map_err(|e| crate::errors::GbelyError::new_err(e.to_string()))?;
    serde_json::to_string(&row).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The `pravidla` module text (SPEC §12), to check the Python copy against.
#[pyfunction]
fn pravidla_source() -> &'static str {
    gbely_rules::constants::PRAVIDLA_PY
}
#[pymodule]
fn _gbely(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The engine's defaults (gbely_engine::limits::Defaults), so Python's signatures show the
    // same values as the command line's --help.
    use gbely_engine::limits::Defaults;
    m.add("DEFAULT_ROUNDS", Defaults::ROUNDS)?;
    m.add("DEFAULT_TIME_LIMIT", Defaults::TIME_LIMIT.as_secs_f64())?;
    m.add("DEFAULT_MEMORY_LIMIT", Defaults::MEMORY_LIMIT.bytes().map(|b| b >> 20))?;
    m.add("DEFAULT_SANDBOX", gbely_engine::runner::sandbox::SandboxMode::DEFAULT.word())?;
    // The defaults of leagues and A/B tests (gbely_engine::app::requests::defaults), read by
    // gbely.league's and gbely.ab's signatures as `gbely league` and `gbely ab` read them.
    {
        use gbely_engine::app::requests::defaults as d;
        let league = pyo3::types::PyDict::new(m.py());
        league.set_item("maps", d::LEAGUE_MAPS)?;
        league.set_item("seed", d::LEAGUE_SEED)?;
        league.set_item("games", d::LEAGUE_GAMES)?;
        league.set_item("db", d::LEAGUE_DB)?;
        m.add("LEAGUE_DEFAULTS", league)?;
        let ab = pyo3::types::PyDict::new(m.py());
        ab.set_item("seed", d::AB_SEED)?;
        ab.set_item("elo0", d::AB_ELO0)?;
        ab.set_item("elo1", d::AB_ELO1)?;
        ab.set_item("share0", d::AB_SHARE0)?;
        ab.set_item("share1", d::AB_SHARE1)?;
        ab.set_item("alpha", d::AB_ALPHA)?;
        ab.set_item("beta", d::AB_BETA)?;
        ab.set_item("max_pairs", d::AB_MAX_PAIRS)?;
        ab.set_item("db", d::AB_DB)?;
        m.add("AB_DEFAULTS", ab)?;
    }
    // The opponents an environment plays in Rust, by the name a user gives them: every built-in
    // agent (gbely_engine::builtins), and the example agents `template` and `expander` by their
    // Rust twins (which decide exactly as the Python files do), declared once in the engine.
    {
        use gbely_engine::app::runs::agent_spec::Example;
        let builtin = pyo3::types::PyDict::new(m.py());
        for name in gbely_engine::builtins::BUILTIN_AGENTS {
            builtin.set_item(name, name)?;
        }
        for example in Example::ALL {
            builtin.set_item(example.name(), example.twin())?;
        }
        m.add("BUILTIN_OPPONENTS", builtin)?;
    }
    // The replay format versions this build reads (gbely_world::replay::READS_VERSIONS), so that
    // gbely.Replay refuses what the native reader would.
    m.add("REPLAY_VERSIONS", gbely_world::replay::READS_VERSIONS.to_vec())?;
    // The learning environments' observation arrays and codes (schema.rs), for gbely.env.
    m.add("OBS_SCHEMA", schema::schema_dict(m.py())?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(tournament::league, m)?)?;
    m.add_function(wrap_pyfunction!(tournament::ab, m)?)?;
    m.add_function(wrap_pyfunction!(play_match, m)?)?;
    m.add_function(wrap_pyfunction!(pravidla_source, m)?)?;
    m.add_function(wrap_pyfunction!(replay_html, m)?)?;
    m.add_function(wrap_pyfunction!(replay_verify, m)?)?;
    m.add_function(wrap_pyfunction!(final_seating, m)?)?;
    m.add_function(wrap_pyfunction!(league_match, m)?)?;
    m.add_class::<PyMap>()?;
    m.add_class::<PyMatch>()?;
    m.add_class::<env::EnvCore>()?;
    m.add_class::<vector::VectorCore>()?;
    m.add_class::<dataset::ReplayCore>()?;
    m.add_function(wrap_pyfunction!(vector::engine_round_seconds, m)?)?;
    m.add_function(wrap_pyfunction!(env::py_seating, m)?)?;
    Ok(())
}
