//! Setting up runs, shared by the command line and the Python package: naming maps and agents,
//! run folders, building the players, the result document, and the final's seating and table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use gbely_rules::DiscardReason;
use gbely_world::replay::SideResult;
use gbely_world::{parse_map_file, Map, MapSpec};
use serde_json::json;

use crate::game::{MatchRecord, Player};
use crate::runner::cores::CoreGate;
use crate::runner::process::{AgentCommand, ProcessConfig, ProcessPlayer};
use crate::runner::sandbox::SandboxMode;

/// The example agents shipped inside the binary, usable by name (from the `agents` crate).
const TEMPLATE_PY: &str = agents::MY_AGENT_PY;
const EXPANDER_PY: &str = agents::EXPANDER_PY;

/// Why a run cannot be set up: each names what is wrong and where, in one line.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("bad --size `{0}`: expected N or WxH, e.g. 60 or 90x60")]
    BadSize(String),
    #[error("--size applies to generated maps, not to the map file {0}")]
    SizeOfMapFile(String),
    #[error("cannot read the map `{path}` (give `gbely`, `seed:TEXT` or a map file): {error}")]
    MapUnreadable { path: String, error: std::io::Error },
    #[error("{path}: {error}")]
    MapFile { path: String, error: gbely_world::MapFileError },
    #[error("{0}")]
    Generate(#[from] gbely_world::GenError),
    #[error("map `{map}` is not a final map: {why}")]
    NotAFinalMap { map: String, why: &'static str },
    #[error("--seat: {0}")]
    Seating(String),
    #[error("cannot run the Python interpreter `{python}`: {error} (set --python or GBELY_PYTHON)")]
    NoPython { python: String, error: std::io::Error },
    #[error("`cmd:` needs a command, e.g. cmd:\"./my_agent --fast\"")]
    EmptyCommand,
    #[error("agent `{spec}`: {why}")]
    ProgramCannotRun { spec: String, why: String },
    #[error(
        "agent `{0}` not found: give a Python file with decide(stav), `council`, `template`, `expander` or cmd:COMMAND"
    )]
    AgentNotFound(String),
    #[error("agent `{0}` is a folder, not a file")]
    AgentIsAFolder(String),
    #[error("reading {path} failed: {why}")]
    Inspect { path: String, why: String },
    #[error("preparing agent `{spec}` in {dir}: {error}")]
    Prepare { spec: String, dir: String, error: std::io::Error },
}

type Result<T, E = RunError> = std::result::Result<T, E>;

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
            let text =
                std::fs::read_to_string(path).map_err(|error| RunError::MapUnreadable { path: path.clone(), error })?;
            parse_map_file(&text).map_err(|error| RunError::MapFile { path: path.clone(), error })
        }
    }
}

/// The interpreter run when none is named: `python3` on Unix; `python` on Windows, where
/// `python3` is often only the Store's installer stub (and the `py` launcher is tried when
/// `python` does not run, see [`resolve_python`]).
pub const DEFAULT_PYTHON: &str = if cfg!(windows) { "python" } else { "python3" };

/// The Python interpreter the user named: `--python`, else `$GBELY_PYTHON`, else [`DEFAULT_PYTHON`].
pub fn python(given: Option<&str>) -> String {
    given.map(str::to_string).or_else(|| std::env::var("GBELY_PYTHON").ok()).unwrap_or_else(|| DEFAULT_PYTHON.into())
}

/// The interpreter `python` names, resolved once to the executable it really runs
/// (`sys.executable`). A version manager's shim (pyenv, asdf) is then not run again at every
/// start of an agent, where its own start-up would count toward the agent's round. When the
/// interpreter runs but does not say, its name is kept; when it cannot be run at all, that is
/// the error, before any match.
///
/// On Windows, when the default `python` gives no interpreter, the `py` launcher is asked: it
/// names the newest Python installed, which agents then run with directly.
pub fn resolve_python(python: &str) -> Result<String> {
    let first = sys_executable(python);
    if cfg!(windows) && python == DEFAULT_PYTHON && !matches!(first, Ok(Some(_))) {
        if let Ok(Some(exe)) = sys_executable("py") {
            return Ok(exe);
        }
    }
    match first {
        Ok(exe) => Ok(exe.unwrap_or_else(|| python.to_string())),
        Err(error) => Err(RunError::NoPython { python: python.to_string(), error }),
    }
}

