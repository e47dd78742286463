"""Speed of in-process Python agents (run from the repository root after `pip install ./gbely-py`):

    python gbely-py/bench.py [--quick]

Prints matches per second for a trivial callable against the Council on the reference map,
the engine's share of each round (everything but the agent's own Python), and the cost of
building the observation dict at full territory; and the time to turn a 150-round replay into a
behaviour-cloning dataset (`gbely.Replay.dataset`: re-simulation, built-in players decided again,
observation arrays and labels).
"""
import os
import sys
import tempfile
import time

import gbely


def main():
    quick = "--quick" in sys.argv
    n = 3 if quick else 20
    calls = [0.0]

    def trivial(stav):
        t = time.perf_counter()
        out = []
        calls[0] += time.perf_counter() - t
        return out

    start = time.perf_counter()
    for _ in range(n):
        gbely.play(trivial, rounds=150)
    total = time.perf_counter() - start
    print(f"trivial callable vs council: {n / total:6.1f} matches/s, "
          f"{total / n / 150 * 1e3:6.3f} ms per round in all (engine, Council and the dict)")

    m = gbely.Match(map="gbely", rounds=150, council=[])
    reps = 20 if quick else 200
    t = time.perf_counter()
    for _ in range(reps):
        m.observation(1)
    small = (time.perf_counter() - t) / reps
    print(f"observation dict, 1 own cell:        {small * 1e3:6.3f} ms")

    # Seat 0 idles, the Council takes as much of the map as it can in 149 rounds.
    big = gbely.Match(map="gbely", rounds=150, council=[1])
    while big.round < 149:
        big.advance()
    cells = big.figures()["cells"][1]
    t = time.perf_counter()
    for _ in range(reps):
        big.observation(1)
    full = (time.perf_counter() - t) / reps
    print(f"observation dict, {cells} own cells:  {full * 1e3:6.3f} ms")

    # A replay as data: expander-rs against the Council, 150 rounds, both regenerated on reading.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "replay.json.gz")
        gbely.play("expander-rs", "council", rounds=150, replay=path)
        replay = gbely.Replay.load(path)
        reps = 2 if quick else 10
        for seat in (0, 1):
            best = float("inf")
            for _ in range(reps):
                t = time.perf_counter()
                data = replay.dataset(seat)
                best = min(best, time.perf_counter() - t)
            print(f"Replay.dataset, 150 rounds, seat {seat} ({replay.seats[seat]['name']}): "
                  f"{best * 1e3:6.1f} ms ({len(data['kind'])} rounds, arrays of {sum(a.nbytes for a in data.values()) / 1e6:.1f} MB)")
        best = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            replay.state(149)
            best = min(best, time.perf_counter() - t)
        print(f"  of which re-simulating the 150 rounds alone (Replay.state(149)): {best * 1e3:6.1f} ms")


if __name__ == "__main__":
    main()
