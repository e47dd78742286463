//! The `gbely` command: see `gbely --help`.
fn main() -> std::process::ExitCode {
    gbely_engine::app::cli::run(std::env::args_os().collect())
}
