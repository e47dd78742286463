"""What a notebook shows: ``_repr_html_`` of replays (the viewer inline), match results, league
standings and A/B verdicts; ``to_pandas()`` of results, standings, verdicts, replay figures and
datasets (and the ImportError that says to install pandas where it is missing); progress bars,
silent when stderr is no terminal, and progress functions called with (done, total).

The match: an agent that never commands against the Council for 5 rounds on the reference map.
Its base P57_02 (row 57, column 2, luka) is its only cell throughout; its units in round r's
observation are 10 + r·(3 + 5) + 8 = 18 + 8r (rules §4: production 3 on luka, base bonus 5,
produced before the observation)."""
import html
import re
import sys

import pandas as pd  # ./run-tests installs it
import pytest

import gbely
from gbely.env import GbelyEnv, parallel_env



def idle(stav):
    return []


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nb")
    paths = [str(folder / f"m{k}.json.gz") for k in range(2)]
    results = [gbely.play(idle, rounds=5, replay=p) for p in paths]
    return folder, paths, results


def test_a_match_result_is_a_table_and_a_data_frame(played):
    _, _, (result, _) = played
    page = result._repr_html_()
    assert page.startswith('<table class="gbely">') and "gbely: rounds after round 4" in page
    assert re.search(r"<td>idle</td><td style=\"text-align:right\">[0-9.]+</td><td style=\"text-align:right\">1</td>", page)
    df = result.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["seat", "name", "share", "cells", "tiebreak_round", "disqualified", "violations",
                                "discarded"]
    assert df["name"].tolist() == ["idle", "council"] and df["cells"].tolist() == result.cells
    assert df["cells"][0] == 1 and df["share"].tolist() == result.shares


def test_a_replay_shows_the_viewer_inline(played):
    _, paths, _ = played
    rp = gbely.Replay.load(paths[0])
    page = rp._repr_html_()
    m = re.fullmatch(r'<iframe title="[^"]*" srcdoc="([^"]*)" style="[^"]*"></iframe>', page)
    assert m, page[:200]
    assert html.unescape(m.group(1)) == rp.viewer_html()
    assert rp.viewer_html().lstrip().lower().startswith("<!doctype html>")


def test_replay_figures_and_a_dataset_as_data_frames(played):
    _, paths, _ = played
    rp = gbely.Replay.load(paths[0])
    fig = rp.to_pandas()
    assert list(fig.columns) == ["round", "seat", "name", "cells", "units", "discarded"]
    assert len(fig) == 5 * 2  # 5 rounds × 2 seats
    mine = fig[fig.seat == 0]
    assert mine["round"].tolist() == [0, 1, 2, 3, 4] and mine["cells"].tolist() == [1] * 5
    assert (fig[fig.seat == 1]["name"] == "council").all()

    (item,) = gbely.replay_dataset(paths[0], seat=0)
    df = item.to_pandas()  # the own cells: the base, once a round
    assert df[["round", "row", "col"]].values.tolist() == [[r, 57, 2] for r in range(5)]
    assert df["units"].tolist() == [18.0 + 8 * r for r in range(5)]
    assert df["owner"].tolist() == [1] * 5 and df["kind"].tolist() == [0] * 5 and df["base"].tolist() == [1] * 5
    # Legal at the base with no own neighbour: stay, the four ATTACKs, FORTIFY (rules §6).
    legal = [k for k in range(10) if df[f"legal_{k}"][0]]
    assert legal == [0, 5, 6, 7, 8, 9]
    assert len(item.to_pandas(cells="all")) == 5 * 60 * 60
    visible = item.to_pandas(cells="visible")
    assert len(visible) == int(item.data["visible"].sum()) and len(visible) > 5
    with pytest.raises(ValueError, match="cells='mine'"):
        item.to_pandas(cells="mine")


def test_standings_and_a_verdict_as_tables_and_data_frames(tmp_path):
    calls = []
    res = gbely.league(["template", "council"], maps="seed:doc", rounds=5, db=tmp_path / "l.sqlite",
                       progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 2), (2, 2)]  # two matches (both seat orders), each reported as it ends
    df = res.to_pandas()
    assert df["name"].tolist() == [s.name for s in res.standings] and df["rank"].tolist() == [1, 2]
    assert df["wins"].sum() + df["draws"].sum() / 2 == 2  # two matches, a win or a draw each
    page = res._repr_html_()
    assert "<caption" in page and "2 entries, 2 matches" in page
    assert all(f"<td>{s.name}</td>" in page for s in res.standings)

    pairs = []
    v = gbely.ab("expander-rs", "template-rs", rounds=30, elo1=50, time_limit=None, db=tmp_path / "ab.sqlite",
                 progress=lambda done, most: pairs.append((done, most)))
    assert pairs == [(k, 2000) for k in range(1, v.pairs + 1)]  # after every pair read, of max_pairs
    df = v.to_pandas()
    assert df["pair"].tolist() == list(range(v.pairs)) and df["outcome"].tolist() == v.outcomes
    assert df["map"][0] == "gbely"  # the pairs cycle through fresh maps, the reference map first
    page = v._repr_html_()
    assert html.escape(v.text) in page and f"<td style=\"text-align:right\">{v.pairs}</td>" in page


def test_progress_bars_are_silent_off_a_terminal_and_drawn_when_asked(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the package's own bar, whether tqdm is installed or not
    gbely.league(["template", "council"], maps="seed:doc", rounds=3, db=tmp_path / "a.sqlite")
    assert capsys.readouterr().err == ""  # pytest's stderr is no terminal
    gbely.league(["template", "council"], maps="seed:doc", rounds=3, db=tmp_path / "b.sqlite", progress=True)
    err = capsys.readouterr().err
    assert err.endswith("2/2 matches\n") and "league: [" in err
    gbely.league(["template", "council"], maps="seed:doc", rounds=3, db=tmp_path / "c.sqlite", progress=False)
    assert capsys.readouterr().err == ""


def test_replay_dataset_over_a_folder_reports_progress(played, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    folder, _, _ = played
    calls = []
    items = list(gbely.replay_dataset(folder, seat="council", progress=lambda d, t: calls.append((d, t))))
    assert len(items) == 2 and calls == [(1, 2), (2, 2)]
    list(gbely.replay_dataset(folder, seat="council"))
    assert capsys.readouterr().err == ""
    list(gbely.replay_dataset(folder, seat="council", progress=True))
    assert capsys.readouterr().err.endswith("2/2 replays\n")


def test_to_pandas_without_pandas_says_what_to_install(played, monkeypatch):
    _, paths, (result, _) = played
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails
    for call in (result.to_pandas, gbely.Replay.load(paths[0]).to_pandas):
        with pytest.raises(ImportError, match=r"to_pandas\(\) needs pandas, which is not installed: pip install pandas"):
            call()


def test_the_final_map_by_name():
    env = parallel_env(map="final", rounds=2)
    obs, _ = env.reset(seed=0)
    assert len(env.agents) == 8  # eight finalists; the Council's seat is the Council's (rules §9)
    assert obs["seat_0"]["units"].shape == (90, 90)
    single = GbelyEnv(map="final", rounds=2)
    assert single.map.fingerprint == gbely.Map.named("final:gbely").fingerprint
    single.reset(seed=0)