/// The `sys.executable` an interpreter reports; `None` when it runs but does not name a file.
fn sys_executable(python: &str) -> std::io::Result<Option<String>> {
    let out = std::process::Command::new(python)
        .args(["-c", "import sys; print(sys.executable)"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()?;
    let exe = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok((out.status.success() && !exe.is_empty() && Path::new(&exe).is_file()).then_some(exe))
}

/// Whether an agent spec is run by the Python interpreter (an agent file, `template`, `expander`).
/// The file an agent spec names: `None` for a built-in agent, an example (`template`,
/// `expander`) or a `cmd:` command.
pub fn agent_file(spec: &str) -> Option<&Path> {
    let named = builtin_of(spec).is_some() || spec == "template" || spec == "expander" || spec.starts_with("cmd:");
    (!named).then(|| Path::new(spec))
}

pub fn is_python_agent(spec: &str) -> bool {
    spec == "template" || spec == "expander" || (!spec.starts_with("cmd:") && spec.ends_with(".py"))
}

/// A short display name for an agent spec.
pub fn agent_name(spec: &str) -> String {
    if let Some(cmd) = spec.strip_prefix("cmd:") {
        return cmd
            .split_whitespace()
            .next()
            .map(|p| Path::new(p).file_name().map_or(p.to_string(), |f| f.to_string_lossy().into()))
            .unwrap_or_default();
    }
    Path::new(spec).file_name().map_or(spec.to_string(), |f| f.to_string_lossy().into_owned())
}

pub fn file_stem(spec: &str) -> String {
    let n = agent_name(spec);
    n.strip_suffix(".py")
        .unwrap_or(&n)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect()
}

/// What a user's agent spec names.
#[derive(Debug)]
pub enum AgentSpec {
    /// A built-in agent played in-process: `council`, `template-rs`, `expander-rs`.
    Builtin(&'static str),
    Process(AgentCommand),
}

/// The built-in agent a spec names, if it names one.
pub fn builtin_of(spec: &str) -> Option<&'static str> {
    crate::game::BUILTIN_AGENTS.into_iter().find(|b| *b == spec)
}

/// Refuses a spec naming a file that is not there, or a `cmd:` command whose program cannot be
/// run, before anything is written: the match would only end in a disqualification.
pub fn check_spec(spec: &str) -> Result<()> {
    if let Some(cmd) = spec.strip_prefix("cmd:") {
        if cmd.trim().is_empty() {
            return Err(RunError::EmptyCommand);
        }
        let program = if cfg!(windows) { windows_words(cmd).into_iter().next() } else { command_program(cmd) };
        if let Some(program) = program {
            check_program(&program).map_err(|why| RunError::ProgramCannotRun { spec: spec.to_string(), why })?;
        }
        return Ok(());
    }
    let Some(path) = agent_file(spec) else { return Ok(()) };
    if !path.exists() {
        return Err(RunError::AgentNotFound(spec.to_string()));
    }
    if path.is_dir() {
        return Err(RunError::AgentIsAFolder(spec.to_string()));
    }
    // A file that is not Python runs as a program: it must be executable, and a script's
    // interpreter must exist.
    if cfg!(not(windows)) && !spec.ends_with(".py") {
        let program = if spec.contains('/') { spec.to_string() } else { format!("./{spec}") };
        check_program(&program).map_err(|why| RunError::ProgramCannotRun { spec: spec.to_string(), why })?;
    }
    Ok(())
}

/// The program a `cmd:` command runs (it is run as `/bin/sh -c "exec COMMAND"`): its first shell
/// word with quotes and backslashes taken away. `None` when only the shell can tell (the word
/// holds `$`, a backquote, a glob, a leading `~`, a bracket, or a quote that is not closed).
pub fn command_program(cmd: &str) -> Option<String> {
    let mut chars = cmd.trim_start().chars();
    let mut word = String::new();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' => break,
            '\'' => loop {
                match chars.next()? {
                    '\'' => break,
                    x => word.push(x),
                }
            },
            '"' => loop {
                match chars.next()? {
                    '"' => break,
                    '$' | '`' => return None,
                    '\\' => match chars.next()? {
                        x @ ('"' | '\\' | '$' | '`') => word.push(x),
                        '\n' => {}
                        x => word.extend(['\\', x]),
                    },
                    x => word.push(x),
                }
            },
            '\\' => match chars.next()? {
                '\n' => {}
                x => word.push(x),
            },
            '$' | '`' | '*' | '?' | '[' | '(' | ')' => return None,
            '~' if word.is_empty() => return None,
            x => word.push(x),
        }
    }
    (!word.is_empty()).then_some(word)
}

