//! Commands of programs of their own, run as `gbely NAME ARGS` (as cargo runs `cargo-NAME`):
//! `gbely arena` is the competition server, `gbely-arena`, which the `gbely` binary and the
//! Python wheels do not carry (a competitor never needs the server's database drivers, its SMTP
//! client or its TLS).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// `gbely arena`: the competition server (crate `gbely-arena`).
pub(super) const ARENA: External = External {
    program: "gbely-arena",
    build: "cargo build --release -p gbely-arena (it lands beside gbely in target/release), or \
            cargo install --path gbely-arena",
};

/// A program run as a subcommand.
pub(super) struct External {
    /// Its executable's name (without `.exe`).
    pub program: &'static str,
    /// How to get it, for the message when it is missing.
    pub build: &'static str,
}

/// Where `program` is: beside this executable first (a build's `target/release`, an install's
/// `bin`), then on PATH.
fn find(program: &str, beside: Option<&Path>, path: Option<&OsStr>) -> Option<PathBuf> {
    let file = format!("{program}{}", std::env::consts::EXE_SUFFIX);
    let here = beside.map(|dir| dir.join(&file));
    let on_path = path.into_iter().flat_map(std::env::split_paths).map(|dir| dir.join(&file));
    here.into_iter().chain(on_path).find(|p| p.is_file())
}

/// Runs the program with `args`: on Unix in this process's place (its exit code, its signals:
/// Ctrl-C and `kill` reach the server itself), elsewhere as a child whose exit code is ours.
pub(super) fn run(cmd: External, args: &[OsString]) -> Result<u8> {
    let exe = std::env::current_exe().ok();
    let beside = exe.as_deref().and_then(Path::parent);
    let Some(program) = find(cmd.program, beside, std::env::var_os("PATH").as_deref()) else {
        let where_ = beside.map_or(String::new(), |d| format!(" beside {} and", d.display()));
        bail!(
            "`gbely {}` is the program {}, which is not installed here (not found{where_} not on PATH): {}",
            cmd.program.trim_start_matches("gbely-"),
            cmd.program,
            cmd.build
        );
    };
    let mut command = std::process::Command::new(&program);
    command.args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let error = command.exec();
        Err(error).with_context(|| format!("cannot run {}", program.display()))
    }
    #[cfg(not(unix))]
    {
        let status = command.status().with_context(|| format!("cannot run {}", program.display()))?;
        Ok(status.code().map_or(super::exit::ERROR, |c| c.clamp(0, 255) as u8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_beside_this_one_comes_before_the_one_on_path() {
        let root = std::env::temp_dir().join(format!("gbely-external-{}", std::process::id()));
        let (beside, on_path) = (root.join("bin"), root.join("path"));
        let file = format!("gbely-x{}", std::env::consts::EXE_SUFFIX);
        for dir in [&beside, &on_path] {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(&file), "").unwrap();
        }
        let path = std::env::join_paths([root.join("empty"), on_path.clone()]).unwrap();
        assert_eq!(find("gbely-x", Some(&beside), Some(&path)), Some(beside.join(&file)));
        std::fs::remove_file(beside.join(&file)).unwrap();
        assert_eq!(find("gbely-x", Some(&beside), Some(&path)), Some(on_path.join(&file)));
        assert_eq!(find("gbely-y", Some(&beside), Some(&path)), None);
        let _ = std::fs::remove_dir_all(&root);
    }
}
