"""The package feels like Python (issue 17): typed, documented, picklable, with clear exceptions,
README examples that run, and callables that can be judged like files."""
import dataclasses
import importlib.metadata
import inspect
import json
import multiprocessing
import pickle
import re
import shutil
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

import gbely
import pravidla

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "agents" / "my_agent.py"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def load_module(path):
    """Imports an agent file the ordinary way (`import name`, its folder on sys.path)."""
    sys.path.insert(0, str(path.parent))
    try:
        sys.modules.pop(path.stem, None)
        return __import__(path.stem)
    finally:
        sys.path.remove(str(path.parent))


# --- pravidla: a real top-level module ---

def test_import_pravidla_in_a_fresh_interpreter_without_gbely(tmp_path):
    shutil.copy(TEMPLATE, tmp_path / "my_agent.py")
    code = ("import sys, my_agent, pravidla\n"
            "assert 'gbely' not in sys.modules, sorted(sys.modules)\n"
            "print(pravidla.POCET_KOL, pravidla.__file__)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rounds, path = out.stdout.split()
    assert rounds == "150" and "site-packages" in path


def test_the_installed_pravidla_is_the_rules_module_and_in_the_wheel():
    assert Path(pravidla.__file__).read_text(encoding="utf-8") == gbely._gbely.pravidla_source()
    assert gbely.pravidla is pravidla
    import gbely.pravidla as again
    assert again is pravidla
    files = {str(f) for f in importlib.metadata.files("gbely")}
    assert {"pravidla/__init__.py", "pravidla/py.typed", "gbely/py.typed", "gbely/_gbely.pyi",
            "gbely/codec.py"} <= files


# --- types: TypedDicts for the observation and the answer, checked by mypy ---

TYPED_AGENT = '''\
from __future__ import annotations

from typing import TYPE_CHECKING, List

import pravidla

if TYPE_CHECKING:
    from gbely.types import Answer, Command, Stav


def decide(stav: Stav) -> Answer:
    prikazy: List[Command] = []
    for pole in stav["moje_pola"]:
        if pole["jednotky"] > pravidla.ZACIATOCNE_JEDNOTKY:
            prikazy.append({"typ": "FORTIFY", "pole": pole["id"], "investicia": 1.0})
    return {"prikazy": prikazy}
'''

USES_THE_API = '''\
import gbely
import typed_agent

result = gbely.play(typed_agent.decide, rounds=3)
shares: "list[float | None]" = result.shares
m = gbely.Match(map="seed:types", rounds=3)
stav = m.observation(0)
round_: int = stav["kolo"]
units: float = stav["moje_pola"][0]["jednotky"]
report = m.advance()
cells: "list[str]" = [c.cell for c in report.captures]
'''

MISUSES_THE_API = '''\
import gbely

gbely.play(42)
stav = gbely.Match().observation(0)
wrong: str = stav["kolo"]
missing = stav["mapa"]


def bad(stav: gbely.Stav) -> gbely.Answer:
    return {"prikazy": [{"typ": "JUMP"}]}
'''


def test_agents_and_scripts_type_check_with_mypy(tmp_path):
    pytest.importorskip("mypy")
    (tmp_path / "typed_agent.py").write_text(TYPED_AGENT)
    (tmp_path / "uses.py").write_text(USES_THE_API)
    (tmp_path / "misuses.py").write_text(MISUSES_THE_API)
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--hide-error-context",
                          "typed_agent.py", "uses.py", "misuses.py"], capture_output=True, text=True, cwd=tmp_path)
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert all(line.startswith("misuses.py:") for line in errors), out.stdout
    lines = sorted({int(line.split(":")[1]) for line in errors})
    assert lines == [3, 5, 6, 10], out.stdout
    # The typed agent also plays.
    assert gbely.play(load_module(tmp_path / "typed_agent.py").decide, rounds=5).violations == [0, 0]


