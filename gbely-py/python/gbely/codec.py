"""The observation and action coding of :mod:`gbely.env`, in the standard library only.

One codec for training and submission: the learning environments turn a seat's §5 observation
into arrays and a per-cell action into §6 commands in Rust; this module does exactly the same in
plain Python, so an agent file (which gets only the §5 dict, and only the standard library and
``pravidla`` at the judge) sees what its policy saw in training and sends what the environment
sent. ``gbely pack`` inlines this module into a submission that imports it
(``from gbely import codec`` or ``from gbely.codec import ...``). The environment is tested
against it cell for cell (``tests/test_codec.py``).

Everything is a flat row-major list over a grid of ``height × width`` cells (index
``row × width + col``); the map sits at the top-left of the grid, and cells beyond the map (a grid
larger than the map: padding) look exactly like unseen cells.

**Observation** (:func:`observe`), the arrays of ``GbelyEnv`` as lists:

* ``terrain``: -1 unseen, 0 ``luka``, 1 ``vrch``, 2 ``rieka``;
* ``owner``: -1 unseen, 0 ``hbp``, 1 own, 2 ``zastupitelstvo``, ``k + 2`` for ``armada_k``
  (``armada`` — seat 0 in the Council's view of a final — is 3);
* ``units`` (own ``jednotky``, visible ``posadka``) and ``fortification`` (``opevnenie``): the
  §5 values (rounded to tenths) as the environment stores them, float32: each is the Python
  float of the nearest float32 (``45.4`` becomes ``45.400001525878906``), 0.0 unseen;
* ``visible`` (1 own or visible), ``base`` (1 on ``moja_zakladna``), ``round`` (``kolo``, an int);
* ``action_mask``: 10 entries per cell (index ``cell × 10 + kind``), 1 where the kind is legal
  from what the seat sees: stay always; from an own cell with units above 0, FORTIFY, MOVE to an
  own neighbour, ATTACK a foreign neighbour (in a final, for a finalist, only ``hbp`` and
  ``zastupitelstvo``: rules §9).

**Actions** (:func:`commands`, :func:`command`): kinds 0 stay, 1–4 MOVE north/south/west/east,
5–8 ATTACK north/south/west/east, 9 FORTIFY. An own cell with a kind above 0 and a fraction above
0 (NaN counts as 0) sends its observed units ``jednotky`` when the fraction is 1 or more, else
``fraction × jednotky`` with the fraction first rounded to float32 (as the environment's float32
arrays hold it) and the product taken in float64. An amount of 0, or a direction off the map, is
no command. One command per own cell, in row-major order (the order of ``moje_pola``).

>>> stav = {"kolo": 3, "moja_zakladna": "P01_00",
...         "moje_pola": [{"id": "P01_00", "typ": "luka", "jednotky": 45.4, "opevnenie": 0.0,
...                        "susedia": ["P00_00", "P01_01"]}],
...         "viditelne_susedne_pola": [
...             {"id": "P00_00", "vlastnik": "hbp", "posadka": 3.0, "opevnenie": 0.0, "typ": "vrch"},
...             {"id": "P01_01", "vlastnik": "zastupitelstvo", "posadka": 7.5, "opevnenie": 0.3,
...              "typ": "rieka"}]}
>>> obs = observe(stav, 2, 2)
>>> obs["terrain"], obs["owner"], obs["units"][2], obs["round"]
([1, -1, 0, 2], [0, -1, 1, 2], 45.400001525878906, 3)
>>> obs["action_mask"][20:30]  # P01_00: stay, ATTACK north and east, FORTIFY
[1, 0, 0, 0, 0, 1, 0, 0, 1, 1]
>>> commands(stav, [0, 0, 8, 0], [0.0, 0.0, 1.0, 0.0], width=2)
[{'typ': 'ATTACK', 'z': 'P01_00', 'na': 'P01_01', 'pocet': 45.4}]
>>> command(stav["moje_pola"][0], 9, 0.5), command(stav["moje_pola"][0], 3, 1.0)  # west: off the map
({'typ': 'FORTIFY', 'pole': 'P01_00', 'investicia': 22.7}, None)

**Training channels** (:func:`channels`, :func:`front_distance`): the features a policy trained on
``gbely.wrappers.MaskedCells`` reads, in the standard library, so that one definition serves
training (numpy, ``gbely.wrappers.channels`` / ``front_distance``) and the submission (these):
the 14 channels of :data:`CHANNELS`, each a flat list of float32 values (as Python floats)
equal to the numpy ones (``log_units`` within an ulp of float32: ``math.log1p`` and numpy's
float32 ``log1p`` may round differently), and the steps from each own cell to the front.

>>> ch = channels(obs, 2, 2)
>>> [ch[CHANNELS.index(k)][2] for k in ("own", "luka", "units", "base", "round")]
[1.0, 1.0, 4.5400004386901855, 1.0, 0.019999999552965164]
>>> ch[CHANNELS.index("defence")][3]  # P01_01: (7.5 × 1.3 + 0.3) / 10 in float32
1.0049999952316284
>>> front_distance(obs, 2, 2)  # P01_00 touches foreign cells: 0; the rest is not own
[-1, -1, 0, -1]
"""
import math
import struct
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = ["KINDS", "TERRAIN", "CHANNELS", "observe", "channels", "front_distance", "commands", "command", "amount",
           "owner_code", "parse_id", "cell_id", "neighbour", "float32"]

