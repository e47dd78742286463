//! What names an agent, parsed once where the user's text comes in (the command line, Python,
//! the stand's form, the arena's configuration, a league's database, a replay's seats) and
//! passed on typed: [`AgentSpec`]. Its display name, the check that it can run before anything
//! is written ([`AgentSpec::check`]), and how it is started ([`AgentSpec::start`]).
//!
//! The text form (`council`, `template`, `cmd:COMMAND`, `human`, a file's path) is read by
//! [`AgentSpec::from_str`](std::str::FromStr) and written by [`Display`](std::fmt::Display),
//! and only there.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::builtins::{builtin_of, BUILTIN_COUNCIL};
use crate::runner::process::AgentCommand;

use super::program::{absolute_words, check_program, command_program, windows_words};
use super::{Result, RunError};

/// The spec of a person playing a seat on the match's page.
pub const HUMAN: &str = "human";

/// What an agent spec's text starts with when it names a command.
const COMMAND: &str = "cmd:";

/// The example agents shipped inside the binary (from the `agents` crate), usable by name and
/// run as Python files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Example {
    /// `template`: the `my_agent.py` template.
    Template,
    /// `expander`: the expanding example.
    Expander,
}

impl Example {
    /// Every example agent.
    pub const ALL: [Example; 2] = [Example::Template, Example::Expander];