/// A `cmd:` command's words as Windows runs it (no shell): words are separated by spaces and tabs,
/// and double quotes group a word that holds spaces (`"C:\My agents\bot.exe" --fast`).
/// Backslashes are path separators here, never escapes.
pub fn windows_words(cmd: &str) -> Vec<String> {
    let mut words = Vec::new();
    let (mut word, mut quoted, mut started) = (String::new(), false, false);
    for c in cmd.chars() {
        match c {
            '"' => (quoted, started) = (!quoted, true),
            ' ' | '\t' | '\n' | '\r' if !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            x => {
                word.push(x);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// Whether `program` can be started, as Windows looks for it: a name with a path separator is a
/// path, any other name is searched in `PATH` and the system folder; `.exe` may be left out.
#[cfg(windows)]
pub fn check_program(program: &str) -> Result<(), String> {
    let is_program = |p: &Path| p.is_file() || (p.extension().is_none() && p.with_extension("exe").is_file());
    if program.contains(['/', '\\']) {
        return if is_program(Path::new(program)) { Ok(()) } else { Err(format!("program `{program}` is not found")) };
    }
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.extend(std::env::var_os("SystemRoot").map(|root| Path::new(&root).join("System32")));
    dirs.extend(std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)));
    dirs.push(PathBuf::from("."));
    if dirs.iter().any(|dir| is_program(&dir.join(program))) {
        Ok(())
    } else {
        Err(format!("program `{program}` is not found in PATH"))
    }
}

/// Whether `program` can be started, as the shell would look for it: a name with a `/` is a path,
/// any other name is searched in `PATH`. A script's `#!` line must name an interpreter that can
/// be started too (for `#!/usr/bin/env NAME`, NAME in `PATH`): otherwise the kernel refuses to
/// run it and the agent would crash every round ("exit status 127"). The error says what is
/// wrong, naming the program (and the interpreter).
#[cfg(not(windows))]
pub fn check_program(program: &str) -> Result<(), String> {
    let found = find_program(program).map_err(|why| format!("program `{program}` is {why}"))?;
    if let Some(found) = found {
        check_interpreter(program, &found, 0)?;
    }
    Ok(())
}

/// Where `program` is ([`check_program`]'s search); `None` when there is no `PATH` to search (the
/// shell's own default search path: let it look). The error is what the program is
/// (`not found in PATH`).
#[cfg(not(windows))]
fn find_program(program: &str) -> Result<Option<PathBuf>, String> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| -> Result<(), &'static str> {
        let meta = std::fs::metadata(p).map_err(|_| "not found")?;
        if meta.is_dir() {
            Err("a folder, not a program")
        } else if meta.permissions().mode() & 0o111 == 0 {
            Err("not executable")
        } else {
            Ok(())
        }
    };
    if program.contains('/') {
        return runnable(Path::new(program)).map(|()| Some(PathBuf::from(program))).map_err(str::to_string);
    }
    let Some(path) = std::env::var_os("PATH") else {
        return Ok(None);
    };
    let mut seen = None;
    for dir in std::env::split_paths(&path) {
        let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
        match runnable(&dir.join(program)) {
            Ok(()) => return Ok(Some(dir.join(program))),
            Err("not found") => {}
            Err(why) => seen = seen.or(Some((dir, why))),
        }
    }
    Err(match seen {
        Some((dir, why)) => format!("not in PATH ({} is {why})", dir.join(program).display()),
        None => "not found in PATH".to_string(),
    })
}

