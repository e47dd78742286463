"""``gbely.league`` and ``gbely.ab`` call the engine's typed entry points, not the command line:
typed results equal to the command line's ``--json`` documents, and the typed exceptions of
``gbely.play``."""
import json
import subprocess
import sys

import pytest

import gbely
import gbely.tournament


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def cli(*args):
    out = subprocess.run([sys.executable, "-m", "gbely", *args, "--json"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def without_timings(matches):
    return [{k: v for k, v in m.items() if k != "seconds"} for m in matches]


def test_league_and_ab_are_the_typed_bindings_and_never_parse_a_command_line(tmp_path, monkeypatch):
    assert not hasattr(gbely._gbely, "cli_json"), "the argv-and-JSON bridge is gone"
    assert gbely.league is gbely.tournament.league and gbely.ab is gbely.tournament.ab

    def no_cli(*_):
        raise AssertionError("the command line was run")

    monkeypatch.setattr(gbely._gbely, "cli_main", no_cli)
    calls = []
    native = gbely.tournament._league

    def spy(agents, **kwargs):
        calls.append((agents, kwargs))
        return native(agents, **kwargs)

    monkeypatch.setattr(gbely.tournament, "_league", spy)
    res = gbely.league(["template-rs", "council:easy"], maps="seed:typed", rounds=5, db=tmp_path / "l.sqlite")
    # One call of the native function, with typed keyword arguments: no flag strings.
    [(agents, kwargs)] = calls
    assert agents == ["template-rs", "council:easy"]
    assert kwargs["rounds"] == 5 and kwargs["council"] is False and kwargs["ray"] is None
    assert not any(isinstance(v, str) and v.startswith("--") for v in kwargs.values())
    assert isinstance(res, gbely.Standings)
    assert [s.name for s in res.standings] == [s["name"] for s in res["standings"]]
    assert res.standings[0].rank == 1 and res.standings[0].played == 2
    assert res.run["total"] == 2 and res.winner == res.standings[0].name


def test_a_missing_agent_file_and_a_bad_map_are_typed_errors(tmp_path):
    db = tmp_path / "e.sqlite"
    with pytest.raises(gbely.AgentError, match="`no_such_agent.py` not found"):
        gbely.league(["no_such_agent.py", "council"], db=db)
    with pytest.raises(gbely.AgentError, match="not found"):
        gbely.ab("council", "no_such_agent.py", db=tmp_path / "ab.sqlite")
    with pytest.raises(gbely.MapError, match="no_such.map"):
        gbely.league(["template-rs", "council"], maps="no_such.map", db=db)
    # A final map is no duel map.
    with pytest.raises(gbely.MapError, match="a league plays duels"):
        gbely.league(["template-rs", "council"], maps="final:x", db=db)
    with pytest.raises(ValueError, match="--elo1 must be more than --elo0"):
        gbely.ab("council", "template-rs", elo0=10, elo1=5, db=tmp_path / "ab.sqlite")
    with pytest.raises(ValueError, match="thinking=0"):
        gbely.league(["template-rs", "council"], thinking=0, db=db)
    # Still a gbely.Error and a ValueError, as before the typed classes existed.
    with pytest.raises(gbely.Error):
        gbely.league(["no_such_agent.py", "council"], db=db)


def test_the_typed_results_equal_the_command_lines_documents(tmp_path):
    entries = ["template-rs", "expander-rs", "council:easy"]
    args = ["--maps", "seed:eq-a,seed:eq-b", "--rounds", "25", "--time-limit", "off"]
    doc = cli("league", *entries, *args, "--db", str(tmp_path / "cli.sqlite"))
    res = gbely.league(entries, maps="seed:eq-a,seed:eq-b", rounds=25, time_limit=None, db=tmp_path / "py.sqlite")
    for key in ["entries", "standings", "matrix", "los", "per_map", "gauntlet"]:
        assert res[key] == doc[key], key
    assert without_timings(res["matches"]) == without_timings(doc["matches"])
    assert [(s.name, s.wins, s.rating) for s in res.standings] == \
        [(s["name"], s["wins"], s["rating"]) for s in doc["standings"]]

    doc = cli("ab", "expander-rs", "template-rs", "--rounds", "30", "--elo1", "50", "--time-limit", "off",
              "--db", str(tmp_path / "cli-ab.sqlite"))
    v = gbely.ab("expander-rs", "template-rs", rounds=30, elo1=50, time_limit=None, db=tmp_path / "py-ab.sqlite")
    assert isinstance(v, gbely.Verdict)
    keys = ["verdict", "verdict_text", "pairs", "outcomes", "pentanomial", "llr", "bounds", "estimate", "pair_maps"]
    for key in keys:
        assert v[key] == doc[key], key
    assert v.verdict == doc["verdict"] and v.pairs == doc["pairs"] and v.better == (doc["verdict"] == "better")
    assert v.los == doc["estimate"]["los"]


def test_the_sandbox_default_is_the_engines_everywhere(capfd):
    """`sandbox=` of gbely.play, gbely.final, gbely.league and gbely.ab and the command line's
    --sandbox read the engine's one declaration (SandboxMode::DEFAULT)."""
    import inspect

    from gbely._gbely import DEFAULT_SANDBOX, cli_main, play_match

    assert DEFAULT_SANDBOX == "auto"
    for fn in (gbely.play, gbely.final, gbely.league, gbely.ab, play_match):
        assert inspect.signature(fn).parameters["sandbox"].default == DEFAULT_SANDBOX, fn.__name__
    for command in ("play", "league", "ab"):
        assert cli_main(["gbely", command, "--help"]) == 0
        text = " ".join(capfd.readouterr().out.split())
        assert "--sandbox <MODE>" in text and f"[default: {DEFAULT_SANDBOX}]" in text, command


def test_league_and_ab_keyword_defaults_are_the_command_lines(capfd):
    """gbely.league's and gbely.ab's defaults are `gbely league`'s and `gbely ab`'s: both read the
    engine's one declaration (requests::defaults; a Rust test ties the flags to it), and the
    command line's help shows the values the signatures have."""
    import inspect

    from gbely._gbely import AB_DEFAULTS, LEAGUE_DEFAULTS, cli_main

    want = {
        gbely.league: {"maps": "gbely", "seed": "league", "games": 1, "db": "gbely-league/league.sqlite"},
        gbely.ab: {"seed": "ab", "elo0": 0.0, "elo1": 40.0, "share0": 0.0, "share1": 1.0, "alpha": 0.05,
                   "beta": 0.05, "max_pairs": 2000, "db": "gbely-ab/ab.sqlite"},
    }
    assert LEAGUE_DEFAULTS == want[gbely.league] and AB_DEFAULTS == want[gbely.ab]
    for fn, defaults in want.items():
        params = inspect.signature(fn).parameters
        for name, value in defaults.items():
            assert params[name].default == value, (fn.__name__, name)
    for command, defaults in (("league", LEAGUE_DEFAULTS), ("ab", AB_DEFAULTS)):
        assert cli_main(["gbely", command, "--help"]) == 0
        text = " ".join(capfd.readouterr().out.split())
        for name, value in defaults.items():
            shown = f"{value:g}" if isinstance(value, float) else str(value)
            assert f"--{name.replace('_', '-')}" in text and f"[default: {shown}]" in text, (command, name)
