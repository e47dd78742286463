//! The `gbely-arena` program (`gbely arena …`): its commands, its example configuration (which
//! loads as it is printed), and a missing configuration refused in one line.

use std::process::Command;

fn arena(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gbely-arena")).args(args).output().expect("runs")
}

#[test]
fn its_help_names_its_commands_and_its_example_configuration_loads() {
    let out = arena(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for command in ["serve", "worker", "example"] {
        assert!(help.contains(command), "{help}");
    }
    assert!(help.contains("Usage: gbely arena"), "{help}");
    let out = arena(&["example"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let dir = std::env::temp_dir().join(format!("gbely-arena-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("arena.toml"), &text).unwrap();
    gbely_arena::config::Config::load(&dir.join("arena.toml")).expect("the example loads");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_configuration_is_refused_in_one_line() {
    let out = arena(&["serve", "/nonexistent/arena.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("gbely: error: ") && err.contains("/nonexistent/arena.toml"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}