/// The `#!` line of a program file, as Linux reads it: the interpreter (the first word after
/// `#!`) and the one optional argument (the rest of the line), within the first 256 bytes.
/// `None` for a file that does not start with `#!` (a binary, or a script for the shell).
#[cfg(not(windows))]
fn shebang(path: &Path) -> Option<(String, Option<String>)> {
    use std::io::Read;
    let mut head = Vec::with_capacity(256);
    std::fs::File::open(path).ok()?.take(256).read_to_end(&mut head).ok()?;
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    // Only spaces and tabs separate: a carriage return (a file saved with Windows line endings)
    // is part of the name, as it is for the kernel.
    let line = String::from_utf8_lossy(line);
    let line = line.trim_matches([' ', '\t']);
    let (interpreter, argument) = match line.split_once([' ', '\t']) {
        Some((i, a)) => (i, Some(a.trim_matches([' ', '\t']).to_string()).filter(|a| !a.is_empty())),
        None => (line, None),
    };
    Some((interpreter.to_string(), argument))
}

/// Whether the interpreter of `file`'s `#!` line (if it has one) can be started: its path, and for
/// `env` the program it runs, searched in `PATH`. Interpreters that are scripts are followed, a
/// few deep, as the kernel does.
#[cfg(not(windows))]
fn check_interpreter(program: &str, file: &Path, depth: usize) -> Result<(), String> {
    let Some((interpreter, argument)) = shebang(file) else { return Ok(()) };
    let shown = |name: &str| {
        if name.ends_with('\r') {
            format!(
                "`{}` followed by a carriage return (the file has Windows line endings)",
                name.trim_end_matches('\r')
            )
        } else {
            format!("`{name}`")
        }
    };
    if interpreter.is_empty() {
        return Err(format!("program `{program}` has a `#!` line that names no interpreter"));
    }
    let found = find_program(&interpreter).map_err(|why| {
        format!("program `{program}` names the interpreter {} on its `#!` line, which is {why}", shown(&interpreter))
    })?;
    let Some(found) = found else { return Ok(()) };
    if Path::new(&interpreter).file_name().is_some_and(|n| n == "env") {
        // `env [-S] [-i] [NAME=VALUE…] PROGRAM [ARGS]`: the program is the first other word.
        let words: Vec<&str> = argument.as_deref().unwrap_or("").split([' ', '\t']).collect();
        let run = words.iter().find(|w| !w.is_empty() && !w.starts_with('-') && !w.contains('='));
        if let Some(run) = run {
            let found = find_program(run).map_err(|why| {
                format!(
                    "program `{program}` runs {} through `{interpreter}` (its `#!` line), which is {why}",
                    shown(run)
                )
            })?;
            if let Some(found) = found.filter(|_| depth < 4) {
                return check_interpreter(program, &found, depth + 1);
            }
        }
        return Ok(());
    }
    if depth < 4 {
        check_interpreter(program, &found, depth + 1)?;
    }
    Ok(())
}

/// A `cmd:` command made to work from the agent's own folder: each plain word (letters, digits
/// and `_-.,/+=:@%`, not an option) that names an existing file or folder relative to `from`
/// becomes its absolute path, quoted for the shell. Words with quotes, variables or other shell
/// syntax are left as written. A first word without `/` is a program the shell finds in `PATH`,
/// and stays as it is.
pub fn absolute_words(cmd: &str, from: &Path) -> String {
    let plain = |w: &str| w.chars().all(|c| c.is_ascii_alphanumeric() || "_-.,/+=:@%".contains(c));
    let mut out = String::with_capacity(cmd.len());
    let mut rest = cmd;
    let mut first = true;
    while !rest.is_empty() {
        let start = rest.find(|c: char| !c.is_ascii_whitespace()).unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest.find(|c: char| c.is_ascii_whitespace()).unwrap_or(rest.len());
        let word = &rest[..end];
        let candidate = from.join(word);
        let program_in_path = first && !word.contains('/');
        first &= word.is_empty();
        if !word.is_empty() && !program_in_path && plain(word) && !word.starts_with(['-', '/']) && candidate.exists() {
            let abs = candidate.to_string_lossy().replace('\'', "'\\''");
            out.push('\'');
            out.push_str(&abs);
            out.push('\'');
        } else {
            out.push_str(word);
        }
        rest = &rest[end..];
    }
    out
}