    /// Its name as an agent spec.
    pub fn name(self) -> &'static str {
        match self {
            Example::Template => "template",
            Example::Expander => "expander",
        }
    }

    /// Its Python source.
    pub fn source(self) -> &'static str {
        match self {
            Example::Template => agents::MY_AGENT_PY,
            Example::Expander => agents::EXPANDER_PY,
        }
    }

    /// The built-in agent that decides exactly as it does, in Rust (in-process, fast): where a
    /// Python environment plays `template` as an opponent, this is what it plays.
    pub fn twin(self) -> &'static str {
        match self {
            Example::Template => "template-rs",
            Example::Expander => "expander-rs",
        }
    }

    fn named(name: &str) -> Option<Example> {
        Example::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// Who an agent is, as a user names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AgentSpec {
    /// A built-in agent played in-process: the Council at a level (`council`, `council:easy`,
    /// `council:strong`), `template-rs`, `expander-rs` (see [`crate::builtins`]).
    Builtin(&'static str),
    /// An example agent carried by gbely, run as a Python file (`template`, `expander`).
    Example(Example),
    /// `cmd:COMMAND`: a command line (never empty), run by the shell on Unix.
    Command(String),
    /// An agent file: Python when it ends in `.py`, else a program.
    File(PathBuf),
    /// `human`: a person plays the seat on the match's page.
    Human,
}

impl AgentSpec {
    /// The Council, as it plays the competition.
    pub const COUNCIL: AgentSpec = AgentSpec::Builtin(BUILTIN_COUNCIL);

    /// The agent `cmd` runs (`--agent-cmd`), refused when empty.
    pub fn command(cmd: &str) -> Result<AgentSpec> {
        if cmd.trim().is_empty() {
            return Err(RunError::EmptyCommand);
        }
        Ok(AgentSpec::Command(cmd.to_string()))
    }

    /// The agent a replay's seat is named by, when gbely can play it itself: a built-in or an
    /// example agent. A replay can come from anyone, so a name in it is never taken for a file
    /// or a command.
    pub fn carried(name: &str) -> Option<AgentSpec> {
        match builtin_of(name) {
            Some(b) => Some(AgentSpec::Builtin(b)),
            None => Example::named(name).map(AgentSpec::Example),
        }
    }

    /// The agent file, for a spec naming one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            AgentSpec::File(path) => Some(path),
            _ => None,
        }
    }

    /// The built-in agent, for a spec naming one.
    pub fn builtin(&self) -> Option<&'static str> {
        match self {
            AgentSpec::Builtin(b) => Some(b),
            _ => None,
        }
    }

    /// Whether the agent runs as a process of its own (a file, an example or a command).
    pub fn is_process(&self) -> bool {
        !matches!(self, AgentSpec::Builtin(_) | AgentSpec::Human)
    }

    /// Whether the agent is run by the Python interpreter (a `.py` file or an example agent).
    pub fn is_python(&self) -> bool {
        match self {
            AgentSpec::Example(_) => true,
            AgentSpec::File(path) => path.to_string_lossy().ends_with(".py"),
            _ => false,
        }
    }

    /// A short display name: a file's name, a command's program's file name, else the spec
    /// itself (control characters shown escaped).
    pub fn display_name(&self) -> String {
        let name = match self {
            AgentSpec::Command(cmd) => cmd.split_whitespace().next().map(last_component).unwrap_or_default(),
            AgentSpec::File(path) => last_component(&path.to_string_lossy()),
            other => other.to_string(),
        };
        crate::text::printable(&name).into_owned()
    }

    /// The display name as a part of a file name (`my_agent` for `bots/my_agent.py`).
    pub fn stem(&self) -> String {
        file_stem(&self.display_name())
    }

    /// Refuses a spec naming a file that is not there, or a command whose program cannot be
    /// run, before anything is written: the match would only end in a disqualification.
    pub fn check(&self) -> Result<()> {
        let spec = || self.to_string();
        match self {
            AgentSpec::Builtin(_) | AgentSpec::Example(_) | AgentSpec::Human => Ok(()),
            AgentSpec::Command(cmd) => {
                let program = if cfg!(windows) { windows_words(cmd).into_iter().next() } else { command_program(cmd) };
                if let Some(program) = program {
                    check_program(&program).map_err(|why| RunError::ProgramCannotRun { spec: spec(), why })?;
                }
                Ok(())
            }
            AgentSpec::File(path) => {
                if !path.exists() {
                    return Err(RunError::AgentNotFound(spec()));
                }
                if path.is_dir() {
                    return Err(RunError::AgentIsAFolder(spec()));
                }
                // A named pipe or a device would block gbely (or never end) when it is read or
                // copied.
                crate::files::check_regular(path)
                    .map_err(|e| RunError::AgentNotAFile { spec: spec(), why: e.to_string() })?;
                // A file that is not Python runs as a program: it must be executable, and a
                // script's interpreter must exist.
                if cfg!(not(windows)) && !self.is_python() {
                    let text = path.to_string_lossy();
                    let program = if text.contains('/') { text.into_owned() } else { format!("./{text}") };
                    check_program(&program).map_err(|why| RunError::ProgramCannotRun { spec: spec(), why })?;
                }
                Ok(())
            }
        }
    }

    /// How the agent of `seat` is started, its files (an example's) written into `run_dir`, a
    /// Python agent run by `py`.
    pub fn start(&self, run_dir: &Path, seat: usize, py: &str) -> Result<Started> {
        let prepare = |error| prepare(&self.to_string(), run_dir, error);
        match self {
            AgentSpec::Builtin(b) => Ok(Started::Builtin(b)),
            AgentSpec::Human => Err(RunError::HumanIsNoProcess),
            AgentSpec::Command(cmd) => {
                let here = std::env::current_dir().map_err(prepare)?;
                if cfg!(windows) {
                    // No shell: the program runs with its words; those naming files here become
                    // absolute.
                    let mut words = windows_words(cmd).into_iter().map(|w| {
                        let candidate = here.join(&w);
                        if !w.starts_with(['-', '/']) && candidate.exists() {
                            candidate.to_string_lossy().into_owned()
                        } else {
                            w
                        }
                    });
                    let program = words.next().ok_or(RunError::EmptyCommand)?;
                    return Ok(Started::Process(AgentCommand::Exec { program, args: words.collect() }));
                }
                let cmd = absolute_words(cmd, &here);
                Ok(Started::Process(AgentCommand::Exec {
                    program: "/bin/sh".into(),
                    args: vec!["-c".into(), format!("exec {cmd}")],
                }))
            }
            AgentSpec::Example(example) => {
                let file = run_dir.join(format!("seat{seat}-{}.py", example.name()));
                std::fs::create_dir_all(run_dir).map_err(prepare)?;
                std::fs::write(&file, example.source()).map_err(prepare)?;
                Ok(Started::Process(AgentCommand::Python { file, python: py.to_string() }))
            }
            AgentSpec::File(path) => {
                self.check()?;
                let abs = std::fs::canonicalize(path).map_err(prepare)?;
                if self.is_python() {
                    Ok(Started::Process(AgentCommand::Python { file: abs, python: py.to_string() }))
                } else {
                    let program = abs.to_string_lossy().into_owned();
                    Ok(Started::Process(AgentCommand::Exec { program, args: Vec::new() }))
                }
            }
        }
    }
}

impl FromStr for AgentSpec {
    type Err = RunError;

    /// Reads a spec as a user writes it: `human`, a built-in agent's name, an example agent's
    /// name, `cmd:COMMAND`, else an agent file's path.
    fn from_str(text: &str) -> Result<AgentSpec> {
        if text == HUMAN {
            return Ok(AgentSpec::Human);
        }
        if let Some(known) = AgentSpec::carried(text) {
            return Ok(known);
        }
        if let Some(cmd) = text.strip_prefix(COMMAND) {
            return AgentSpec::command(cmd);
        }
        if text.is_empty() {
            return Err(RunError::AgentNotFound(String::new()));
        }
        Ok(AgentSpec::File(PathBuf::from(text)))
    }
}