# The codes below are literals, as this module is standard-library only (it is inlined into
# submissions); tests/test_package.py holds them to the environments' one table,
# gbely._gbely.OBS_SCHEMA.
#: Actions per cell.
KINDS = 10
#: Terrain codes of the ``terrain`` array.
TERRAIN = {"luka": 0, "vrch": 1, "rieka": 2}
#: Owner codes: unseen, the seat itself, the Council.
UNSEEN, OWN, COUNCIL = -1, 1, 2
#: (row, col) steps toward north, south, west, east (the order of kinds 1–4 and 5–8).
DIRECTIONS = ((-1, 0), (1, 0), (0, -1), (0, 1))

_F32 = struct.Struct("<f")

#: The channels of ``gbely.wrappers.MaskedCells`` (and :func:`channels`), in order; the table is
#: in docs/learning.md. tests/test_codec.py holds this tuple, and every channel, to the numpy ones.
CHANNELS = ("own", "neutral", "council", "armies", "visible", "luka", "vrch", "rieka", "units", "log_units",
            "fortification", "defence", "base", "round")
#: ``TERENNY_BONUS`` (rules §2) by terrain code, and ``POCET_KOL``: pravidla's values, as literals
#: (held to pravidla by tests/test_codec.py).
BONUS = (1.0, 1.5, 1.3)
ROUNDS = 150


def float32(x: float) -> float:
    """The nearest float32 to ``x``, as a Python float (what a float32 array holds).

    >>> float32(45.4), float32(0.5), float32(1e39)
    (45.400001525878906, 0.5, inf)
    """
    try:
        y: float = _F32.unpack(_F32.pack(x))[0]
        return y
    except OverflowError:  # beyond float32's range: numpy makes it infinite
        return float("inf") if x > 0 else float("-inf")


def owner_code(vlastnik: str) -> int:
    """The ``owner`` code of a foreign owner's wire name (``hbp``, ``zastupitelstvo``,
    ``armada``, ``armada_2`` … ``armada_8``).

    >>> owner_code("hbp"), owner_code("zastupitelstvo"), owner_code("armada"), owner_code("armada_8")
    (0, 2, 3, 10)
    """
    if vlastnik == "hbp":
        return 0
    if vlastnik == "zastupitelstvo":
        return COUNCIL
    if vlastnik == "armada":
        return 3
    if vlastnik.startswith("armada_") and vlastnik[7:].isdigit() and 2 <= int(vlastnik[7:]) <= 8:
        return int(vlastnik[7:]) + 2
    raise ValueError("unknown owner %r" % (vlastnik,))


def parse_id(cell: str) -> Tuple[int, int]:
    """The (row, col) of a cell id: ``P{row:02}_{col:02}``, more digits from 100 on.

    >>> parse_id("P57_02"), parse_id("P104_07")
    ((57, 2), (104, 7))
    """
    if not cell.startswith("P"):
        raise ValueError("not a cell id: %r" % (cell,))
    r, sep, c = cell[1:].partition("_")
    if not sep or not r.isdigit() or not c.isdigit():
        raise ValueError("not a cell id: %r" % (cell,))
    return int(r), int(c)


def cell_id(row: int, col: int) -> str:
    """The id of the cell at (row, col).

    >>> cell_id(57, 2), cell_id(104, 7)
    ('P57_02', 'P104_07')
    """
    return "P%02d_%02d" % (row, col)


def neighbour(cell: Mapping[str, Any], direction: int) -> Optional[str]:
    """The id of an own cell's neighbour toward ``direction`` (0 north, 1 south, 2 west, 3 east),
    or ``None`` off the map (the neighbours on the map are the cell's ``susedia``).

    >>> cell = {"id": "P00_05", "susedia": ["P01_05", "P00_04", "P00_06"]}
    >>> neighbour(cell, 0), neighbour(cell, 1), neighbour(cell, 3)
    (None, 'P01_05', 'P00_06')
    """
    r, c = parse_id(cell["id"])
    dr, dc = DIRECTIONS[direction]
    if r + dr < 0 or c + dc < 0:
        return None
    to = cell_id(r + dr, c + dc)
    return to if to in cell["susedia"] else None


