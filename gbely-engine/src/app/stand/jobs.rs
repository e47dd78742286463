//! What the page asks the stand to run ([`Request`]), checked into what runs ([`Plan`]), and
//! running it: a duel or a final through the match service with its live feed, a league or an
//! A/B test through their typed entry points ([`crate::app::requests`]) — the tournament core.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use gbely_world::Map;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::agents::resolve;
use super::history::RunStatus;
use crate::app::entries::Entry;
use crate::app::league::play::MatchRow;
use crate::app::requests::{AbRequest, Against, LeagueRequest, MatchSettings};
use crate::app::runs::agent_spec::{AgentSpec, Example};
use crate::app::runs::final_match::final_seating;
use crate::app::runs::maps::{load_final_map, load_map};
use crate::app::runs::RunError;
use crate::app::service::{unique_names, MatchPlan, Recording, Seat};
use crate::app::web::live::{HumanPlayer, Live, WatchObserver};
use crate::builtins::BUILTIN_COUNCIL;

/// A map as the page names it.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MapChoice {
    /// `reference`, `seed` or `file` (a duel); a final's map is always generated from a seed.
    pub kind: String,
    pub seed: String,
    /// The side of a generated map.
    pub size: Option<u32>,
    /// A `.map` file of the folder.
    pub file: String,
}

impl Default for MapChoice {
    fn default() -> MapChoice {
        MapChoice { kind: "reference".into(), seed: "stand".into(), size: None, file: String::new() }
    }
}

/// What the page asks for (`POST api/runs`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Request {
    Duel {
        seats: Vec<String>,
        #[serde(default)]
        map: MapChoice,
        #[serde(default)]
        settings: MatchSettings,
    },
    Final {
        /// The finalists given (the rest is `fill`); any may be `human`.
        seats: Vec<String>,
        #[serde(default = "default_fill")]
        fill: String,
        #[serde(default)]
        map: MapChoice,
        #[serde(default)]
        settings: MatchSettings,
    },
    League {
        entries: Vec<String>,
        #[serde(default)]
        gauntlet: bool,
        /// `gbely`, `seed:TEXT` or `.map` files of the folder.
        #[serde(default = "default_maps")]
        maps: Vec<String>,
        #[serde(default = "one")]
        games: u32,
        #[serde(default)]
        settings: MatchSettings,
    },
    Ab {
        a: String,
        b: String,
        /// `null`: head to head; else the opponent both play.
        #[serde(default)]
        against: Option<String>,
        #[serde(default)]
        maps: Vec<String>,
        #[serde(default)]
        elo0: f64,
        #[serde(default = "forty")]
        elo1: f64,
        #[serde(default = "max_pairs")]
        max_pairs: usize,
        #[serde(default)]
        settings: MatchSettings,
    },
}

fn default_fill() -> String {
    "template".into()
}
fn default_maps() -> Vec<String> {
    vec!["gbely".into()]
}
fn one() -> u32 {
    1
}
fn forty() -> f64 {
    40.0
}
fn max_pairs() -> usize {
    200
}

/// What a checked request runs.
#[derive(Debug)]
pub enum Plan {
    /// A duel or a final: the map, each seat's spec and name, the human seat.
    Match {
        map: Arc<Map>,
        specs: Vec<AgentSpec>,
        names: Vec<String>,
        human: Option<u8>,
        live: Arc<Live>,
    },
    League(Box<LeagueRequest>),
    Ab(Box<AbRequest>),
}

/// A checked request: what it runs, its title and the versions of the agent files it plays.
#[derive(Debug)]
pub struct Checked {
    pub kind: &'static str,
    pub title: String,
    pub plan: Plan,
    pub settings: MatchSettings,
    pub versions: Value,
}

/// Where the stand's requests are checked against: its folder and its interpreter.
#[derive(Clone, Debug)]
pub struct Context {
    pub folder: PathBuf,
    pub python: String,
}

/// The built-in agents the page offers: the engine's Rust ones and the example Python files.
pub fn built_in() -> impl Iterator<Item = &'static str> {
    crate::builtins::BUILTIN_AGENTS.into_iter().chain(Example::ALL.map(Example::name))
}

impl Context {
    /// The agent spec of a name from the page: a built-in agent, `human` (where `human_ok`), or an
    /// agent file of the folder (its path). Commands (`cmd:`) and paths are refused.
    pub fn spec(&self, name: &str, human_ok: bool) -> Result<AgentSpec, String> {
        let not_a_file = || format!("`{name}`: not an agent file (*.py) of the folder nor a built-in agent");
        match name.parse::<AgentSpec>() {
            Ok(spec @ (AgentSpec::Builtin(_) | AgentSpec::Example(_))) => Ok(spec),
            Ok(AgentSpec::Human) if human_ok => Ok(AgentSpec::Human),
            Ok(AgentSpec::Human) => Err("a human plays duels and finals, not leagues or A/B tests".into()),
            Ok(AgentSpec::Command(_)) | Err(RunError::EmptyCommand) => {
                Err(format!("`{name}`: the stand plays agent files of its folder and built-in agents, not commands"))
            }
            Ok(spec @ AgentSpec::File(_)) if spec.is_python() => Ok(AgentSpec::File(resolve(&self.folder, name)?)),
            Ok(AgentSpec::File(_)) | Err(_) => Err(not_a_file()),
        }
    }

    /// A league's or A/B test's map: `gbely`, `seed:TEXT`, or a `.map` file of the folder.
    fn map_spec(&self, name: &str) -> Result<String, String> {
        if name == "gbely" || name.starts_with("seed:") {
            return Ok(name.to_string());
        }
        if !name.ends_with(".map") {
            return Err(format!("`{name}`: a map is gbely, seed:TEXT or a .map file of the folder"));
        }
        Ok(resolve(&self.folder, name)?.display().to_string())
    }

    fn name_of(&self, spec: &AgentSpec) -> String {
        match spec {
            AgentSpec::File(_) => crate::app::inspect::display_name(spec, &self.python).0,
            _ => spec.to_string(),
        }
    }

    fn versions(&self, specs: &[AgentSpec]) -> Value {
        let mut v = serde_json::Map::new();
        for s in specs {
            let key = match s.file().and_then(Path::file_name) {
                Some(f) => f.to_string_lossy().into_owned(),
                None => s.to_string(),
            };
            // The identity a league's entry has (a person has none).
            let hash = match s {
                AgentSpec::Human => String::new(),
                _ => Entry::from_spec(s, key.clone()).map_or_else(|_| String::new(), |e| e.hash),
            };
            v.insert(key, json!(hash));
        }
        Value::Object(v)
    }