impl fmt::Display for AgentSpec {
    /// The spec as a user writes it (read back by `from_str`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentSpec::Builtin(b) => f.write_str(b),
            AgentSpec::Example(e) => f.write_str(e.name()),
            AgentSpec::Command(cmd) => write!(f, "{COMMAND}{cmd}"),
            AgentSpec::File(path) => write!(f, "{}", path.display()),
            AgentSpec::Human => f.write_str(HUMAN),
        }
    }
}

impl serde::Serialize for AgentSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for AgentSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<AgentSpec, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// How an agent is started ([`AgentSpec::start`]).
#[derive(Debug)]
pub enum Started {
    /// A built-in agent played in-process.
    Builtin(&'static str),
    /// An agent process.
    Process(AgentCommand),
}

/// The last part of a path as text (`b.py` of `a/b.py`; the text itself when it has none).
fn last_component(text: &str) -> String {
    Path::new(text).file_name().map_or(text.to_string(), |f| f.to_string_lossy().into_owned())
}

/// A display name as a part of a file name: without `.py`, every character but letters, digits,
/// `-` and `_` made `_`.
pub fn file_stem(name: &str) -> String {
    let name = last_component(name);
    name.strip_suffix(".py")
        .unwrap_or(&name)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect()
}

/// Why an agent could not be prepared in `dir`.
pub(super) fn prepare(spec: &str, dir: &Path, error: std::io::Error) -> RunError {
    RunError::Prepare { spec: spec.to_string(), dir: dir.display().to_string(), error }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> AgentSpec {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn each_kind_of_spec_is_read_and_written_back_as_the_same_text() {
        let cases = [
            ("council", AgentSpec::Builtin("council")),
            ("council:easy", AgentSpec::Builtin("council:easy")),
            ("council:strong", AgentSpec::Builtin("council:strong")),
            ("expander-rs", AgentSpec::Builtin("expander-rs")),
            ("template", AgentSpec::Example(Example::Template)),
            ("expander", AgentSpec::Example(Example::Expander)),
            ("cmd:./bot --fast", AgentSpec::Command("./bot --fast".into())),
            ("human", AgentSpec::Human),
            ("bots/my_agent.py", AgentSpec::File("bots/my_agent.py".into())),
            ("council.py", AgentSpec::File("council.py".into())),
            ("cmd", AgentSpec::File("cmd".into())),
        ];
        for (text, expected) in cases {
            assert_eq!(spec(text), expected, "{text}");
            assert_eq!(expected.to_string(), text);
            let json = serde_json::to_string(&expected).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<AgentSpec>(&json).unwrap(), expected);
        }
    }

    #[test]
    fn an_empty_command_or_name_is_refused_when_read() {
        assert!(matches!("cmd:".parse::<AgentSpec>(), Err(RunError::EmptyCommand)));
        assert!(matches!("cmd:   ".parse::<AgentSpec>(), Err(RunError::EmptyCommand)));
        assert!("".parse::<AgentSpec>().is_err());
        assert!(serde_json::from_str::<AgentSpec>("\"cmd:\"").is_err());
    }

    #[test]
    fn a_replay_name_is_played_only_when_gbely_carries_the_agent() {
        assert_eq!(AgentSpec::carried("council:easy"), Some(AgentSpec::Builtin("council:easy")));
        assert_eq!(AgentSpec::carried("expander"), Some(AgentSpec::Example(Example::Expander)));
        for name in ["cmd:touch pwned", "Cargo.toml", "/usr/bin/true", "human", "my_agent.py"] {
            assert_eq!(AgentSpec::carried(name), None, "{name}");
        }
    }

    #[test]
    fn display_names_and_stems() {
        assert_eq!(spec("bots/my agent.py").display_name(), "my agent.py");
        assert_eq!(spec("bots/my agent.py").stem(), "my_agent");
        assert_eq!(spec("cmd:/opt/bots/fast --level 3").display_name(), "fast");
        assert_eq!(spec("cmd:/opt/bots/fast --level 3").stem(), "fast");
        assert_eq!(spec("council:easy").stem(), "council_easy");
        assert_eq!(spec("template").display_name(), "template");
        assert_eq!(spec("bot\u{1b}[2J.py").display_name(), "bot\\x1b[2J.py");
    }

    #[test]
    fn python_agents_are_the_py_files_and_the_examples() {
        assert!(spec("a.py").is_python() && spec("template").is_python());
        assert!(!spec("cmd:python3 a.py").is_python() && !spec("council").is_python());
        assert!(!spec("./bot").is_python() && !spec("human").is_python());
        assert!(spec("cmd:x").is_process() && spec("a.py").is_process() && spec("expander").is_process());
        assert!(!spec("council").is_process() && !spec("human").is_process());
    }

    #[test]
    fn every_example_has_a_built_in_twin() {
        for e in Example::ALL {
            assert_eq!(builtin_of(e.twin()), Some(e.twin()), "{}", e.name());
            assert!(e.source().contains("def decide"), "{}", e.name());
        }
    }
}
