"""``gbely pack POLICY AGENT.py -o submission.py``: weights into one standard-library agent file.

The rules take one ``.py`` of at most 512 KiB, run where nothing but the standard library may be
installed; a trained policy goes in as weights embedded in the code. ``pack`` writes that file:

* ``POLICY`` holds named weight arrays: a ``.npz`` (``numpy.savez``; needs numpy) or a ``.json``
  object of name → number or nested lists of numbers.
* ``AGENT.py`` is the agent (``decide(stav)`` with pure-Python inference, standard library and
  ``pravidla`` only) with one line ``WEIGHTS = None``. Packing replaces that line with the
  weights, quantised to int8 per array (scale = largest magnitude / 127; or, with
  ``dtype="float16"`` / ``--dtype float16``, IEEE half floats: twice the bytes, about 3
  significant digits at every magnitude), compressed with zlib and written in base64, and the
  few lines that decode them at import into ``WEIGHTS``: a dict of name → float (a scalar),
  list (1-D) or list of lists (2-D and up, row-major).
* The agent may use :mod:`gbely.codec` (the environments' observation and action coding):
  ``from gbely import codec``, ``from gbely import codec as NAME``, ``import gbely.codec as
  NAME`` or ``from gbely.codec import NAMES`` (one statement on its own lines). Packing inlines
  the codec's source (a few hundred lines, standard library only) and turns each such import
  into names bound to it, so the submission imports nothing but the standard library.
* The result is checked: its size (≤ 512 KiB), its imports (standard library and ``pravidla``
  only), ``decide`` defined, and — unless ``--no-timing`` — the time of each decision over a
  match against the Council on the reference map and on a 90×90 final map (in this process; the
  limit is 2 s per round). ``gbely check`` then checks it as a judge would, in its own process.

>>> import json, pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "w.json").write_text(json.dumps({"w": [[1.0, -0.5], [0.25, 0.0]], "b": 2.0}))
>>> _ = (d / "a.py").write_text("WEIGHTS = None\\ndef decide(stav):\\n    return []\\n")
>>> report = pack(d / "w.json", d / "a.py", d / "s.py", timing=False)
>>> ns = {}; exec((d / "s.py").read_text(), ns)
>>> ns["WEIGHTS"]["w"], ns["WEIGHTS"]["b"]
([[1.0, -0.5039370078740157], [0.25196850393700787, 0.0]], 2.0)
"""
from __future__ import annotations

import argparse
import ast
import base64
import importlib.util
import json
import os
import re
import sys
import time
import uuid
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

__all__ = ["pack", "PackReport", "main", "LIMIT_BYTES", "LIMIT_WEIGHTS"]

#: The submission's size limit (rules §8: 512 KiB).
LIMIT_BYTES = 512 * 1024
#: Most weights ``pack`` reads from a policy, over all its arrays: a submission of 512 KiB holds
#: far fewer (about 380 000 int8 weights that do not compress), and this bounds the memory of
#: packing (each weight is a Python float for a while: about 160 MB at the limit).
LIMIT_WEIGHTS = 4_000_000
#: Largest ``.json`` policy read.
LIMIT_JSON_BYTES = 16 << 20
#: Largest agent source read (a submission is at most :data:`LIMIT_BYTES`).
LIMIT_SOURCE_BYTES = 8 << 20
#: The time limit of one round (rules §8).
LIMIT_S = 2.0
_MARKER = re.compile(r"^WEIGHTS\s*=\s*None\b.*$", re.MULTILINE)
#: Modules the judge provides besides the standard library.
_PROVIDED = {"pravidla"}

PathArg = Union[str, "os.PathLike[str]"]