def amount(jednotky: float, fraction: float) -> Optional[float]:
    """The units a fraction of an own cell's observed units sends, or ``None`` for none: all of
    ``jednotky`` from a fraction of 1 on, else ``float32(fraction) × jednotky``.

    >>> amount(45.4, 1.0), amount(45.4, 7.0), amount(3.0, 0.5), amount(3.0, 0.1)
    (45.4, 45.4, 1.5, 0.30000000447034836)
    >>> amount(3.0, 0.0), amount(3.0, float("nan")), amount(0.0, 0.5)
    (None, None, None)
    """
    f = float(fraction)
    if not f > 0.0:  # NaN, 0 and below
        return None
    if f < 1.0:
        f = float32(f)  # may round up to 1.0
    a = float(jednotky) if f >= 1.0 else f * jednotky
    return a if a > 0.0 else None


def command(cell: Mapping[str, Any], kind: int, fraction: float) -> Optional[Dict[str, Any]]:
    """The §6 command of one own cell (an item of ``moje_pola``) for an action ``kind`` (0–9)
    and ``fraction``, or ``None`` (stay, no units, a direction off the map)."""
    kind = int(kind)
    if not 0 <= kind < KINDS:
        raise ValueError("action kind %d: kinds are 0 to %d" % (kind, KINDS - 1))
    if kind == 0:
        return None
    a = amount(cell["jednotky"], fraction)
    if a is None:
        return None
    if kind == 9:
        return {"typ": "FORTIFY", "pole": cell["id"], "investicia": a}
    to = neighbour(cell, (kind - 1) % 4)
    if to is None:
        return None
    return {"typ": "MOVE" if kind <= 4 else "ATTACK", "z": cell["id"], "na": to, "pocet": a}


