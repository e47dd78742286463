//! The Rust template (`agents/rust-template`) builds as a competitor builds it: a copy outside
//! the repository, its path dependency pointed at this checkout's engine, then its own
//! `cargo test` and `cargo run -- play`. Offline: the registry cache holds every crate the
//! workspace uses, and the template adds none. The build goes to a folder under this target
//! directory, so a second run rebuilds only the copy itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A folder removed when the test ends, passed or failed.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copies the template's files: not its build output nor a lock file left from a build in place.
fn copy_template(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("the copy's folder");
    for entry in std::fs::read_dir(from).expect("the template's folder") {
        let entry = entry.expect("an entry");
        let name = entry.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_template(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).expect("a file copied");
        }
    }
}

fn report(what: &str, out: &Output) -> String {
    format!(
        "{what}: {}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_copy_of_the_rust_template_outside_the_repository_tests_and_plays() {
    // The cargo running this test, else the one on PATH.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    if Command::new(&cargo).arg("--version").output().is_err() {
        eprintln!("SKIPPED: no `cargo` on PATH to build agents/rust-template with");
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the repository");
    let copy = TempDir(std::env::temp_dir().join(format!("gbely-rust-template-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&copy.0);
    copy_template(&repo.join("agents/rust-template"), &copy.0);

    // The user's one edit: where gbely is.
    let manifest_path = copy.0.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).expect("the template's Cargo.toml");
    let relative = r#"path = "../../gbely-engine""#;
    assert!(manifest.contains(relative), "the template names the engine as {relative}:\n{manifest}");
    // A TOML basic string is escaped as Rust's Debug escapes a string (Windows' backslashes too).
    let engine = repo.join("gbely-engine").display().to_string();
    std::fs::write(&manifest_path, manifest.replace(relative, &format!("path = {engine:?}"))).expect("edited");

    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rust-template");
    let cargo_in_copy = |args: &[&str]| -> Output {
        Command::new(&cargo)
            .args(args)
            .current_dir(&copy.0)
            .env("CARGO_TARGET_DIR", &target)
            // Line tables only, as the workspace builds (205 MB of build here instead of 281 MB).
            .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
            .output()
            .expect("cargo starts")
    };
    let started = std::time::Instant::now();
    let test = cargo_in_copy(&["test", "--offline", "--quiet"]);
    assert!(test.status.success(), "{}", report("cargo test in the copy", &test));
    let play = cargo_in_copy(&["run", "--offline", "--quiet", "--", "play", "--rounds", "30"]);
    assert!(play.status.success(), "{}", report("cargo run -- play in the copy", &play));
    let summary = String::from_utf8_lossy(&play.stdout);
    assert_eq!(
        summary.lines().next(),
        Some("my-agent vs council: 30 rounds played (full length)"),
        "{}",
        report("cargo run -- play in the copy", &play)
    );
    eprintln!("the template built, tested and played in {:.1} s", started.elapsed().as_secs_f64());
}