@dataclass
class PackReport:
    """What :func:`pack` wrote and measured."""

    output: Path
    bytes: int
    #: Per array: name, shape, scale of the int8 steps (1.0 for float16).
    arrays: List[Tuple[str, List[int], float]]
    #: How the weights are stored: ``int8`` or ``float16``.
    dtype: str = "int8"
    #: Slowest decision in seconds per map (``gbely`` and the final map), when timed.
    slowest: Dict[str, float] = field(default_factory=dict)
    #: Rounds timed per map.
    rounds: Dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        lines = [f"packed {self.output}: {self.bytes} bytes of {LIMIT_BYTES} allowed, "
                 f"{sum(_size(s) for _, s, _ in self.arrays)} weights in {len(self.arrays)} arrays ({self.dtype})"]
        for name, secs in self.slowest.items():
            lines.append(f"  slowest decision on {name}: {secs:.3f} s over {self.rounds[name]} rounds "
                         f"(limit {LIMIT_S:.0f} s)")
        return "\n".join(lines)


class PackError(Exception):
    """A policy or agent that cannot be packed, or a packed file that is not a valid submission."""


def _size(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _regular(path: Path) -> None:
    """Refuses what is not a regular file before it is opened (a named pipe would block, a
    device never end)."""
    if not path.is_file():
        what = "not found" if not path.exists() else "not a regular file (a folder, a pipe or a device)"
        raise PackError(f"{path}: {what}")


def _read_bounded(path: Path, limit: int, what: str) -> bytes:
    _regular(path)
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise PackError(f"{path}: more than {limit} bytes: too large for {what}")
    return data


def _load_npz(path: Path) -> Dict[str, Tuple[List[int], List[float]]]:
    """The arrays of a ``numpy.savez`` file, read within :data:`LIMIT_WEIGHTS`: each member's
    header is read first and its size checked against what is left (and against the size its
    zip entry declares) before a byte of it is inflated; then exactly that many bytes are read,
    so an archive whose members inflate far past what they hold (or claim) is refused early."""
    try:
        import numpy as np
        from numpy.lib import format as npy
    except ImportError:
        raise PackError(f"{path}: reading a .npz needs numpy (or give the weights as .json)") from None
    import zipfile

    out: Dict[str, Tuple[List[int], List[float]]] = {}
    left = LIMIT_WEIGHTS
    _regular(path)
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if not info.filename.endswith(".npy"):
                    raise PackError(f"{path}: member {info.filename!r} is not an array (.npy) as numpy.savez writes")
                key = info.filename[:-4]
                with z.open(info) as f:
                    version = npy.read_magic(f)
                    if version == (1, 0):
                        shape, fortran, dtype = npy.read_array_header_1_0(f)
                    elif version == (2, 0):
                        shape, fortran, dtype = npy.read_array_header_2_0(f)
                    else:
                        raise PackError(f"{path}: array {key!r} is in .npy format {version}, not 1.0 or 2.0")
                    if dtype.hasobject or dtype.kind not in "biuf":
                        raise PackError(f"{path}: array {key!r} holds {dtype}, not numbers")
                    count = _size(shape)
                    if count > left:
                        raise PackError(f"{path}: array {key!r} has {count} weights, more than the "
                                        f"{LIMIT_WEIGHTS} pack reads in all (the {LIMIT_BYTES // 1024} KiB "
                                        f"of a submission hold far fewer)")
                    need = count * dtype.itemsize
                    if need > info.file_size:
                        raise PackError(f"{path}: array {key!r} needs {need} bytes but its entry declares "
                                        f"{info.file_size}")
                    data = f.read(need)
                    if len(data) != need:
                        raise PackError(f"{path}: array {key!r} is cut short ({len(data)} of {need} bytes)")
                left -= count
                arr = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
                out[key] = (list(arr.shape), [float(x) for x in arr.astype(float).ravel()])
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as e:
        raise PackError(f"{path}: not a readable .npz: {e}") from None
    return out


def _load_policy(path: Path) -> Dict[str, Tuple[List[int], List[float]]]:
    """Name → (shape, values row-major)."""
    if path.suffix == ".npz":
        return _load_npz(path)
    if path.suffix == ".json":
        doc = json.loads(_read_bounded(path, LIMIT_JSON_BYTES, "a policy"))
        if not isinstance(doc, dict):
            raise PackError(f"{path}: a JSON object of name → numbers is expected")
        arrays = {k: _flatten(k, v) for k, v in doc.items()}
        total = sum(len(values) for _, values in arrays.values())
        if total > LIMIT_WEIGHTS:
            raise PackError(f"{path}: {total} weights, more than the {LIMIT_WEIGHTS} pack reads in all")
        return arrays
    raise PackError(f"{path}: a policy is a .npz or a .json file")


def _flatten(name: str, v: Any) -> Tuple[List[int], List[float]]:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return [], [float(v)]
    if not isinstance(v, list) or not v:
        raise PackError(f"weights `{name}`: a number or a non-empty (nested) list of numbers")
    parts = [_flatten(name, x) for x in v]
    shape = parts[0][0]
    if any(p[0] != shape for p in parts):
        raise PackError(f"weights `{name}`: rows of different shapes")
    return [len(v)] + shape, [x for p in parts for x in p[1]]


def _quantise(values: List[float]) -> Tuple[float, bytes]:
    top = max((abs(x) for x in values), default=0.0)
    if top != top or top == float("inf"):
        raise PackError("weights that are not finite numbers")
    scale = top / 127 if top > 0 else 1.0
    return scale, bytes((max(-127, min(127, round(x / scale))) + 256) % 256 for x in values)


def _half(values: List[float]) -> bytes:
    """IEEE half floats, little-endian (``struct``'s ``e``), as the decoder reads them."""
    import struct

    try:
        return struct.pack(f"<{len(values)}e", *values)
    except (OverflowError, struct.error):
        raise PackError("weights beyond float16's range (±65504) or not finite: pack them as int8") from None


DTYPES = ("int8", "float16")

_DECODER = '''\
# --- weights packed by `gbely pack` (%(dtype)s per array, zlib, base64); do not edit by hand ---
def _gbely_weights():
    import base64
    import struct
    import zlib

    raw = zlib.decompress(base64.b64decode(_GBELY_BLOB))

    def shaped(flat, shape):
        if not shape:
            return flat[0]
        if len(shape) == 1:
            return flat
        step = len(flat) // shape[0]
        return [shaped(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]

    out = {}
    for name, shape, scale, start, size, half in _GBELY_INDEX:
        if half:
            flat = list(struct.unpack_from("<" + str(size) + "e", raw, start))
        else:
            flat = [(b - 256 if b > 127 else b) * scale for b in raw[start:start + size]]
        out[name] = shaped(flat, shape)
    return out


_GBELY_INDEX = %(index)s
_GBELY_BLOB = (
%(blob)s
)
WEIGHTS = _gbely_weights()
# --- end of the packed weights ---'''


def _stdlib() -> Optional[set]:
    names = getattr(sys, "stdlib_module_names", None)
    return set(names) if names else None


def _check_source(text: str, where: str) -> None:
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise PackError(f"{where} does not parse: {e}") from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == "decide" for n in tree.body):
        raise PackError(f"{where} defines no top-level function decide(stav)")
    std = _stdlib()
    if std is None:
        return  # Python < 3.10 cannot list the standard library; `gbely check` still checks
    foreign = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            foreign |= {a.name.split(".")[0] for a in n.names}
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            foreign.add(n.module.split(".")[0])
    foreign -= std | _PROVIDED
    if foreign:
        raise PackError(f"{where} imports outside the standard library (the judge will not have them): "
                        f"{', '.join(sorted(foreign))}")


