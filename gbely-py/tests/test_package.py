"""The Python package's shape (issue 32): no import circle between its modules, the public
modules a Gymnasium user looks for, and the codec's literal codes held to the native module's one
observation table (``gbely._gbely.OBS_SCHEMA``)."""
import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "gbely"


def module_name(path, root=PACKAGE):
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path, modules, root=PACKAGE):
    """The package's modules that the module at ``path`` imports, anywhere in it (a function's
    import counts: a circle through one is still a circle). ``from . import x`` is an edge to the
    submodule ``x`` when there is one, else to the package itself."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for t in targets:
            # `import gbely.x.y` imports gbely.x.y; the longest module name that prefixes it.
            while t and t not in modules:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def find_cycle(graph):
    """A circle of the graph (a list of nodes, the first repeated at the end), or None."""
    state = {}

    def visit(n, path):
        state[n] = "open"
        path.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == "open":
                return path[path.index(m):] + [m]
            if m not in state:
                found = visit(m, path)
                if found:
                    return found
        path.pop()
        state[n] = "done"
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n, [])
            if found:
                return found
    return None


def test_find_cycle_finds_a_circle_and_none_where_there_is_none():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_imports_of_reads_relative_and_absolute_imports(tmp_path):
    pkg = tmp_path / "gbely"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .a import x\n")
    (pkg / "a.py").write_text("def f():\n    from . import b\n    import gbely.c\n    from . import Map\n")
    for m in ("b", "c"):
        (pkg / f"{m}.py").write_text("")
    modules = {module_name(p, pkg) for p in pkg.rglob("*.py")}
    assert imports_of(pkg / "a.py", modules, pkg) == {"gbely.b", "gbely.c", "gbely"}
    assert imports_of(pkg / "__init__.py", modules, pkg) == {"gbely.a"}


def test_no_module_of_the_package_imports_itself_through_others():
    paths = sorted(PACKAGE.rglob("*.py"))
    # The native module is a leaf: it imports nothing of the package's Python.
    modules = {module_name(p) for p in paths} | {"gbely._gbely"}
    assert {"gbely", "gbely.env", "gbely.vector", "gbely.wrappers", "gbely.codec"} <= modules
    graph = {module_name(p): imports_of(p, modules) for p in paths}
    graph["gbely._gbely"] = set()
    assert graph["gbely.env"] >= {"gbely.vector", "gbely.wrappers"}  # the graph is really read
    assert find_cycle(graph) is None, f"an import circle: {' -> '.join(find_cycle(graph))}"


def test_the_public_modules_and_the_old_import_paths():
    vector = importlib.import_module("gbely.vector")
    wrappers = importlib.import_module("gbely.wrappers")
    env = importlib.import_module("gbely.env")
    import gymnasium

    assert issubclass(vector.VectorEnv, gymnasium.vector.VectorEnv)
    assert env.VectorEnv is vector.VectorEnv and env.MaskedCells is wrappers.MaskedCells
    assert issubclass(wrappers.MaskedCells, gymnasium.Wrapper)


def test_the_codecs_literal_codes_are_the_schemas():
    from gbely import codec
    from gbely._gbely import OBS_SCHEMA

    # Kinds: 0 stay, 1-4 MOVE N/S/W/E, 5-8 ATTACK N/S/W/E, 9 FORTIFY (docs/learning.md).
    kinds = OBS_SCHEMA["kinds"]
    assert codec.KINDS == len(kinds) == 10
    directions = {"north": (-1, 0), "south": (1, 0), "west": (0, -1), "east": (0, 1)}
    assert kinds[0] == "stay" and kinds[9] == "fortify"
    for d, step in enumerate(codec.DIRECTIONS):
        name = next(n for n, s in directions.items() if s == step)
        assert kinds[1 + d] == f"move_{name}" and kinds[5 + d] == f"attack_{name}"
    assert codec.TERRAIN == OBS_SCHEMA["terrain"] == {"luka": 0, "vrch": 1, "rieka": 2}
    owner = OBS_SCHEMA["owner"]
    assert (codec.UNSEEN, codec.OWN, codec.COUNCIL) == (owner["unseen"], owner["own"], owner["zastupitelstvo"])
    assert codec.owner_code("hbp") == owner["hbp"] == 0
    assert codec.owner_code("armada_3") == OBS_SCHEMA["armada_offset"] + 3 == 5


def test_the_schema_is_what_the_environment_writes():
    import numpy as np
    from gbely._gbely import OBS_SCHEMA
    from gbely.env import GbelyEnv

    env = GbelyEnv(grid=(64, 70), rounds=3)
    obs, info = env.reset(seed=0)
    fields = OBS_SCHEMA["fields"]
    assert [f["name"] for f in fields] == list(obs) + ["action_mask"]
    arrays = {**obs, "action_mask": info["action_mask"]}
    shapes = {"grid": (64, 70), "grid_kinds": (64, 70, 10), "one": (1,)}
    for f in fields:
        a = arrays[f["name"]]
        assert a.dtype == np.dtype(f["dtype"]) and a.shape == shapes[f["shape"]], f["name"]
        # rounds=3: rounds 0 to 2; units and fortification at most all the units of 64 × 70
        # cells over 3 rounds: 4480 × (1 000 010 + 3 × 8) + 1 = 4 480 152 321, up to a float32
        high = {"last_round": 2, "all_units": 4480152576.0}.get(f["high"], f["high"])
        assert f["low"] <= a.min() and a.max() <= high, f["name"]
        # The grid is padded beyond the map (60 × 60): padded cells hold the unseen value.
        if f["shape"] == "grid":
            assert (a[60:, :] == f["unseen"]).all() and (a[:, 60:] == f["unseen"]).all(), f["name"]
        if f["observation"]:
            space = env.observation_space[f["name"]]
            assert space.dtype == a.dtype and float(space.low.min()) == f["low"]
            assert float(space.high.max()) == high
    # An unseen (padded) cell may only stay.
    assert arrays["action_mask"][60:, :].tolist() == [[[1] + [0] * 9] * 70] * 4


@pytest.mark.parametrize("module", ["gbely.env", "gbely.vector", "gbely.wrappers"])
def test_the_environment_modules_import_alone_in_any_order(module):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", f"import {module}; import gbely.env; print('ok')"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("module", ["gbely.env", "gbely.vector", "gbely.wrappers"])
def test_each_environment_module_says_what_to_install_without_numpy(module):
    import subprocess
    import sys

    code = ("import sys; sys.modules['numpy'] = None\n"
            "import gbely\n"
            "try:\n"
            f"    import {module}\n"
            "except ImportError as e:\n"
            "    assert \"pip install 'gbely[env]'\" in str(e), e\n"
            "    print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr


def test_commands_take_the_grid_or_the_map_and_padding_is_ignored_but_checked():
    import numpy as np
    from gbely.env import GbelyEnv

    env = GbelyEnv(grid=(64, 70), rounds=3)
    env.reset(seed=0)
    kind, fraction = np.zeros((64, 70), np.int8), np.ones((64, 70), np.float32)
    kind[57, 2] = 8  # ATTACK east from the base P57_02, 10 + 3 + 5 = 18 units in round 0 (rules §4)
    kind[62, 68] = 9  # a padded cell: no command
    expected = [{"typ": "ATTACK", "z": "P57_02", "na": "P57_03", "pocet": 18.0}]
    assert env.unwrapped._core.commands(0, kind, fraction) == expected
    on_map = (np.ascontiguousarray(kind[:60, :60]), np.ascontiguousarray(fraction[:60, :60]))
    assert env.unwrapped._core.commands(0, *on_map) == expected
    kind[63, 69] = 10
    with pytest.raises(ValueError, match="action kind 10 at row 63, col 69"):
        env.unwrapped._core.commands(0, kind, fraction)
    with pytest.raises(ValueError, match="action kind 10 at row 63, col 69"):
        env.step({"kind": kind, "fraction": fraction})
