"""Trains the learned example agent by imitating the expander, then packs it into a submission.

    pip install 'gbely[env]'          # numpy, gymnasium (pettingzoo is not needed here)
    python gbely-py/examples/learning/train.py --out learned/          # ≈ a few minutes on one core
    python gbely-py/examples/learning/train.py --quick --out /tmp/l    # the CI smoke test: seconds

Behaviour cloning with DAgger (numpy only): matches are played in gbely.env.GbelyEnv against
the Council, the expander (agents/expander.py) labels every own cell of every observation with
the action it takes from there (the first of its commands from that cell: kind and fraction of
the cell's units), and a small network (policy_agent.py: 53 features, 32 tanh units, ten action
scores and a fraction) learns to do the same. After the first pass the network itself plays
and the expander labels what it meets. The weights go to POLICY.npz, `gbely pack` writes
submission.py, and the packed agent plays the Council and the template.
"""
import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

import gbely
from gbely.env import GbelyEnv
from gbely.pack import pack

HERE = Path(__file__).resolve().parent
# The example agents of the repository (agents/expander.py teaches, agents/my_agent.py is played).
AGENTS = HERE.parents[2] / "agents"


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


agent = load(HERE / "policy_agent.py", "policy_agent")
expander = load(AGENTS / "expander.py", "expander_teacher")


def label(stav, cells):
    """The expander's action per cell: kind (0 stay, 1–4 MOVE, 5–8 ATTACK, 9 FORTIFY) and the
    fraction of the cell's units it sends."""
    answer = expander.decide(stav)
    commands = answer["prikazy"] if isinstance(answer, dict) else answer
    units = {p["id"]: p["jednotky"] for p in stav["moje_pola"]}
    first = {}
    for c in commands:
        src = c.get("z") or c.get("pole")
        if src not in first:
            first[src] = c
    kinds, fractions = [], []
    for cell, ids, _ in cells:
        c = first.get(cell)
        if c is None:
            kinds.append(0)
            fractions.append(0.0)
            continue
        amount = c.get("pocet", c.get("investicia", 0))
        if c["typ"] == "FORTIFY":
            kind = 9
        else:
            kind = (1 if c["typ"] == "MOVE" else 5) + ids.index(c["na"])
        kinds.append(kind)
        fractions.append(min(1.0, amount / units[cell]))
    return kinds, fractions, answer


def collect(maps, rounds, weights, data):
    """Plays a match per map (the expander, or the network when `weights` are given) and adds
    every (features, expander's label) pair to `data`."""
    for m in maps:
        env = GbelyEnv(map=m, rounds=rounds, observation_dict=True)
        obs, info = env.reset()
        done = False
        while not done:
            stav = info["observation"]
            cells = agent.features(stav)
            kinds, fractions, teacher = label(stav, cells)
            data[0].extend(x for _, _, x in cells)
            data[1].extend(kinds)
            data[2].extend(fractions)
            action = teacher if weights is None else agent.decide(stav, weights)
            obs, reward, done, _, info = env.step(action)
        print(f"  {m}: {info['share']:.2f} % of the map ({'expander' if weights is None else 'network'} playing)")


def train(data, epochs, hidden=32, seed=0, lr=3e-3, batch=2048):
    """Softmax over the ten kinds plus a squared error on the fraction where the kind is not stay."""
    x = np.asarray(data[0], np.float32)
    k = np.asarray(data[1], np.int64)
    f = np.asarray(data[2], np.float32)
    rng = np.random.default_rng(seed)
    n_in = x.shape[1]
    p = {"w1": rng.normal(0, 1 / np.sqrt(n_in), (hidden, n_in)), "b1": np.zeros(hidden),
         "w2": rng.normal(0, 1 / np.sqrt(hidden), (10, hidden)), "b2": np.zeros(10),
         "w3": rng.normal(0, 1 / np.sqrt(hidden), hidden), "b3": np.zeros(())}
    m = {key: np.zeros_like(v) for key, v in p.items()}
    v = {key: np.zeros_like(val) for key, val in p.items()}
    step = 0
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        loss_sum = 0.0
        for start in range(0, len(x), batch):
            idx = order[start:start + batch]
            xb, kb, fb = x[idx], k[idx], f[idx]
            h = np.tanh(xb @ p["w1"].T + p["b1"])
            logits = h @ p["w2"].T + p["b2"]
            logits -= logits.max(axis=1, keepdims=True)
            prob = np.exp(logits)
            prob /= prob.sum(axis=1, keepdims=True)
            z = h @ p["w3"] + p["b3"]
            frac = 1 / (1 + np.exp(-z))
            acts = (kb != 0).astype(np.float32)
            nb = len(idx)
            loss_sum += float(-np.log(prob[np.arange(nb), kb] + 1e-9).sum() + (acts * (frac - fb) ** 2).sum())
            dlogits = prob
            dlogits[np.arange(nb), kb] -= 1
            dlogits /= nb
            dz = acts * 2 * (frac - fb) * frac * (1 - frac) / nb
            g = {"w2": dlogits.T @ h, "b2": dlogits.sum(0), "w3": h.T @ dz, "b3": dz.sum()}
            dh = dlogits @ p["w2"] + np.outer(dz, p["w3"])
            dpre = dh * (1 - h ** 2)
            g["w1"] = dpre.T @ xb
            g["b1"] = dpre.sum(0)
            step += 1
            for key in p:  # Adam
                m[key] = 0.9 * m[key] + 0.1 * g[key]
                v[key] = 0.999 * v[key] + 0.001 * g[key] ** 2
                p[key] = p[key] - lr * (m[key] / (1 - 0.9 ** step)) / (np.sqrt(v[key] / (1 - 0.999 ** step)) + 1e-8)
        print(f"  epoch {epoch + 1}: loss {loss_sum / len(x):.4f} over {len(x)} cells")
    return p


def as_lists(p):
    return {k: (float(v) if np.ndim(v) == 0 else v.tolist()) for k, v in p.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="learned", help="folder for policy.npz and submission.py")
    ap.add_argument("--quick", action="store_true", help="a smoke test: one short match, few epochs")
    ap.add_argument("--dagger", type=int, default=1, help="passes with the network playing (default 1)")
    ap.add_argument("--eval", action="store_true", help="play the packed agent against the Council and the template")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rounds = 30 if a.quick else 150
    maps = ["gbely"] if a.quick else ["gbely", "seed:learn-1", "seed:learn-2", "seed:learn-3"]
    epochs = 3 if a.quick else 10
    t = time.perf_counter()
    data = ([], [], [])
    print("the expander plays, the expander labels")
    collect(maps, rounds, None, data)
    p = train(data, epochs)
    for d in range(0 if a.quick else a.dagger):
        print(f"DAgger pass {d + 1}: the network plays, the expander labels")
        collect(maps, rounds, as_lists(p), data)
        p = train(data, epochs, seed=d + 1)
    np.savez(out / "policy.npz", **p)
    report = pack(out / "policy.npz", HERE / "policy_agent.py", out / "submission.py",
                  timing=not a.quick, rounds=rounds)
    print(report)
    print(f"trained and packed in {time.perf_counter() - t:.0f} s")
    if a.eval:
        sub = str(out / "submission.py")
        for opponent in ("council", str(AGENTS / "my_agent.py")):
            r = gbely.play(sub, opponent, map="gbely")
            print(f"packed agent vs {Path(opponent).name}: {r.shares[0]:.2f} % against {r.shares[1]:.2f} % "
                  f"({r.violations[0]} violations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