    /// Checks a request; what it runs, or what is wrong with it.
    pub fn check(&self, req: &Request) -> Result<Checked, String> {
        // The page's settings arrive parsed (time limit, sandbox); the rounds' range and this
        // stand's interpreter are added here.
        let settings = |s: &MatchSettings| -> Result<MatchSettings, String> {
            if !(1..=crate::app::runs::MAX_ROUNDS).contains(&s.rounds) {
                return Err(format!("rounds: {} is out of range", s.rounds));
            }
            Ok(MatchSettings { python: Some(self.python.clone()), ..s.clone() })
        };
        match req {
            Request::Duel { seats, map, settings: s } => {
                if seats.len() != 2 {
                    return Err(format!("a duel has two seats, not {}", seats.len()));
                }
                let specs = seats.iter().map(|n| self.spec(n, true)).collect::<Result<Vec<_>, _>>()?;
                let map = Arc::new(match map.kind.as_str() {
                    "reference" => gbely_world::reference_map(),
                    "seed" => load_map(&format!("seed:{}", map.seed), map.size.map(|n| n.to_string()).as_deref())
                        .map_err(|e| e.to_string())?,
                    "file" => load_map(&self.map_spec(&map.file)?, None).map_err(|e| e.to_string())?,
                    k => return Err(format!("map kind `{k}`: reference, seed or file")),
                });
                if map.seats().len() != 2 {
                    return Err(format!("the map has {} seats: a duel is played on a map of two", map.seats().len()));
                }
                self.a_match("duel", map, specs, settings(s)?)
            }
            Request::Final { seats, fill, map, settings: s } => {
                let map = Arc::new(
                    load_final_map(&format!("seed:{}", map.seed), map.size.unwrap_or(90)).map_err(|e| e.to_string())?,
                );
                let finalists = map.seats().len() - 1;
                if seats.is_empty() || seats.len() > finalists {
                    return Err(format!("a final has 1 to {finalists} finalists given, not {}", seats.len()));
                }
                if fill == BUILTIN_COUNCIL {
                    return Err(
                        "fill: the Council already holds the centre; fill with template, expander or a file".into()
                    );
                }
                let mut entries = seats.iter().map(|n| self.spec(n, true)).collect::<Result<Vec<_>, _>>()?;
                let fill = self.spec(fill, false)?;
                while entries.len() < finalists {
                    entries.push(fill.clone());
                }
                let entry_of = final_seating(&map, &[]).map_err(|e| e.to_string())?;
                let mut specs: Vec<AgentSpec> = (0..finalists).map(|seat| entries[entry_of[seat]].clone()).collect();
                specs.push(AgentSpec::COUNCIL);
                self.a_match("final", map, specs, settings(s)?)
            }
            Request::League { entries, gauntlet, maps, games, settings: s } => {
                if entries.len() < 2 {
                    return Err("a league has two entries or more".into());
                }
                let specs = entries.iter().map(|n| self.spec(n, false)).collect::<Result<Vec<_>, _>>()?;
                let maps = maps.iter().map(|m| self.map_spec(m)).collect::<Result<Vec<_>, _>>()?;
                let mut req = LeagueRequest::new(specs.clone());
                // Each match's replay and viewer page, for the run's list of matches.
                req.replays = true;
                req.gauntlet = *gauntlet;
                req.maps = maps.join(",");
                req.games = (*games).max(1);
                req.settings = settings(s)?;
                // The entries by name (the history lists runs by their titles), the maps as given.
                let names: Vec<String> = specs.iter().map(|s| self.name_of(s)).collect();
                let title = if *gauntlet {
                    format!("gauntlet: {} against {} on {}", names[0], names[1..].join(", "), maps_named(&maps))
                } else {
                    format!("{} on {}", names.join(", "), maps_named(&maps))
                };
                Ok(Checked {
                    kind: "league",
                    title,
                    versions: self.versions(&specs),
                    settings: req.settings.clone(),
                    plan: Plan::League(Box::new(req)),
                })
            }
            Request::Ab { a, b, against, maps, elo0, elo1, max_pairs, settings: s } => {
                let (sa, sb) = (self.spec(a, false)?, self.spec(b, false)?);
                let mut req = AbRequest::new(sa.clone(), sb.clone());
                req.against = match against.as_deref() {
                    None | Some("") => None,
                    Some(o) => Some(Against::Opponent(self.spec(o, false)?)),
                };
                req.maps = maps.iter().map(|m| self.map_spec(m)).collect::<Result<Vec<_>, _>>()?;
                req.elo0 = *elo0;
                req.elo1 = *elo1;
                req.max_pairs = (*max_pairs).clamp(1, 100_000);
                req.settings = settings(s)?;
                let title = format!("A/B: {} against {}", self.name_of(&sb), self.name_of(&sa));
                Ok(Checked {
                    kind: "ab",
                    title,
                    versions: self.versions(&[sa, sb]),
                    settings: req.settings.clone(),
                    plan: Plan::Ab(Box::new(req)),
                })
            }
        }
    }

    fn a_match(
        &self,
        kind: &'static str,
        map: Arc<Map>,
        specs: Vec<AgentSpec>,
        settings: MatchSettings,
    ) -> Result<Checked, String> {
        let humans: Vec<usize> =
            specs.iter().enumerate().filter(|(_, s)| **s == AgentSpec::Human).map(|(k, _)| k).collect();
        if humans.len() > 1 {
            return Err("one human seat per match (the page plays one seat)".into());
        }
        let mut names: Vec<String> = specs.iter().map(|s| self.name_of(s)).collect();
        unique_names(&mut names);
        let human = humans.first().map(|&s| s as u8);
        let title =
            if kind == "duel" { names.join(" vs ") } else { format!("final: {}", names[..names.len() - 1].join(", ")) };
        let live = Live::new(&map, &names, human);
        Ok(Checked {
            kind,
            title,
            versions: self.versions(&specs),
            settings,
            plan: Plan::Match { map, specs, names, human, live },
        })
    }
}

/// How a run ended, and what it left.
#[derive(Debug)]
pub struct Ended {
    /// `finished`, `interrupted` or `failed`.
    pub status: RunStatus,
    pub result: Value,
    pub replay: Option<PathBuf>,
    /// One line for the list.
    pub summary: String,
}