_CODEC_BLOCK = '''\
# --- gbely.codec, inlined by `gbely pack` (the environments' coding, standard library only) ---
def _gbely_codec():
    import types

    module = types.ModuleType("gbely_codec")
    exec(compile(_GBELY_CODEC_SOURCE, "<gbely.codec>", "exec"), module.__dict__)
    return module


_GBELY_CODEC_SOURCE = \'\'\'%(source)s\'\'\'
_GBELY_CODEC = _gbely_codec()
# --- end of gbely.codec ---
'''


def _codec_imports(tree: ast.Module) -> List[Tuple[ast.stmt, List[Tuple[str, str]]]]:
    """The statements that import ``gbely.codec``, each with the (local name, codec attribute)
    pairs it binds (attribute ``""``: the module itself)."""
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module == "gbely" and \
                any(a.name == "codec" for a in n.names):
            if any(a.name != "codec" for a in n.names):
                raise PackError(f"line {n.lineno}: import only `codec` from gbely (the rest is not at the judge)")
            found.append((n, [(a.asname or "codec", "") for a in n.names]))
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module == "gbely.codec":
            if any(a.name == "*" for a in n.names):
                raise PackError(f"line {n.lineno}: name what you import from gbely.codec (no `*`)")
            found.append((n, [(a.asname or a.name, a.name) for a in n.names]))
        elif isinstance(n, ast.Import) and any(a.name == "gbely.codec" for a in n.names):
            if len(n.names) != 1 or not n.names[0].asname:
                raise PackError(f"line {n.lineno}: write `from gbely import codec` (or `import gbely.codec as NAME` "
                                f"alone on its line)")
            found.append((n, [(n.names[0].asname, "")]))
    return found


