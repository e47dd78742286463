//! The agent plays by the rules: in-process against a built-in, and served as a process.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use gbely_engine::gbely_world::reference_map;
use gbely_engine::limits::TimeLimit;
use gbely_engine::runner::player::PlayerAnswer;
use gbely_engine::wire::{observation_json, parse_answer};
use gbely_engine::{builtin_player, play, DecidePlayer, MatchConfig, PlayOptions, Player, Session};
use my_agent::MyAgent;

#[test]
fn it_grows_beyond_its_base_against_the_easy_council_without_violations() {
    let mut me = DecidePlayer::new("my-agent", MyAgent::new(2.0)).with_time_limit(TimeLimit::JUDGE);
    let mut them = builtin_player("council:easy", "council:easy").expect("a built-in agent");
    let mut players: [&mut dyn Player; 2] = [&mut me, them.as_mut()];
    let opts = PlayOptions { config: MatchConfig { rounds: 30 }, record: false };
    let rec = play(Arc::new(reference_map()), &mut players, opts, &mut ());
    assert_eq!(rec.rounds_played(), 30, "{rec}");
    assert!(rec.violations[0].is_empty(), "{rec}");
    assert!(rec.outcome[0].cells > 10, "{rec}");
}

#[test]
fn served_it_answers_a_real_observation_with_one_line_of_valid_commands() {
    // Round 0 of the reference map, seat 0, as the engine sends it to an agent process.
    let mut session = Session::new(Arc::new(reference_map()), MatchConfig::default(), vec!["me".into(), "idle".into()]);
    let line = observation_json(&session.observe(0), session.grid());
    let mut child = Command::new(env!("CARGO_BIN_EXE_my-agent"))
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("my-agent starts");
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "{line}").expect("the observation is sent");
    drop(stdin); // end of input: the agent stops after answering
    let mut answers = Vec::new();
    for l in BufReader::new(child.stdout.take().expect("stdout")).lines() {
        answers.push(l.expect("a line"));
    }
    assert!(child.wait().expect("it exits").success());
    assert_eq!(answers.len(), 1, "one answer line for one observation: {answers:?}");
    assert!(answers[0].starts_with(r#"{"prikazy":["#), "{}", answers[0]);
    let commands = parse_answer(&answers[0]).expect("a readable answer");
    assert!(!commands.is_empty(), "18 units at home take a neutral neighbour: {}", answers[0]);
    // The engine resolves them on the real map: none discarded, a cell taken.
    session.submit(0, PlayerAnswer::Raw(commands));
    session.submit(1, PlayerAnswer::Commands(Vec::new()));
    let report = session.advance();
    assert!(report.discarded.is_empty(), "{:?}", report.discarded);
    assert!(report.captures.iter().any(|c| c.seat == 0), "{:?}", report.captures);
}