fn prepare(spec: &str, dir: &Path, error: std::io::Error) -> RunError {
    RunError::Prepare { spec: spec.to_string(), dir: dir.display().to_string(), error }
}

pub fn resolve_agent(spec: &str, run_dir: &Path, seat: usize, py: &str) -> Result<AgentSpec> {
    if let Some(b) = builtin_of(spec) {
        return Ok(AgentSpec::Builtin(b));
    }
    if let Some(cmd) = spec.strip_prefix("cmd:") {
        if cmd.trim().is_empty() {
            return Err(RunError::EmptyCommand);
        }
        let here = std::env::current_dir().map_err(|error| prepare(spec, run_dir, error))?;
        if cfg!(windows) {
            // No shell: the program runs with its words; those naming files here become absolute.
            let mut words = windows_words(cmd).into_iter().map(|w| {
                let candidate = here.join(&w);
                if !w.starts_with(['-', '/']) && candidate.exists() {
                    candidate.to_string_lossy().into_owned()
                } else {
                    w
                }
            });
            let program = words.next().ok_or(RunError::EmptyCommand)?;
            return Ok(AgentSpec::Process(AgentCommand::Exec { program, args: words.collect() }));
        }
        let cmd = absolute_words(cmd, &here);
        return Ok(AgentSpec::Process(AgentCommand::Exec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), format!("exec {cmd}")],
        }));
    }
    let builtin = match spec {
        "template" => Some(TEMPLATE_PY),
        "expander" => Some(EXPANDER_PY),
        _ => None,
    };
    if let Some(text) = builtin {
        let file = run_dir.join(format!("seat{seat}-{spec}.py"));
        std::fs::create_dir_all(run_dir).map_err(|error| prepare(spec, run_dir, error))?;
        std::fs::write(&file, text).map_err(|error| prepare(spec, run_dir, error))?;
        return Ok(AgentSpec::Process(AgentCommand::Python { file, python: py.to_string() }));
    }
    check_spec(spec)?;
    let path = Path::new(spec);
    let abs = std::fs::canonicalize(path).map_err(|error| prepare(spec, run_dir, error))?;
    if spec.ends_with(".py") {
        Ok(AgentSpec::Process(AgentCommand::Python { file: abs, python: py.to_string() }))
    } else {
        Ok(AgentSpec::Process(AgentCommand::Exec { program: abs.to_string_lossy().into_owned(), args: Vec::new() }))
    }
}

/// The most rounds a match may be asked to play: as many as a replay may hold, so that every
/// match the command line plays can be read back.
pub const MAX_ROUNDS: u32 = gbely_world::replay::MAX_ROUNDS;

/// A UTC timestamp `YYYYMMDD-HHMMSS` for run folder names (no clock crate needed).
pub fn timestamp() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!("{y:04}{m:02}{d:02}-{:02}{:02}{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

pub fn unique_dir(base: PathBuf) -> PathBuf {
    if !base.exists() {
        return base;
    }
    (2..).map(|k| PathBuf::from(format!("{}-{k}", base.display()))).find(|p| !p.exists()).expect("some free name")
}

/// Discarded commands as "37 discarded: 30 not enough ready units, 7 target not adjacent".
pub fn discard_digest(d: &BTreeMap<DiscardReason, u32>) -> String {
    let total: u32 = d.values().sum();
    if total == 0 {
        return "no command discarded".into();
    }
    let mut parts: Vec<(u32, DiscardReason)> = d.iter().map(|(r, n)| (*n, *r)).collect();
    parts.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let list: Vec<String> = parts.iter().map(|(n, r)| format!("{n} {r}")).collect();
    format!("{total} discarded: {}", list.join(", "))
}

/// The players of a match and their log files (`None` for in-process players).
pub struct PlaySetup {
    pub players: Vec<Box<dyn Player>>,
    pub logs: Vec<Option<PathBuf>>,
}

impl std::fmt::Debug for PlaySetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.players.iter().map(|p| p.name()).collect();
        f.debug_struct("PlaySetup").field("players", &names).field("logs", &self.logs).finish()
    }
}