/// Runs a checked request in `dir` (its run folder); `stop` stops it, `progress` hears how it
/// goes (a document the page shows).
pub fn run(checked: Checked, dir: &Path, stop: &Arc<AtomicBool>, progress: &mut dyn FnMut(Value)) -> Ended {
    let failed = |e: String| Ended { status: RunStatus::Failed, result: json!({"error": e}), replay: None, summary: e };
    if let Err(e) = std::fs::create_dir_all(dir) {
        return failed(format!("cannot create {}: {e}", dir.display()));
    }
    let settings = checked.settings;
    crate::runner::interrupt::within(Some(Arc::clone(stop)), || match checked.plan {
        Plan::Match { map, specs, names, human, live } => {
            let mut seats: Vec<Seat> = specs.iter().zip(&names).map(|(s, n)| Seat::spec(s.clone(), n)).collect();
            if let Some(h) = human {
                // A person thinks as long as they like, as `gbely play human` without --human-limit.
                seats[h as usize] =
                    Seat::player(Box::new(HumanPlayer::new(live.clone(), names[h as usize].clone(), None)));
            }
            let mut plan = MatchPlan::new(map.clone(), seats);
            plan.rounds = settings.rounds;
            plan.limits = settings.limits();
            if let Some(py) = settings.python {
                plan.python = py;
            }
            plan.run_dir = Some(dir.to_path_buf());
            plan.recording = Recording::File(dir.join("replay.json.gz"));
            let mut observer = WatchObserver::new(live.clone(), map.clone(), None);
            let played = crate::app::service::run(plan, &mut observer);
            let played = match played {
                Ok(p) => p,
                Err(e) => {
                    live.finish(json!({"error": e.to_string()}), None, None);
                    return failed(e.to_string());
                }
            };
            let result = played.result_json();
            let replay = played.replay.clone();
            live.finish_from_file(result.clone(), replay.clone());
            let rec = &played.record;
            let interrupted = rec.end_reason == crate::sim::EndReason::Interrupted;
            let summary = if map.seats().len() == 2 {
                format!(
                    "{} {} – {} {} · {}",
                    rec.names[0],
                    rec.outcome[0].cells,
                    rec.outcome[1].cells,
                    rec.names[1],
                    rec.how_it_ended()
                )
            } else {
                let rows = crate::app::runs::final_match::final_table(&map, rec);
                let first = rows.first().map_or(String::new(), |r| format!("1. {}", r.name));
                format!("{first} · {}", rec.how_it_ended())
            };
            Ended {
                status: if interrupted { RunStatus::Interrupted } else { RunStatus::Finished },
                result,
                replay,
                summary,
            }
        }
        Plan::League(mut req) => {
            req.db = dir.join("league.sqlite");
            let mut rows: Vec<MatchRow> = Vec::new();
            let gauntlet = req.gauntlet;
            let mut heard = |done: usize, total: usize, row: &MatchRow| {
                rows.push(row.clone());
                let table = provisional(&rows, gauntlet);
                progress(json!({"done": done, "total": total, "standings": table}));
            };
            match crate::app::requests::run_league(&req, &mut heard) {
                Ok(report) => {
                    let mut doc = report.to_json();
                    with_replays(&mut doc, &dir.join("replays"));
                    let first = report.table.standings.first().map_or(String::new(), |s| format!("1. {}", s.name));
                    let status = if report.run.interrupted { RunStatus::Interrupted } else { RunStatus::Finished };
                    let summary = format!(
                        "{first} · {} of {} matches",
                        report.run.played + report.run.already_played,
                        report.run.total
                    );
                    Ended { status, result: doc, replay: None, summary }
                }
                Err(e) => failed(e.to_string()),
            }
        }
        Plan::Ab(mut req) => {
            req.db = dir.join("ab.sqlite");
            let head_to_head = req.head_to_head();
            let mut heard = |s: &crate::tournament::ab::Sprt| {
                progress(crate::app::requests::ab_progress_json(s, head_to_head));
            };
            match crate::app::requests::run_ab(&req, &mut heard) {
                Ok(report) => {
                    let status = if report.interrupted() { RunStatus::Interrupted } else { RunStatus::Finished };
                    // "no better · B−A +6 Elo [-27, +43] · 3 pairs": the verdict with its figures.
                    let summary = format!(
                        "{} · {} · {} pairs",
                        report.verdict_text(),
                        crate::app::requests::estimate_text(&report.sprt, report.head_to_head()),
                        report.run.pairs
                    );
                    Ended { status, summary, result: report.to_json(), replay: None }
                }
                Err(e) => failed(e.to_string()),
            }
        }
    })
}

/// The maps of a league's title: "gbely", "gbely and seed:x", "3 maps".
fn maps_named(maps: &[String]) -> String {
    let short: Vec<&str> =
        maps.iter().map(|m| Path::new(m).file_name().and_then(|f| f.to_str()).unwrap_or(m)).collect();
    match short.as_slice() {
        [one] => one.to_string(),
        [a, b] => format!("{a} and {b}"),
        _ => format!("{} maps", short.len()),
    }
}