def _codec_source() -> str:
    text = (Path(__file__).parent / "codec.py").read_text()
    return text.replace("\\", "\\\\").replace("\'\'\'", "\\\'\\\'\\\'")


def _inline_codec(source: str, where: str) -> str:
    """``source`` with ``gbely.codec`` inlined (see the module); unchanged when it is not used."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise PackError(f"{where} does not parse: {e}") from None
    imports = _codec_imports(tree)
    if not imports:
        return source
    lines = source.splitlines(keepends=True)
    for n, _ in imports:
        end = n.end_lineno or n.lineno
        before = lines[n.lineno - 1][:n.col_offset].strip()
        after = lines[end - 1][n.end_col_offset or 0:].strip()
        if before or (after not in ("", ";") and not after.startswith("#")):
            raise PackError(f"{where}, line {n.lineno}: put the import of gbely.codec on its own line")
    # The codec goes before the first statement that is not the docstring or `from __future__`.
    body = tree.body
    k = 0
    while k < len(body) and ((k == 0 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                              and isinstance(body[0].value.value, str))
                             or (isinstance(body[k], ast.ImportFrom) and body[k].module == "__future__")):
        k += 1
    at = body[k].lineno - 1 if k < len(body) else len(lines)
    # A decorated statement starts at its first decorator.
    if k < len(body) and getattr(body[k], "decorator_list", None):
        at = min(d.lineno for d in body[k].decorator_list) - 1
    for n, names in sorted(imports, key=lambda x: -x[0].lineno):
        indent = lines[n.lineno - 1][:n.col_offset]
        binds = "; ".join(f"{local} = _GBELY_CODEC" + (f".{attr}" if attr else "") for local, attr in names)
        lines[n.lineno - 1:(n.end_lineno or n.lineno)] = [f"{indent}{binds}  # gbely.codec, inlined above\n"]
    block = _CODEC_BLOCK % {"source": _codec_source()}
    if at > 0 and not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    lines[at:at] = (["\n"] if at > 0 and lines[at - 1].strip() else []) + [block, "\n\n"]
    return "".join(lines)


def pack(policy: PathArg, agent: PathArg, output: PathArg, timing: bool = True,
         rounds: int = 150, dtype: str = "int8") -> PackReport:
    """Packs ``policy`` into ``agent`` as ``output`` and checks it (see the module). ``dtype``:
    ``"int8"`` (per-array scale) or ``"float16"``."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype={dtype!r}: 'int8' or 'float16'")
    policy, agent, output = Path(policy), Path(agent), Path(output)
    arrays = _load_policy(policy)
    source = _read_bounded(agent, LIMIT_SOURCE_BYTES, "an agent source").decode("utf-8")
    if len(_MARKER.findall(source)) != 1:
        raise PackError(f"{agent}: put exactly one line `WEIGHTS = None` where the weights go")
    source = _inline_codec(source, str(agent))
    _check_source(source, str(agent))
    index, blob, described = [], bytearray(), []
    for name, (shape, values) in arrays.items():
        if not name.isidentifier():
            raise PackError(f"weights `{name}`: names are Python identifiers")
        if dtype == "float16":
            scale, q = 1.0, _half(values)
        else:
            scale, q = _quantise(values)
        index.append((name, shape, scale, len(blob), len(values), dtype == "float16"))
        described.append((name, shape, scale))
        blob += q
    text = base64.b64encode(zlib.compress(bytes(blob), 9)).decode("ascii")
    lines = "\n".join(f'    "{text[i:i + 96]}"' for i in range(0, len(text), 96)) or '    ""'
    block = _DECODER % {"index": repr(index), "blob": lines, "dtype": dtype}
    packed = _MARKER.sub(lambda _: block, source, count=1)
    data = packed.encode("utf-8")
    if len(data) > LIMIT_BYTES:
        raise PackError(f"the packed file would have {len(data)} bytes; the limit is {LIMIT_BYTES} (512 KiB): "
                        f"fewer or smaller weights")
    output.write_bytes(data)
    report = PackReport(output=output, bytes=len(data), arrays=described, dtype=dtype)
    if timing:
        _time(output, rounds, report)
    return report