/// Builds one player per `(spec, display name)`, process agents logging into `run_dir`, each
/// working in its own folder `run_dir/.seatK`.
/// What every agent process of a match gets.
#[derive(Clone, Debug, Default)]
pub struct AgentLimits {
    /// Seconds a round (`None`: no limit).
    pub time: Option<Duration>,
    /// Address space in bytes (`None`: no limit).
    pub memory: Option<u64>,
    /// The cores shared with other matches' agents (a league's), if any.
    pub cores: Option<Arc<CoreGate>>,
    /// Whether agents run in the sandbox.
    pub sandbox: SandboxMode,
}

impl AgentLimits {
    pub fn new(time: Option<Duration>, memory: Option<u64>) -> AgentLimits {
        AgentLimits { time, memory, cores: None, sandbox: SandboxMode::Auto }
    }
}

pub fn build_players(specs: &[(String, String)], run_dir: &Path, limits: &AgentLimits, py: &str) -> Result<PlaySetup> {
    let mut players: Vec<Box<dyn Player>> = Vec::new();
    let mut logs = Vec::new();
    for (seat, (spec, name)) in specs.iter().enumerate() {
        match resolve_agent(spec, run_dir, seat, py)? {
            AgentSpec::Builtin(b) => {
                players.push(crate::game::builtin_player(name.clone(), b).expect("a built-in agent"));
                logs.push(None);
            }
            AgentSpec::Process(cmd) => {
                let log = run_dir.join(format!("seat{seat}-{}.log", file_stem(spec)));
                let mut cfg = ProcessConfig::new(run_dir.join(format!(".seat{seat}")), log.clone());
                cfg.time_limit = limits.time;
                cfg.memory_limit = limits.memory;
                cfg.cores = limits.cores.clone();
                cfg.sandbox = limits.sandbox;
                cfg.cpu_slot = seat;
                let p = ProcessPlayer::new(name.clone(), cmd, cfg).map_err(|error| prepare(spec, run_dir, error))?;
                players.push(Box::new(p));
                logs.push(Some(log));
            }
        }
    }
    Ok(PlaySetup { players, logs })
}

/// The result of a run, as `--json` and the Python package give it: the match result in the
/// same shape as the replay's and `gbely.Match.result()` ([`MatchResult`]'s fields; each side a
/// [`SideResult`]), and per side the run's details.
pub fn result_json(map: &Map, rec: &MatchRecord, replay: Option<&Path>, logs: &[Option<PathBuf>]) -> serde_json::Value {
    let result = crate::game::record_result(rec);
    let sides: Vec<SideReport> = result
        .sides
        .into_iter()
        .map(|side| {
            let s = side.seat as usize;
            let details = SideDetails {
                violations: rec.violations[s]
                    .iter()
                    .map(|(round, kind, detail)| ViolationRecord { round: *round, kind: *kind, detail: detail.clone() })
                    .collect(),
                discarded: rec.discards[s].iter().map(|(r, n)| (r.code(), *n)).collect(),
                disqualified_round: rec.outcome[s].disqualified,
                log: logs[s].as_ref().map(|p| p.display().to_string()),
                timing: rec.agents[s],
            };
            SideReport { side, details }
        })
        .collect();
    json!({
        "map": map.name(),
        "fingerprint": map.fingerprint(),
        "size": [map.width(), map.height()],
        "last_round": result.last_round,
        "rounds_played": rec.rounds_played(),
        "ended_by": result.ended_by,
        "council_fell": result.council_fell,
        "sides": sides,
        "replay": replay.map(|p| p.display().to_string()),
        "replay_error": rec.replay_written.as_ref().and_then(|w| w.as_ref().err()),
        "fairness": fairness_notes(rec),
        "isolation": isolation_of(rec),
    })
}

