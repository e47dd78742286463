use std::process::ExitCode;

fn main() -> ExitCode {
    let map = gbely_world::reference_map();
    print!("{}", gbely_world::render_map(&map));
    ExitCode::SUCCESS
}
