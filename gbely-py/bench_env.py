"""Speed of the learning environments (run from the repository root after `pip install ./gbely-py[env]`):

    python gbely-py/bench_env.py [--quick] [--n N]

Prints, on the reference map against the Council with random legal actions:

* the VectorEnv's cost per match-round against the engine's own round for the same actions (the
  learner's observation, the Council's observation and decision, production and resolution
  through a plain Session; target: at most 2×), on one thread;
* the VectorEnv's throughput on 1 and 2 threads (target: ≥ 1.8× on 2 free cores);
* a 150-round GbelyEnv episode without a replay against a plain `gbely.play` of a trivial
  callable (target: within 3×), with the time to draw the random actions shown apart.

`--count ROUNDS --replay 0|1` is for `tools/instructions` (under callgrind): it records ROUNDS
rounds of random legal actions for 16 matches and, with `--replay 1`, plays them again in a fresh
VectorEnv; the difference of the two runs' instructions is what the steps cost.
"""
import argparse
import os
import sys
import time

import numpy as np

import gbely
from gbely._gbely import engine_round_seconds
from gbely.env import GbelyEnv, VectorEnv


def random_legal(rng, mask):
    """A legal kind per cell (drawn from the mask) and a random fraction; works batched."""
    kind = (mask * rng.random(mask.shape, dtype=np.float32)).argmax(axis=-1).astype(np.int8)
    return kind, rng.random(mask.shape[:-1], dtype=np.float32)


def record_actions(n, rounds, seed):
    """Random legal actions for n matches over `rounds` rounds, as a VectorEnv plays them."""
    rng = np.random.default_rng(seed)
    venv = VectorEnv(n, rounds=rounds, threads=1)
    obs, info = venv.reset()
    kinds, fractions = [], []
    for _ in range(rounds):
        k, f = random_legal(rng, info["action_mask"])
        kinds.append(k)
        fractions.append(f)
        obs, _, _, _, info = venv.step({"kind": k, "fraction": f})
    return np.stack(kinds), np.stack(fractions)


def vector_seconds(kinds, fractions, threads, rounds, repeat):
    """Best wall-clock seconds and the CPU seconds (all threads) of that run."""
    best = (float("inf"), 0.0)
    for _ in range(repeat):
        venv = VectorEnv(kinds.shape[1], rounds=rounds, threads=threads)
        venv.reset()
        t, c = time.perf_counter(), time.process_time()
        for k, f in zip(kinds, fractions):
            venv.step({"kind": k, "fraction": f})
        best = min(best, (time.perf_counter() - t, time.process_time() - c))
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=16, help="matches in the VectorEnv")
    ap.add_argument("--count", type=int, metavar="ROUNDS", help="for tools/instructions (see above)")
    ap.add_argument("--replay", type=int, choices=(0, 1), default=1)
    a = ap.parse_args()
    if a.count is not None:
        kinds, fractions = record_actions(a.n, a.count, seed=1)
        venv = VectorEnv(a.n, rounds=a.count, threads=1)
        venv.reset()
        if a.replay:
            for k, f in zip(kinds, fractions):
                venv.step({"kind": k, "fraction": f})
        print(f"callgrind-total: {a.n * a.count} match-rounds")
        return 0
    rounds = 40 if a.quick else 150
    repeat = 1 if a.quick else 3
    n = a.n
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f} (thread scaling needs idle cores); reference map, the Council, random legal actions; "
          f"{n} matches × {rounds} rounds")

    kinds, fractions = record_actions(n, rounds, seed=1)
    engine = min(engine_round_seconds("gbely", rounds, [None, "council"], 0, kinds, fractions)[0]
                 for _ in range(repeat))
    one, cpu_one = vector_seconds(kinds, fractions, 1, rounds, repeat)
    two, cpu_two = vector_seconds(kinds, fractions, 2, rounds, repeat)
    per = n * rounds
    print(f"engine's own round:        {engine / per * 1e6:8.1f} µs per match-round")
    print(f"VectorEnv, 1 thread:       {one / per * 1e6:8.1f} µs per match-round  "
          f"({one / engine:4.2f}× the engine; target ≤ 2×)")
    print(f"VectorEnv, 2 threads:      {two / per * 1e6:8.1f} µs per match-round  "
          f"(throughput {one / two:4.2f}× of 1 thread; target ≥ 1.8× on 2 free cores)")
    # On a busy machine the wall clock cannot show scaling; the CPU time says what two free
    # cores would give: the same work spread over two threads, plus what threading costs.
    print(f"  CPU time per match-round: {cpu_one / per * 1e6:.1f} µs on 1 thread, {cpu_two / per * 1e6:.1f} µs "
          f"on 2 (on 2 free cores ≈ {2 * cpu_one / cpu_two:4.2f}× throughput, if the work splits evenly)")

    # GbelyEnv without a replay against gbely.play with a trivial callable.
    episodes = 1 if a.quick else 5
    env = GbelyEnv(rounds=150)
    rng = np.random.default_rng(2)
    stepping = drawing = 0.0
    for _ in range(episodes):
        obs, info = env.reset()
        done = False
        while not done:
            t = time.perf_counter()
            kind, fraction = random_legal(rng, info["action_mask"])
            t1 = time.perf_counter()
            obs, r, done, _, info = env.step({"kind": kind, "fraction": fraction})
            t2 = time.perf_counter()
            drawing += t1 - t
            stepping += t2 - t1
    t = time.perf_counter()
    for _ in range(episodes):
        gbely.play(lambda stav: [], rounds=150)
    play = time.perf_counter() - t
    print(f"gbely.play, trivial callable: {play / episodes * 1e3:7.1f} ms per 150-round match")
    print(f"GbelyEnv episode, no replay:  {stepping / episodes * 1e3:7.1f} ms stepping "
          f"({stepping / play:4.2f}× play; target ≤ 3×) + {drawing / episodes * 1e3:6.1f} ms drawing "
          f"random legal actions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