/// One side in [`result_json`]: its [`SideResult`], and what the run adds.
#[derive(Debug, serde::Serialize)]
struct SideReport {
    #[serde(flatten)]
    side: SideResult,
    details: SideDetails,
}

#[derive(Debug, serde::Serialize)]
struct SideDetails {
    /// Each violation: round, kind, what happened.
    violations: Vec<ViolationRecord>,
    /// Discarded commands by reason code.
    discarded: BTreeMap<&'static str, u32>,
    disqualified_round: Option<u32>,
    /// The agent process's log file.
    log: Option<String>,
    /// The agent process's timings (`None` for in-process players).
    timing: Option<crate::game::AgentStats>,
}

#[derive(Debug, serde::Serialize)]
struct ViolationRecord {
    round: u32,
    kind: gbely_rules::ViolationKind,
    detail: String,
}

/// How the match's agent processes were isolated (`None`: no agent process played).
pub fn isolation_of(rec: &MatchRecord) -> Option<crate::game::Isolation> {
    rec.agents.iter().flatten().map(|a| a.isolation).next()
}

/// Timed agent processes in this match, and the CPUs this machine offers.
pub fn timed_agents(rec: &MatchRecord) -> usize {
    rec.agents.iter().flatten().filter(|a| a.timed).count()
}

/// What the runner saw of the competition for CPUs, for the summary: a warning when timed agents
/// outnumber the cores, and each agent that waited for a CPU while its clock ran. The judgement
/// itself is by wall time, as the judge's; these notes say when a violation may come from the
/// machine rather than from the agent.
pub fn fairness_notes(rec: &MatchRecord) -> Vec<String> {
    let mut notes = Vec::new();
    let timed = timed_agents(rec);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if timed > cores {
        notes.push(format!(
            "{timed} timed agents share {cores} CPU cores: agents that think at the same time slow each other \
             down (the judge gives each its own core); use --time-limit off or fewer agents for timing-sensitive tests"
        ));
    }
    for (s, a) in rec.agents.iter().enumerate() {
        let Some(a) = a else { continue };
        if a.cpu.starved_rounds > 0 {
            notes.push(format!(
                "{}: waited for a CPU in {} round(s) (up to {:.2} s in one round, {:.2} s in all) while its clock ran",
                rec.names[s], a.cpu.starved_rounds, a.cpu.max_wait_seconds, a.cpu.wait_seconds
            ));
        }
    }
    notes
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

/// Who plays which finalist seat: for each seat, the index of the entry (the user's agents
/// first, then the fills). `pinned[i]` is the seat of entry `i`; the rest follow a shuffle
/// seeded by the map's fingerprint, so the same map always seats the same way.
pub fn final_seating(map: &Map, pinned: &[u8]) -> Result<Vec<usize>> {
    let n = map.seats().len() - 1;
    let mut order: Vec<usize> = (0..n).collect();
    let mut x = u64::from_str_radix(&map.fingerprint(), 16).unwrap_or(0x9e37_79b9);
    for i in (1..n).rev() {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        order.swap(i, (z % (i as u64 + 1)) as usize);
    }
    // order[k] = the seat of entry k; pinned entries take their seats first.
    let mut seat_of: Vec<Option<usize>> = vec![None; n];
    for (entry, &seat) in pinned.iter().enumerate() {
        if seat as usize >= n {
            return Err(RunError::Seating(format!("{seat}: the finalists' seats are 0…{}", n - 1)));
        }
        if entry >= n {
            return Err(RunError::Seating("more values than seats".into()));
        }
        if seat_of.contains(&Some(seat as usize)) {
            return Err(RunError::Seating(format!("{seat} is given twice")));
        }
        seat_of[entry] = Some(seat as usize);
    }
    let taken: Vec<usize> = seat_of.iter().flatten().copied().collect();
    let mut free = order.into_iter().filter(|s| !taken.contains(s));
    for s in seat_of.iter_mut() {
        if s.is_none() {
            *s = free.next();
        }
    }
    let mut entry_of = vec![0; n];
    for (entry, seat) in seat_of.iter().enumerate() {
        entry_of[seat.expect("every entry seated")] = entry;
    }
    Ok(entry_of)
}

/// Corner or edge, for tables.
pub fn seat_class(seat: usize) -> &'static str {
    if seat.is_multiple_of(2) {
        "corner"
    } else {
        "edge"
    }
}