def commands(stav: Mapping[str, Any], kind: Sequence[int], fraction: Sequence[float],
             width: int) -> List[Dict[str, Any]]:
    """The §6 commands of per-cell actions: ``kind`` (ints 0–9) and ``fraction`` (floats) are
    flat row-major sequences over a grid ``width`` cells wide (lists, or numpy arrays
    ``.ravel()``-ed); one command per own cell, in the order of ``moje_pola``. A kind outside
    0–9 anywhere is a ``ValueError``, as in the environment."""
    for i, k in enumerate(kind):
        if not 0 <= k < KINDS:
            raise ValueError("action kind %d at row %d, col %d: kinds are 0 to %d"
                             % (k, i // width, i % width, KINDS - 1))
    out: List[Dict[str, Any]] = []
    for cell in stav["moje_pola"]:
        r, c = parse_id(cell["id"])
        i = r * width + c
        if c >= width or i >= len(kind) or i >= len(fraction):
            raise ValueError("cell %s is beyond the actions' grid (%d wide, %d and %d cells)"
                             % (cell["id"], width, len(kind), len(fraction)))
        cmd = command(cell, kind[i], fraction[i])
        if cmd is not None:
            out.append(cmd)
    return out


def observe(stav: Mapping[str, Any], height: int, width: int, final: bool = False) -> Dict[str, Any]:
    """The arrays and action mask of a §5 observation as flat row-major lists over a grid of
    ``height × width`` (see the module); ``final``: the seat is a finalist of a final (it may
    not attack other finalists). A cell beyond the grid is a ``ValueError``."""
    n = height * width

    def index(cell: str) -> int:
        r, c = parse_id(cell)
        if r >= height or c >= width:
            raise ValueError("cell %s is beyond a grid of %d × %d" % (cell, height, width))
        return r * width + c

    terrain = [UNSEEN] * n
    owner = [UNSEEN] * n
    units = [0.0] * n
    fortification = [0.0] * n
    visible = [0] * n
    base = [0] * n
    mask = [0] * (n * KINDS)
    mask[::KINDS] = [1] * n  # staying is always possible
    base[index(stav["moja_zakladna"])] = 1
    own: List[int] = []
    for cell in stav["moje_pola"]:
        i = index(cell["id"])
        own.append(i)
        terrain[i] = TERRAIN[cell["typ"]]
        owner[i] = OWN
        units[i] = float32(cell["jednotky"])
        fortification[i] = float32(cell["opevnenie"])
        visible[i] = 1
    for cell in stav["viditelne_susedne_pola"]:
        i = index(cell["id"])
        terrain[i] = TERRAIN[cell["typ"]]
        owner[i] = owner_code(cell["vlastnik"])
        units[i] = float32(cell["posadka"])
        fortification[i] = float32(cell["opevnenie"])
        visible[i] = 1
    for cell, i in zip(stav["moje_pola"], own):
        if not cell["jednotky"] > 0.0:
            continue
        m = i * KINDS
        mask[m + 9] = 1
        r, c = divmod(i, width)
        near = cell["susedia"]
        for d, (dr, dc) in enumerate(DIRECTIONS):
            if r + dr < 0 or c + dc < 0 or cell_id(r + dr, c + dc) not in near:
                continue
            o = owner[i + dr * width + dc]
            if o == OWN:
                mask[m + 1 + d] = 1
            elif not final or o == 0 or o == COUNCIL:
                mask[m + 5 + d] = 1
    return {"terrain": terrain, "owner": owner, "units": units, "fortification": fortification,
            "visible": visible, "base": base, "round": stav["kolo"], "action_mask": mask}


def channels(obs: Mapping[str, Any], height: int, width: int) -> List[List[float]]:
    """The 14 channels of :data:`CHANNELS` (a list of flat row-major lists of ``height × width``
    floats) from :func:`observe`'s arrays, computed as ``gbely.wrappers.channels`` computes them in
    float32 (each operation rounded to float32): 0/1 indicators of the owner (``own``,
    ``neutral``, ``council``, ``armies``), ``visible`` and the terrain; ``units`` / 10,
    ``log(1 + units)``, ``fortification`` / 10; on visible foreign cells ``defence`` = (units ×
    terrain bonus + fortification) / 10 (rules §6.4); ``base``; ``round`` = kolo / 150 on every
    cell. An unseen (or padded) cell has every channel 0 but ``round``."""
    n = height * width
    owner, terrain, units, fort = obs["owner"], obs["terrain"], obs["units"], obs["fortification"]
    tenth = float32(0.1)
    f32 = float32
    out = [[0.0] * n for _ in CHANNELS]
    own, neutral, council, armies, vis, luka, vrch, rieka, u10, logu, f10, defence, base, rnd = out
    for i in range(n):
        o = owner[i]
        u = units[i]
        if o == OWN:
            own[i] = 1.0
        elif o == 0:
            neutral[i] = 1.0
        elif o == COUNCIL:
            council[i] = 1.0
        elif o > COUNCIL:
            armies[i] = 1.0
        vis[i] = float(obs["visible"][i])
        t = terrain[i]
        if t == 0:
            luka[i] = 1.0
        elif t == 1:
            vrch[i] = 1.0
        elif t == 2:
            rieka[i] = 1.0
        u10[i] = f32(u * tenth)
        logu[i] = f32(math.log1p(u))
        f10[i] = f32(fort[i] * tenth)
        if o != OWN and o != UNSEEN:
            defence[i] = f32(f32(f32(u * f32(BONUS[t])) + fort[i]) * tenth)
        base[i] = float(obs["base"][i])
    rnd[:] = [f32(obs["round"] / ROUNDS)] * n
    return out


def front_distance(obs: Mapping[str, Any], height: int, width: int) -> List[int]:
    """For each cell (flat row-major), the steps through own cells from it to the front: 0 for an
    own cell with a visible foreign neighbour (north, south, west or east), ``k + 1`` for an own
    cell next to one at ``k``; -1 for a cell that is not own, or own with no path to the front.
    From :func:`observe`'s arrays (``gbely.wrappers.front_distance`` is the numpy twin).

    >>> o = {"owner": [1, 1, 1, -1, -1, 0]}  # 2 × 3: three own cells in a row, hbp below the last
    >>> front_distance(o, 2, 3)
    [2, 1, 0, -1, -1, -1]
    """
    owner = obs["owner"]
    n = height * width
    dist = [-1] * n
    frontier = []

    def near(i: int) -> List[int]:
        r, c = divmod(i, width)
        return [(r + dr) * width + c + dc for dr, dc in DIRECTIONS if 0 <= r + dr < height and 0 <= c + dc < width]

    for i in range(n):
        if owner[i] == OWN and any(owner[j] != OWN and owner[j] != UNSEEN for j in near(i)):
            dist[i] = 0
            frontier.append(i)
    d = 0
    while frontier:
        d += 1
        nxt = []
        for i in frontier:
            for j in near(i):
                if owner[j] == OWN and dist[j] < 0:
                    dist[j] = d
                    nxt.append(j)
        frontier = nxt
    return dist
