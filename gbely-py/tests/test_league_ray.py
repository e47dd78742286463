"""A league on a Ray cluster (``backend="ray"``, ``gbely league --ray``): a Ray head started here
on 127.0.0.1 (nothing leaves the machine), each match a Ray task on its worker. The results must
be the local backend's, match for match."""
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import gbely

ROOT = Path(__file__).resolve().parents[2]
EXPANDER = ROOT / "agents" / "expander.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_head():
    ray = str(Path(sys.executable).with_name("ray"))
    port = free_port()
    # Ray's sockets live under its temp folder, whose path must stay short.
    temp = tempfile.mkdtemp(prefix="gr", dir="/tmp")
    # A cluster of this test only, on loopback: no token authentication (whether Ray turns it on
    # depends on files left in ~/.ray by earlier runs); the league's driver inherits this.
    mp = pytest.MonkeyPatch()
    mp.setenv("RAY_AUTH_MODE", "disabled")
    mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
    env = dict(os.environ)
    subprocess.run(
        [ray, "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
         "--include-dashboard=false", "--object-store-memory=100000000", f"--temp-dir={temp}",
         "--disable-usage-stats"],
        check=True, env=env, timeout=180, stdout=subprocess.DEVNULL,
    )
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([ray, "stop", "--force"], env=env, timeout=180, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        mp.undo()


def results(doc):
    """What must not depend on the backend: every match but its wall time, and the standings."""
    matches = sorted(({k: v for k, v in m.items() if k != "seconds"} for m in doc["matches"]),
                     key=lambda m: m["key"])
    return matches, doc["standings"], doc["matrix"]


def test_a_league_on_ray_gives_the_local_results(tmp_path, ray_head):
    # Three entries (one an agent file, whose text travels with each match) on two maps: three
    # pairs, both seat orders, each map: 12 matches.
    entries = ["template-rs", "council:strong", str(EXPANDER)]
    local = gbely.league(entries, maps=2, rounds=30, jobs=1, db=tmp_path / "local.sqlite")
    remote = gbely.league(entries, maps=2, rounds=30, db=tmp_path / "ray.sqlite", backend="ray", address=ray_head)
    assert remote["run"]["backend"] == f"ray {ray_head}"
    assert remote["run"]["total"] == 12 and remote["run"]["played"] == 12
    assert results(remote) == results(local)
    # The strong Council wins every match it plays.
    strong = next(s for s in remote["standings"] if s["name"] == "council:strong")
    assert strong["rank"] == 1 and (strong["wins"], strong["losses"]) == (8, 0)


def test_the_command_line_on_ray_resumes_and_plays_only_an_added_entrys_pairings(tmp_path, ray_head):
    db = tmp_path / "league.sqlite"

    def league(*agents):
        out = subprocess.run(
            [sys.executable, "-m", "gbely", "league", *agents, "--maps", "seed:ray", "--rounds", "20",
             "--db", str(db), "--ray", ray_head, "--json"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path,
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    first = league("template-rs", "expander-rs")
    assert (first["run"]["total"], first["run"]["played"]) == (2, 2)
    # A third entry meets the two others in both seat orders: 4 new matches, 2 kept.
    second = league("template-rs", "expander-rs", "template")
    assert (second["run"]["total"], second["run"]["played"], second["run"]["already_played"]) == (6, 4, 2)


def test_backend_is_checked():
    with pytest.raises(ValueError, match="backend"):
        gbely.league(["template", "council"], backend="cluster")
    with pytest.raises(ValueError, match="address"):
        gbely.league(["template", "council"], address="127.0.0.1:1")


def test_an_address_where_no_head_runs_is_a_clear_error(tmp_path):
    port = free_port()  # nothing listens there
    with pytest.raises(gbely.Error, match=f"before it reached the cluster at `127.0.0.1:{port}`"):
        gbely.league(["template-rs", "council"], rounds=5, db=tmp_path / "l.sqlite", backend="ray",
                     address=f"127.0.0.1:{port}")
