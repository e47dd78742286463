"""A learned agent: a small neural network picks each cell's action (see gbely-py/examples/learning/).

Standard library only: `gbely pack` puts the trained weights in place of the line
`WEIGHTS = None` below and writes the submission. For each own cell with units, the network
reads the cell and its four neighbours as the observation shows them (features()), and gives
scores for the ten actions of gbely.env (stay, MOVE N/S/W/E, ATTACK N/S/W/E, FORTIFY) and the
fraction of the cell's units to send; the best legal action is played, turned into a command by
gbely.codec exactly as the environment turns a per-cell action into one (`gbely pack` inlines
the codec, so the submission still needs only the standard library).
"""
import math
from collections import deque
from operator import mul

import pravidla
from gbely import codec

AGENT_NAME = "learned"

WEIGHTS = None

#: Features per cell: 9 of the cell, 11 per neighbour (north, south, west, east).
N_FEATURES = 9 + 4 * 11
TERRAIN = {"luka": (1.0, 0.0, 0.0), "vrch": (0.0, 1.0, 0.0), "rieka": (0.0, 0.0, 1.0)}
NONE = (0.0,) * 11


def need(pole):
    """The smallest whole force that surely takes a foreign cell (rounding hides up to 0.05)."""
    bonus = pravidla.TERENNY_BONUS[pole["typ"]]
    return math.floor((pole["posadka"] + 0.05) * bonus + pole["opevnenie"] + 0.05) + 1


def neighbour_ids(cell_id):
    r, c = cell_id[1:].split("_")
    r, c = int(r), int(c)
    return (f"P{r - 1:02}_{c:02}", f"P{r + 1:02}_{c:02}", f"P{r:02}_{c - 1:02}", f"P{r:02}_{c + 1:02}")


def features(stav):
    """For each own cell with units: (its id, its neighbours' ids N/S/W/E, its feature vector).
    Only what the observation shows; the same function serves training and the submission."""
    own = {p["id"]: p for p in stav["moje_pola"]}
    seen = {p["id"]: p for p in stav["viditelne_susedne_pola"]}
    # Steps to the front through own cells (0: touches a foreign cell).
    dist = {pid: 0 for pid, p in own.items() if any(s in seen for s in p["susedia"])}
    queue = deque(dist)
    while queue:
        pid = queue.popleft()
        for s in own[pid]["susedia"]:
            if s in own and s not in dist:
                dist[s] = dist[pid] + 1
                queue.append(s)
    kolo = stav["kolo"] / 150.0
    base = stav["moja_zakladna"]
    out = []
    for p in stav["moje_pola"]:
        u = p["jednotky"]
        if u <= 0:
            continue
        d = dist.get(p["id"], 30)
        x = [1.0, math.log1p(u) / 5.0, p["opevnenie"] / 10.0, *TERRAIN[p["typ"]],
             1.0 if p["id"] == base else 0.0, min(d, 20) / 20.0, kolo]
        ids = neighbour_ids(p["id"])
        for nid in ids:
            if nid in own:
                q = own[nid]
                closer = 1.0 if dist.get(nid, 30) < d else 0.0
                x += (1.0, 1.0, 0.0, 0.0, *TERRAIN[q["typ"]], math.log1p(q["jednotky"]) / 5.0, 0.0, 0.0, closer)
            elif nid in seen:
                q = seen[nid]
                k = need(q)
                neutral = q["vlastnik"] == "hbp"
                x += (1.0, 0.0, 1.0 if neutral else 0.0, 0.0 if neutral else 1.0, *TERRAIN[q["typ"]],
                      math.log1p(q["posadka"]) / 5.0, min(k / (u + 1.0), 4.0) / 4.0, 1.0 if u >= k else 0.0, 0.0)
            else:
                x += NONE
        out.append((p["id"], ids, x))
    return out


def legal(own, seen, ids):
    """Which of the ten actions a cell may take (a finalist may not attack another finalist)."""
    ok = [True] + [False] * 8 + [True]
    for k, nid in enumerate(ids):
        if nid in own:
            ok[1 + k] = True
        elif nid in seen and seen[nid]["vlastnik"] in ("hbp", "zastupitelstvo"):
            ok[5 + k] = True
    return ok


def forward(w, x):
    """Action scores and the fraction: a hidden layer of tanh units, then two heads."""
    h = [math.tanh(sum(map(mul, row, x)) + b) for row, b in zip(w["w1"], w["b1"])]
    scores = [sum(map(mul, row, h)) + b for row, b in zip(w["w2"], w["b2"])]
    z = sum(map(mul, w["w3"], h)) + w["b3"]
    return scores, 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def decide(stav, weights=None):
    w = weights or WEIGHTS
    if w is None:
        return []  # not packed yet
    own = {p["id"]: p for p in stav["moje_pola"]}
    seen = {p["id"]: p for p in stav["viditelne_susedne_pola"]}
    prikazy = []
    for cell, ids, x in features(stav):
        scores, fraction = forward(w, x)
        ok = legal(own, seen, ids)
        kind = max((s, k) for k, s in enumerate(scores) if ok[k])[1]
        command = codec.command(own[cell], kind, fraction)
        if command is not None:
            prikazy.append(command)
    return {"prikazy": prikazy}