def test_a_typed_agent_passes_the_submission_check(tmp_path):
    """The types are imported under `if TYPE_CHECKING:`: never at run time, so `gbely check` (which
    fails imports the judge will not have) does not count them."""
    (tmp_path / "typed_agent.py").write_text(TYPED_AGENT)
    out = subprocess.run([sys.executable, "-m", "gbely", "check", "typed_agent.py", "--rounds", "2"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0 and "WARN" not in out.stdout, out.stdout + out.stderr


def test_stubtest_is_clean_for_the_native_module():
    pytest.importorskip("mypy")
    out = subprocess.run([sys.executable, "-m", "mypy.stubtest", "gbely._gbely"], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


# --- Match.advance(): a documented, frozen dataclass ---

def test_advance_returns_a_frozen_report_that_json_dumps():
    m = gbely.Match(map="seed:report", rounds=4)
    reports = []
    while not m.is_over:
        m.submit(0, "not a command list" if m.round == 1 else [{"typ": "JUMP"}])
        reports.append(m.advance())
    r = reports[1]
    assert isinstance(r, gbely.RoundReport) and dataclasses.is_dataclass(r)
    assert r.round == 1 and r.violations == (0,) and type(r.violations[0]) is int
    assert reports[2].discarded == (gbely.Discard(seat=0, index=0, reason="unknown_type"),)
    council = [c for c in reports[0].captures if c.seat == 1]
    assert council and isinstance(council[0], gbely.Capture) and council[0].previous_owner == -1
    assert re.fullmatch(r"P\d\d_\d\d", council[0].cell)
    assert reports[-1].over and not reports[0].over
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.round = 5  # type: ignore[misc]
    doc = json.loads(json.dumps(r.to_dict()))
    assert doc["violations"] == [0] and set(doc) == {f.name for f in dataclasses.fields(gbely.RoundReport)}
    json.dumps([dataclasses.asdict(x) for x in reports])
    assert gbely.RoundReport.__doc__ and "captures" in inspect.getsource(gbely.RoundReport)


# --- Map: pickle, ==, hash, repr ---

def test_maps_pickle_compare_and_cross_processes():
    a, b = gbely.Map.generate("eq", 24), gbely.Map.generate("eq", 24)
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != gbely.Map.generate("other", 24) and a != gbely.Map.reference() and a != "eq"
    assert len({a, b, gbely.Map.reference()}) == 2
    for m in (a, gbely.Map.reference(), gbely.Map.generate_final("pickle", 40)):
        again = pickle.loads(pickle.dumps(m))
        assert again == m and again.name == m.name and again.seats == m.seats
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        maps = pool.starmap(gbely.Map.generate, [("eq", 24), ("pool", 20)])
    assert maps[0] == a and maps[1].width == 20
    assert repr(a) == f"<gbely.Map seed:eq 24×24 {a.fingerprint}>"


def test_match_repr_says_where_it_stands():
    m = gbely.Match(map="seed:repr", rounds=2)
    assert repr(m) == "<gbely.Match seed:repr 60×60, round 0 of 2, seat 0 vs council>"
    m.advance()
    m.advance()
    assert repr(m) == "<gbely.Match seed:repr 60×60, over after round 1 of 2, seat 0 vs council>"


def test_every_public_method_has_a_docstring():
    for cls in (gbely.Map, gbely.Match, gbely.Replay, gbely.Result):
        for name, member in vars(cls).items():
            if not name.startswith("_") and (callable(member) or isinstance(member, property)
                                              or type(member).__name__ == "getset_descriptor"):
                assert (getattr(member, "__doc__", None) or "").strip(), f"{cls.__name__}.{name}"


# --- Exceptions ---

def test_one_error_base_with_clear_subclasses(tmp_path):
    for cls in (gbely.MapError, gbely.AgentError, gbely.ReplayError):
        assert issubclass(cls, gbely.Error) and issubclass(cls, ValueError)
    (tmp_path / "bad.map").write_text("gbely-map 1\nname x\n")
    with pytest.raises(gbely.MapError, match="bad.map"):
        gbely.Map.load(tmp_path / "bad.map")
    with pytest.raises(gbely.MapError):
        gbely.play(lambda s: [], map=str(tmp_path / "nomap.map"))
    with pytest.raises(gbely.MapError, match="not a final map"):
        gbely.final([lambda s: []], map="gbely")
    with pytest.raises(gbely.MapError, match="not a final map"):
        gbely.final([lambda s: []], map=gbely.Map.reference())
    with pytest.raises(gbely.AgentError, match="not found"):
        gbely.play("ghost.py")
    (tmp_path / "replay.json").write_text('{"format": "something else"}')
    with pytest.raises(gbely.ReplayError, match="not a gbely replay"):
        gbely.Replay.load(tmp_path / "replay.json")
    with pytest.raises(OSError):
        gbely.Map.load(tmp_path / "missing.map")


@pytest.mark.parametrize("call", [
    lambda: gbely.play(lambda s: [], rounds=-1),
    lambda: gbely.play(lambda s: [], rounds=0),
    lambda: gbely.final([lambda s: []], rounds=-1, size=40),
    lambda: gbely.Match(rounds=-1),
    lambda: gbely.Match(rounds=10**6),
])
def test_rounds_out_of_range_is_a_value_error_not_an_overflow(call):
    with pytest.raises(ValueError, match="1 to 100000 rounds"):
        call()


def test_a_class_instead_of_an_instance_is_refused_with_a_hint():
    class MyAgent:
        def decide(self, stav):
            return []

    with pytest.raises(gbely.AgentError, match=r"pass MyAgent\(\)"):
        gbely.play(MyAgent)
    with pytest.raises(gbely.AgentError, match=r"pass MyAgent\(\)"):
        gbely.play(MyAgent(), opponent=MyAgent)
    assert gbely.play(MyAgent(), rounds=3).violations == [0, 0]
    with pytest.raises(TypeError, match="an agent is"):
        gbely.play(42)  # type: ignore[arg-type]


# --- Callables against files: isolate=True, the warning, the documentation ---

HUNG_AGENT = textwrap.dedent("""\
    import time

    calls = []


    def decide(stav):
        calls.append(stav["kolo"])
        if stav["kolo"] == 1:
            time.sleep(60)
        return []


    if __name__ == "__main__":
        raise SystemExit("imported as an agent, never run as a script")
""")


def test_isolate_plays_the_callables_file_as_an_agent_process_and_times_out_a_hang(tmp_path):
    (tmp_path / "hung_agent.py").write_text(HUNG_AGENT)
    hung = load_module(tmp_path / "hung_agent.py")
    start = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an agent process is timed by the runner: no warning
        r = gbely.play(hung.decide, rounds=4, time_limit=0.5, isolate=True, map="seed:hung", size=16)
    assert time.monotonic() - start < 20
    assert [(v["round"], v["kind"]) for v in r.sides[0].violations] == [(1, "timeout")]
    assert r.sides[0].name == "hung_agent.py" and r.sides[0].log
    assert hung.calls == []  # it ran in its own process, not here


def test_isolate_refuses_what_is_not_a_files_top_level_decide(tmp_path):
    (tmp_path / "helpers.py").write_text("def think(stav):\n    return []\n\n\nclass Bot:\n    def decide(self, stav):\n"
                                         "        return []\n")
    helpers = load_module(tmp_path / "helpers.py")
    for agent in (lambda stav: [], helpers.think, helpers.Bot(), print):
        with pytest.raises(gbely.AgentError, match="isolate=True runs the file"):
            gbely.play(agent, rounds=2, isolate=True)


def test_a_slow_callable_is_warned_about_once():
    def decide(stav):
        if stav["kolo"] in (1, 3):
            time.sleep(0.12)
        return []

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = gbely.play(decide, rounds=5, time_limit=0.1)
    late = [w for w in caught if issubclass(w.category, gbely.TimeLimitWarning)]
    assert len(late) == 1 and "hangs the match" in str(late[0].message)
    assert [v["round"] for v in r.sides[0].violations] == [1, 3]
    with warnings.catch_warnings():
        warnings.simplefilter("error", gbely.TimeLimitWarning)
        with pytest.raises(gbely.TimeLimitWarning):
            gbely.play(decide, rounds=5, time_limit=0.1)


def test_help_play_says_how_callables_differ_from_files():
    doc = gbely.play.__doc__ or ""
    for words in ("isolate", "hangs the match", "restarted", "TimeLimitWarning", "AgentError"):
        assert words in doc, words


# --- Docs that run, and the package's metadata ---

def python_blocks(path):
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M)


@pytest.mark.parametrize("readme", ["README.md", "gbely-py/README.md"])
def test_the_readme_examples_run(readme, tmp_path, monkeypatch, capsys):
    blocks = python_blocks(ROOT / readme)
    assert blocks, readme
    shutil.copy(TEMPLATE, tmp_path / "my_agent.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_agent", raising=False)
    namespace = {"__name__": "__readme__"}
    for k, block in enumerate(blocks):
        try:
            exec(compile(block, f"{readme} python block {k + 1}", "exec"), namespace)
        except Exception as e:
            pytest.fail(f"{readme}, python block {k + 1}: {type(e).__name__}: {e}")
    capsys.readouterr()


def test_replay_figures_return_what_they_promise(tmp_path):
    gbely.play(lambda s: [], rounds=3, replay=tmp_path / "r.json")
    figures = gbely.Replay.load(tmp_path / "r.json").figures()
    assert set(figures[0]) == {"round", "cells", "units", "discarded"}
    doc = gbely.Replay.figures.__doc__ or ""
    assert all(f"``{key}``" in doc for key in figures[0])


def test_package_metadata_links_the_rules_and_the_repository():
    cargo = (ROOT / "Cargo.toml").read_text()
    repository = re.search(r'^repository = "([^"]+)"', cargo, flags=re.M).group(1)
    meta = importlib.metadata.metadata("gbely")
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert urls["Repository"] == repository and urls["Rules"] == f"{repository}/blob/main/docs/rules.md"
    assert all(u.startswith(repository) for u in urls.values())
    classifiers = meta.get_all("Classifier")
    assert "Typing :: Typed" in classifiers and "License :: OSI Approved :: MIT License" in classifiers
    # Wheels are built for the three (./build-wheels), for every Python from 3.9 (abi3).
    for system in ("POSIX :: Linux", "MacOS", "Microsoft :: Windows"):
        assert f"Operating System :: {system}" in classifiers
    assert meta["Requires-Python"] == ">=3.9"
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in range(9, 14)} <= set(classifiers)
    description = meta.get_payload() if hasattr(meta, "get_payload") else meta["Description"]
    assert f"({repository}/blob/main/docs/rules.md)" in description
    assert "](../" not in description  # relative links break on a package index