/// Adds to each of a league document's `matches` the name of its replay (`replay`: the stem of
/// `replays/STEM.json.gz`, which the stand serves at `/r/RUN/STEM`), where the match left one.
fn with_replays(doc: &mut Value, replays: &Path) {
    let Some(matches) = doc.get_mut("matches").and_then(Value::as_array_mut) else { return };
    for m in matches {
        let Some(key) = m.get("key").and_then(Value::as_str) else { continue };
        let stem = crate::app::league::play::replay_stem(key);
        if replays.join(&stem).with_extension("json.gz").is_file() {
            m["replay"] = json!(stem);
        }
    }
}

/// The standings of the league's matches so far (the same table the league ends with, of fewer
/// matches): entries known by their ids in the rows.
fn provisional(rows: &[MatchRow], gauntlet: bool) -> Value {
    let mut ids: Vec<String> = Vec::new();
    for r in rows {
        for id in [&r.seat0, &r.seat1] {
            if !ids.contains(id) {
                ids.push(id.clone());
            }
        }
    }
    let entries: Vec<Entry> = ids
        .iter()
        .map(|id| Entry {
            id: id.clone(),
            name: id.rsplit_once('@').map_or(id.as_str(), |(n, _)| n).to_string(),
            // Standings read ids and names only; the rows do not say what an entry ran.
            spec: AgentSpec::File(PathBuf::new()),
            hash: String::new(),
        })
        .collect();
    json!(crate::app::league::standings(&entries, rows, gauntlet).standings)
}

/// Whether a stop was asked for.
pub fn stopped(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{Defaults, TimeLimit};
    use crate::runner::sandbox::SandboxMode;

    /// A duel of two built-in agents with the page's `settings` (a JSON object), as `POST
    /// api/runs` reads it.
    fn duel(settings: Value) -> Result<Request, String> {
        serde_json::from_value(json!({"kind": "duel", "seats": ["council", "template-rs"], "settings": settings}))
            .map_err(|e| e.to_string())
    }

    fn settings_of(req: &Request) -> &MatchSettings {
        match req {
            Request::Duel { settings, .. } => settings,
            other => panic!("not a duel: {other:?}"),
        }
    }

    #[test]
    fn the_pages_settings_are_read_into_match_settings_and_keep_their_wire_shape() {
        let req = duel(json!({"rounds": 30, "time_limit": null, "sandbox": "off"})).unwrap();
        let s = settings_of(&req);
        assert_eq!((s.rounds, s.time_limit, s.sandbox), (30, TimeLimit::OFF, SandboxMode::Off));
        // Written back (the stand's history keeps the request, `again` reads it) as the page sent it.
        assert_eq!(
            serde_json::to_value(&req).unwrap()["settings"],
            json!({"rounds": 30, "time_limit": null, "sandbox": "off"})
        );
        let req = duel(json!({"time_limit": 0.5})).unwrap();
        let s = settings_of(&req);
        assert_eq!(
            (s.rounds, s.time_limit, s.sandbox),
            (Defaults::ROUNDS, TimeLimit::seconds(0.5).unwrap(), SandboxMode::Auto)
        );
        // No settings at all: the defaults.
        let req: Request = serde_json::from_value(json!({"kind": "duel", "seats": ["council", "council"]})).unwrap();
        assert_eq!(settings_of(&req), &MatchSettings::default());
    }

    #[test]
    fn the_stand_refuses_a_bad_sandbox_time_limit_or_unknown_setting() {
        let e = duel(json!({"sandbox": "maybe"})).unwrap_err();
        assert!(e.contains("`maybe`: auto, require or off"), "{e}");
        let e = duel(json!({"time_limit": 0})).unwrap_err();
        assert!(e.contains("seconds more than 0"), "{e}");
        // The interpreter and the memory limit are not the page's to choose.
        for key in ["python", "memory_limit", "bogus"] {
            let e = duel(json!({key: "x"})).unwrap_err();
            assert!(e.contains(&format!("unknown field `{key}`")), "{key}: {e}");
        }
    }

    #[test]
    fn a_checked_request_plays_with_the_stands_interpreter_and_the_rounds_in_range() {
        let cx = Context { folder: std::env::temp_dir(), python: "python-of-the-stand".into() };
        let checked = cx.check(&duel(json!({"rounds": 12, "sandbox": "require"})).unwrap()).unwrap();
        assert_eq!(
            checked.settings,
            MatchSettings {
                rounds: 12,
                sandbox: SandboxMode::Require,
                python: Some("python-of-the-stand".into()),
                ..MatchSettings::default()
            }
        );
        let e = cx.check(&duel(json!({"rounds": 0})).unwrap()).err().unwrap();
        assert_eq!(e, "rounds: 0 is out of range");
    }
}
