"""From weights to a submission: `gbely pack`, and the learned example trained, packed, checked
and played (the CI smoke test of gbely-py/examples/learning/)."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gbely
from gbely._gbely import cli_main
from gbely.pack import LIMIT_BYTES, PackError, pack

ROOT = Path(__file__).resolve().parents[2]
LEARNING = ROOT / "gbely-py" / "examples" / "learning"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


AGENT = "import math\n\nWEIGHTS = None\n\n\ndef decide(stav):\n    return []\n"


def run_packed(path):
    ns = {}
    exec(Path(path).read_text(), ns)
    return ns


def test_weights_are_int8_per_array_and_come_back_shaped(tmp_path):
    # Largest magnitude 2.54 → steps of 0.02: 1.26 is step 63, 0.5 step 25, −2.54 step −127.
    (tmp_path / "w.json").write_text(json.dumps({"w": [[0.0, 1.26], [-2.54, 0.5]], "b": [0.3, -0.6, 0.0],
                                                 "s": 4.0, "t": [[[1.0], [2.0]], [[3.0], [4.0]]]}))
    (tmp_path / "a.py").write_text(AGENT)
    report = pack(tmp_path / "w.json", tmp_path / "a.py", tmp_path / "s.py", timing=False)
    w = run_packed(tmp_path / "s.py")["WEIGHTS"]
    assert w["w"] == [[0.0, pytest.approx(1.26)], [pytest.approx(-2.54), pytest.approx(0.5)]]
    # Steps of 0.6 / 127: 0.3 comes back within half a step.
    assert w["b"] == [pytest.approx(0.3, abs=0.3 / 127 + 1e-12), pytest.approx(-0.6), 0.0]
    assert w["s"] == pytest.approx(4.0)
    half = 4.0 / 127 / 2 + 1e-12  # steps of 4 / 127: each value within half a step
    assert np.allclose(w["t"], [[[1.0], [2.0]], [[3.0], [4.0]]], rtol=0, atol=half) and w["t"][1][1] == [4.0]
    assert [(n, s) for n, s, _ in report.arrays] == [("w", [2, 2]), ("b", [3]), ("s", []), ("t", [2, 2, 1])]
    assert report.bytes == (tmp_path / "s.py").stat().st_size
    text = (tmp_path / "s.py").read_text()
    assert "WEIGHTS = None" not in text and "import numpy" not in text


def test_float16_weights_keep_small_values_beside_large_ones(tmp_path):
    # 1000 and 0.001 in one array: int8 steps of 1000/127 ≈ 7.9 make 0.001 and 3.0 zero; float16
    # holds every value to its 11 significant bits (1000 exactly; 0.001 as 0.0010004043579101562,
    # the nearest half float: 2^-10 × 1.0244140625; 3.0 exactly).
    (tmp_path / "w.json").write_text(json.dumps({"w": [[1000.0, 0.001], [3.0, -0.5]], "s": 2.5}))
    (tmp_path / "a.py").write_text(AGENT)
    small = pack(tmp_path / "w.json", tmp_path / "a.py", tmp_path / "i8.py", timing=False)
    assert run_packed(tmp_path / "i8.py")["WEIGHTS"]["w"][0][1] == 0.0 and small.dtype == "int8"
    report = pack(tmp_path / "w.json", tmp_path / "a.py", tmp_path / "f16.py", timing=False, dtype="float16")
    w = run_packed(tmp_path / "f16.py")["WEIGHTS"]
    assert w == {"w": [[1000.0, 0.0010004043579101562], [3.0, -0.5]], "s": 2.5}
    assert report.dtype == "float16" and "5 weights in 2 arrays (float16)" in str(report)
    assert "float16 per array" in (tmp_path / "f16.py").read_text()
    (tmp_path / "big.json").write_text(json.dumps({"w": [70000.0]}))
    with pytest.raises(PackError, match="float16's range"):
        pack(tmp_path / "big.json", tmp_path / "a.py", tmp_path / "big.py", timing=False, dtype="float16")
    with pytest.raises(ValueError, match="dtype='float64'"):
        pack(tmp_path / "w.json", tmp_path / "a.py", tmp_path / "x.py", timing=False, dtype="float64")


def test_an_npz_policy_and_the_refusals(tmp_path):
    np.savez(tmp_path / "p.npz", w=np.arange(6, dtype=np.float32).reshape(2, 3) / 5)
    (tmp_path / "a.py").write_text(AGENT)
    pack(tmp_path / "p.npz", tmp_path / "a.py", tmp_path / "s.py", timing=False)
    # Steps of 1/127: 0.6 → 76, 0.8 → 102 (rounded), 1.0 → 127.
    assert run_packed(tmp_path / "s.py")["WEIGHTS"]["w"][1] == [pytest.approx(76 / 127), pytest.approx(102 / 127), 1.0]
    (tmp_path / "none.py").write_text("def decide(stav):\n    return []\n")
    with pytest.raises(PackError, match="WEIGHTS = None"):
        pack(tmp_path / "p.npz", tmp_path / "none.py", tmp_path / "s.py", timing=False)
    if hasattr(sys, "stdlib_module_names"):
        (tmp_path / "np.py").write_text("import numpy\nWEIGHTS = None\ndef decide(stav):\n    return []\n")
        with pytest.raises(PackError, match="outside the standard library.*numpy"):
            pack(tmp_path / "p.npz", tmp_path / "np.py", tmp_path / "s.py", timing=False)
    # Random bytes do not compress: 600 000 weights are far more than 512 KiB in base64.
    np.savez(tmp_path / "big.npz", w=np.random.default_rng(0).normal(size=600_000))
    with pytest.raises(PackError, match=f"limit is {LIMIT_BYTES}"):
        pack(tmp_path / "big.npz", tmp_path / "a.py", tmp_path / "s.py", timing=False)
    (tmp_path / "bad.json").write_text(json.dumps({"w": [[1.0], [2.0, 3.0]]}))
    with pytest.raises(PackError, match="rows of different shapes"):
        pack(tmp_path / "bad.json", tmp_path / "a.py", tmp_path / "s.py", timing=False)


def _inflating_npz(path, count, declared_shape=None):
    """A ``numpy.savez``-style archive of one float64 array of ``count`` zeros, written in
    chunks: ~1 MB on disk for 100 M zeros (800 MB inflated). ``declared_shape`` is what its
    header claims (default: the real shape)."""
    import zipfile

    from numpy.lib import format as npy

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z, z.open("w.npy", "w", force_zip64=True) as f:
        shape = declared_shape if declared_shape is not None else (count,)
        npy.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": shape})
        chunk = bytes(8 << 20)
        left = count * 8
        while left > 0:
            f.write(chunk[:min(left, len(chunk))])
            left -= len(chunk)


PACK_MEASURED = """
import resource, sys
from gbely.pack import main
rc = main(sys.argv[1:])
print("maxrss_kb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
sys.exit(rc)
"""


def _pack_capped(args, cap=3 << 30):
    """``gbely pack ARGS`` in a Python of its own whose address space is capped (a reader that
    inflated the archive fails there, not on the machine); its exit code, output and peak
    resident memory in bytes."""
    import os
    import resource

    def cap_it():
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", PACK_MEASURED, *args], capture_output=True, text=True,
                         timeout=300, preexec_fn=cap_it, env=env, check=False)
    peak = [int(w.split()[1]) * 1024 for w in out.stdout.splitlines() if w.startswith("maxrss_kb")]
    return out.returncode, out.stdout + out.stderr, peak[0] if peak else None


@pytest.mark.skipif(sys.platform != "linux", reason="address-space cap and ru_maxrss in KiB: Linux")
def test_an_archive_that_inflates_past_the_budget_is_refused_in_little_memory(tmp_path):
    # Regression (issue 36, row 10): a 1.5 MB .npz that inflates made `gbely pack` reach 5.8 GB
    # before a MemoryError. 100 M float64 zeros: 800 MB inflated, 25 times the 4 M weights
    # pack reads; refused from the array's header, before its data is inflated.
    (tmp_path / "a.py").write_text(AGENT)
    _inflating_npz(tmp_path / "bomb.npz", 100_000_000)
    assert (tmp_path / "bomb.npz").stat().st_size < 2 << 20
    rc, text, peak = _pack_capped([str(tmp_path / "bomb.npz"), str(tmp_path / "a.py"), "-o", str(tmp_path / "s.py"),
                                   "--no-timing"])
    assert rc == 1, text
    assert "array 'w' has 100000000 weights, more than the 4000000 pack reads" in text, text
    assert peak is not None and peak < 300 << 20, (peak, text)
    assert not (tmp_path / "s.py").exists()
    # A header that claims fewer bytes than its zip entry declares... and one whose entry
    # declares fewer than the header needs: refused, saying which.
    _inflating_npz(tmp_path / "short.npz", 1000, declared_shape=(2000,))
    with pytest.raises(PackError, match="cut short|declares"):
        pack(tmp_path / "short.npz", tmp_path / "a.py", tmp_path / "s.py", timing=False)
    # Within the budget, the same kind of archive packs (zeros compress to almost nothing).
    _inflating_npz(tmp_path / "zeros.npz", 1000)
    pack(tmp_path / "zeros.npz", tmp_path / "a.py", tmp_path / "s.py", timing=False)
    assert run_packed(tmp_path / "s.py")["WEIGHTS"]["w"] == [0.0] * 1000


def test_a_policy_or_agent_that_is_a_pipe_or_a_device_is_refused_unopened(tmp_path):
    import os

    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    (tmp_path / "a.py").write_text(AGENT)
    (tmp_path / "w.json").write_text(json.dumps({"w": [1.0]}))
    os.mkfifo(tmp_path / "pipe.json")
    os.symlink("/dev/zero", tmp_path / "zero.npz")
    os.mkfifo(tmp_path / "pipe.py")
    for policy, agent in [("pipe.json", "a.py"), ("zero.npz", "a.py"), ("w.json", "pipe.py")]:
        with pytest.raises(PackError, match="not a regular file"):
            pack(tmp_path / policy, tmp_path / agent, tmp_path / "s.py", timing=False)


def test_the_learned_example_trains_packs_passes_the_check_and_plays_a_full_match(tmp_path):
    out = subprocess.run([sys.executable, str(LEARNING / "train.py"), "--quick", "--out", str(tmp_path / "l")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    sub = tmp_path / "l" / "submission.py"
    assert sub.stat().st_size <= LIMIT_BYTES
    # `gbely pack` on the command line, timed on the reference map and a 90×90 final map.
    packed = subprocess.run([sys.executable, "-m", "gbely", "pack", str(tmp_path / "l" / "policy.npz"),
                             str(LEARNING / "policy_agent.py"), "-o", "again.py", "--rounds", "40"],
                            capture_output=True, text=True, timeout=600)
    assert packed.returncode == 0, packed.stdout + packed.stderr
    assert "slowest decision on gbely (60×60)" in packed.stdout
    assert "slowest decision on a 90×90 final map" in packed.stdout
    assert Path("again.py").read_text() == sub.read_text()  # packing is deterministic
    # The judge's view: its own process, a full match against the Council, no violations.
    check = subprocess.run([sys.executable, "-m", "gbely", "check", str(sub), "--rounds", "150", "--json"],
                           capture_output=True, text=True, timeout=600)
    doc = json.loads(check.stdout)
    assert check.returncode == 0 and doc["ok"], check.stdout + check.stderr
    assert doc["violations"] == 0 and doc["decision_seconds"]["rounds"] == 150
    assert doc["decision_seconds"]["max"] < 2.0
    r = gbely.play(str(sub), str(ROOT / "agents" / "my_agent.py"), rounds=150)
    assert r.violations == [0, 0] and r.last_round == 149


def test_the_rust_command_line_runs_pack_with_the_users_python(tmp_path, monkeypatch):
    (tmp_path / "w.json").write_text(json.dumps({"w": [1.0]}))
    (tmp_path / "a.py").write_text(AGENT)
    monkeypatch.setenv("GBELY_PYTHON", sys.executable)
    code = cli_main(["gbely", "pack", str(tmp_path / "w.json"), str(tmp_path / "a.py"), "-o", "s.py",
                     "--no-timing"])
    assert code == 0 and run_packed("s.py")["WEIGHTS"] == {"w": [1.0]}
    code = cli_main(["gbely", "pack", str(tmp_path / "w.json"), str(tmp_path / "a.py"), "-o", "h.py",
                     "--no-timing", "--dtype", "float16"])
    assert code == 0 and "float16 per array" in Path("h.py").read_text() and run_packed("h.py")["WEIGHTS"] == {"w": [1.0]}
    assert cli_main(["gbely", "pack", str(tmp_path / "w.json"), str(tmp_path / "missing.py"), "-o", "t.py",
                     "--no-timing"]) == 1


def test_gbely_works_without_numpy_and_gbely_env_says_what_to_install():
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "import gbely\n"
        "assert gbely.play(lambda stav: [], rounds=3).cells == [1, gbely.play(lambda s: [], rounds=3).cells[1]]\n"
        "try:\n"
        "    import gbely.env\n"
        "except ImportError as e:\n"
        "    assert \"pip install 'gbely[env]'\" in str(e), e\n"
        "    print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr
