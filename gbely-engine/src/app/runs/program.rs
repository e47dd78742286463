//! The programs agents run as: a `cmd:` command's words (as the shell reads them on Unix, as
//! Windows splits them), the words naming files here made absolute, and whether a program — and
//! the interpreter on a script's `#!` line — can be started.

use std::path::{Path, PathBuf};

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

/// The files a `cmd:` command runs: its program (found as the shell finds it) and every later
/// word that names a file from here (`python3 bot.py` → the interpreter and `bot.py`). What
/// identifies a `cmd:` agent by content, not by its command line (a rebuilt program, an edited
/// script is another agent).
pub fn command_files(cmd: &str) -> Vec<PathBuf> {
    let program = if cfg!(windows) { windows_words(cmd).into_iter().next() } else { command_program(cmd) };
    let mut files: Vec<PathBuf> = program.and_then(|p| program_path(&p)).into_iter().collect();
    for word in cmd.split_whitespace().skip(1) {
        let word = word.trim_matches(|c| c == '"' || c == '\'');
        if !word.starts_with('-') && Path::new(word).is_file() {
            files.push(PathBuf::from(word));
        }
    }
    files
}

/// Where `program` is: a name with a path separator is a path, any other name is searched in
/// `PATH` (on Windows also with `.exe`); `None` when it is not found.
pub fn program_path(program: &str) -> Option<PathBuf> {
    let candidates = |p: PathBuf| {
        let exe = cfg!(windows).then(|| p.with_extension("exe"));
        std::iter::once(p).chain(exe)
    };
    if program.contains('/') || (cfg!(windows) && program.contains('\\')) {
        return candidates(PathBuf::from(program)).find(|p| p.is_file());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).flat_map(|dir| candidates(dir.join(program))).find(|p| p.is_file())
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