def _load_decide(path: Path):
    spec = importlib.util.spec_from_file_location(f"gbely_packed_{uuid.uuid4().hex}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.decide


def _time(path: Path, rounds: int, report: PackReport) -> None:
    """Each decision's time over a match against the Council on the reference map and on a
    90×90 final map (seat 0; the other finalists stay idle), in this process."""
    import gbely

    decide = _load_decide(path)
    maps = {"gbely (60×60)": gbely.Map.reference(),
            "a 90×90 final map": gbely.Map.generate_final("pack", size=90)}
    for name, m in maps.items():
        council = [k for k, (role, _) in enumerate(m.seats) if role == "council"]
        match = gbely.Match(map=m, rounds=rounds, council=council, record=False)
        slowest = 0.0
        played = 0
        while not match.is_over:
            stav = match.observation(0)
            t = time.perf_counter()
            try:
                answer = decide(stav)
            except Exception as e:
                raise PackError(f"{path}: decide raised {type(e).__name__}: {e} in round {match.round} on {name}") from e
            slowest = max(slowest, time.perf_counter() - t)
            match.submit(0, answer)
            report_ = match.advance()
            played += 1
            if report_.violations:
                raise PackError(f"{path}: an unreadable answer in round {match.round} on {name}")
            if not match.is_active(0):
                break
        report.slowest[name] = slowest
        report.rounds[name] = played
        if slowest > LIMIT_S:
            raise PackError(f"{path}: a decision took {slowest:.2f} s on {name}; the limit is {LIMIT_S:.0f} s")


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="gbely pack",
        description="Pack a policy's weights into an agent file: one standard-library .py of at most 512 KiB.")
    ap.add_argument("policy", help="the weights: .npz (numpy.savez) or .json (name → nested lists)")
    ap.add_argument("agent", help="the agent source with one line `WEIGHTS = None`")
    ap.add_argument("-o", "--output", required=True, help="the submission file to write")
    ap.add_argument("--rounds", type=int, default=150, help="rounds of each timing match (default 150)")
    ap.add_argument("--no-timing", action="store_true", help="skip the timing matches")
    ap.add_argument("--dtype", choices=DTYPES, default="int8",
                    help="how weights are stored: int8 with a scale per array (default) or float16")
    a = ap.parse_args(argv)
    try:
        report = pack(a.policy, a.agent, a.output, timing=not a.no_timing, rounds=a.rounds, dtype=a.dtype)
    except (PackError, OSError, ValueError) as e:
        print(f"gbely pack: {e}", file=sys.stderr)
        return 1
    print(report)
    print(f"next: gbely check {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