/// One row of the final table.
#[derive(Clone, Debug, PartialEq)]
pub struct FinalRow {
    pub rank: Option<usize>,
    pub seat: usize,
    pub class: &'static str,
    pub name: String,
    pub share: Option<f64>,
    pub cells: u32,
    pub tiebreak: Option<u32>,
    pub violations: u32,
    pub disqualified: bool,
}

/// The finalists ranked by share, then by the earlier tie-break round; disqualified last.
pub fn final_table(map: &Map, rec: &MatchRecord) -> Vec<FinalRow> {
    let finalists = map.seats().len() - 1;
    let mut rows: Vec<FinalRow> = rec.outcome[..finalists]
        .iter()
        .map(|o| FinalRow {
            rank: None,
            seat: o.seat as usize,
            class: seat_class(o.seat as usize),
            name: rec.names[o.seat as usize].clone(),
            share: o.score,
            cells: o.cells,
            tiebreak: o.tiebreak_round,
            violations: o.violations,
            disqualified: o.disqualified.is_some(),
        })
        .collect();
    rows.sort_by(|a, b| match (a.share, b.share) {
        (Some(x), Some(y)) => y.total_cmp(&x).then(a.tiebreak.cmp(&b.tiebreak)).then(a.seat.cmp(&b.seat)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.seat.cmp(&b.seat),
    });
    for (k, r) in rows.iter_mut().enumerate() {
        if !r.disqualified {
            r.rank = Some(k + 1);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How Windows runs a `cmd:` command (no shell): spaces separate words, double quotes group.
    #[test]
    fn windows_command_words_split_on_spaces_and_group_in_double_quotes() {
        let check = |cmd: &str, expect: &[&str]| assert_eq!(windows_words(cmd), expect, "{cmd}");
        check("bot.exe --fast", &["bot.exe", "--fast"]);
        check("  bot.exe\t--fast  ", &["bot.exe", "--fast"]);
        check(r#""C:\My agents\bot.exe" --name "two words""#, &[r"C:\My agents\bot.exe", "--name", "two words"]);
        check(r#"run a" "b"#, &["run", "a b"]);
        check(r#"bot.exe "" x"#, &["bot.exe", "", "x"]);
        check(r"C:\bots\x.exe", &[r"C:\bots\x.exe"]);
        check("", &[]);
        check("   ", &[]);
    }

    #[test]
    fn command_words_naming_files_here_become_absolute() {
        let here = std::env::temp_dir().join(format!("gbely-words-{}", std::process::id()));
        std::fs::create_dir_all(here.join("bin")).unwrap();
        std::fs::write(here.join("bot.py"), "").unwrap();
        std::fs::write(here.join("bin/run"), "").unwrap();
        std::fs::write(here.join("python3"), "").unwrap();
        let h = here.display();
        assert_eq!(absolute_words("python3 bot.py --fast", &here), format!("python3 '{h}/bot.py' --fast"));
        assert_eq!(absolute_words("./bin/run  -v", &here), format!("'{h}/./bin/run'  -v"));
        assert_eq!(absolute_words("bin/run missing.txt", &here), format!("'{h}/bin/run' missing.txt"));
        assert_eq!(absolute_words("python3 \"bot.py\" $HOME", &here), "python3 \"bot.py\" $HOME");
        let _ = std::fs::remove_dir_all(&here);
    }
}
