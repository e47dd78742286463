"""gbely agent harness: runs one agent file in its own process (SPEC §8).

Protocol: one observation (JSON) per line on stdin, one answer (JSON) per line on stdout.
The agent's own print() output goes to stderr (the agent's log) and, the round's first lines, into
the answer's notes (its `debug` key, kept in the replay); never to the protocol.
This process never loads the engine or the Council: only the agent file and `pravidla`.

The harness reports its own errors (the agent raised, failed at import, returned something that is
not JSON) on a line starting with `#gbely-error `: no JSON text starts with `#`, so whatever keys an
agent puts in its answer, the answer is never mistaken for an error report.
"""
import importlib.util
import json
import os
import sys
import traceback

ERROR_TAG = "#gbely-error "


def report(proto, kind, detail):
    proto.write(ERROR_TAG + json.dumps({"kind": kind, "detail": detail}) + "\n")
    proto.flush()


def limit_memory():
    limit = os.environ.get("GBELY_MEMORY_LIMIT")
    if not limit:
        return
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
    except (ImportError, ValueError, OSError) as e:  # not on this OS, or above the hard limit
        print("gbely: could not limit the agent's memory: %s" % e, file=sys.stderr)


def describe(e):
    """`ModuleNotFoundError: No module named 'numpy'`, cut to one line of reasonable length."""
    text = "%s: %s" % (type(e).__name__, e) if str(e) else type(e).__name__
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


class RoundLog:
    """What the agent prints while it decides: written on to its log as before, and the first
    NOTE_CHARS characters kept for the round's notes in the replay (the answer's `debug` key,
    which the rules ignore)."""

    NOTE_CHARS = 2000

    def __init__(self, stream):
        self.stream = stream
        self.kept = []
        self.size = 0

    def write(self, text):
        if self.size < self.NOTE_CHARS and isinstance(text, str):
            part = text[: self.NOTE_CHARS - self.size]
            self.kept.append(part)
            self.size += len(part)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)

    def take(self):
        text = "".join(self.kept).strip()
        self.kept, self.size = [], 0
        return text


def with_log(answer, log):
    """The answer with what was printed as its notes' log (unchanged when nothing was)."""
    if not log:
        return answer
    if isinstance(answer, list):
        answer = {"prikazy": answer}
    if not isinstance(answer, dict):
        return answer
    debug = answer.get("debug")
    if isinstance(debug, dict):
        debug = dict(debug, log=log)
    elif debug is None:
        debug = {"log": log}
    else:
        debug = {"text": debug, "log": log}
    return dict(answer, debug=debug)


def dump(answer):
    return json.dumps(answer, allow_nan=False, separators=(",", ":"))


def writable(value):
    """Whether `value` can be written as JSON."""
    try:
        dump(value)
        return True
    except (TypeError, ValueError, RecursionError):
        return False


def without_bad_notes(answer):
    """The answer with only the notes that can be written as JSON: notes never change the match,
    so a note that cannot be written (a cell id that is not a string, a value that is not JSON)
    is dropped, never the answer. The commands are left as they are."""
    if not isinstance(answer, dict) or "debug" not in answer:
        return answer
    debug = answer["debug"]
    if isinstance(debug, dict):
        kept = {k: v for k, v in debug.items() if k in ("text", "log") and writable(v)}
        cells = debug.get("cells")
        if isinstance(cells, dict):
            kept["cells"] = {k: v for k, v in cells.items() if isinstance(k, str) and writable(v)}
        debug = kept
    elif not writable(debug):
        debug = None
    return dict(answer, debug=debug)


def main():
    agent_path = sys.argv[1]
    limit_memory()
    # The protocol keeps the real stdout; everything else written to fd 1 goes to the log.
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    log = RoundLog(sys.stderr)
    sys.stdout = sys.stderr = log
    # `import pravidla` finds the module written next to this harness; the agent's own folder
    # comes first so that its helper modules import too.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.dirname(os.path.abspath(agent_path)))
    spec = importlib.util.spec_from_file_location("agent", agent_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["agent"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as e:
        traceback.print_exc()
        print("gbely: the agent failed at import", file=sys.stderr)
        sys.stderr.flush()
        report(proto, "crash", "the agent failed at import: %s" % describe(e))
        os._exit(3)
    decide = getattr(module, "decide", None)
    if not callable(decide):
        print("gbely: the agent file defines no function decide(stav)", file=sys.stderr)
        sys.stderr.flush()
        report(proto, "crash", "the agent file defines no function decide(stav)")
        os._exit(4)
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            return
        stav = json.loads(line)
        log.take()
        try:
            answer = decide(stav)
        except Exception as e:  # the round is a violation; the runner restarts us
            traceback.print_exc()
            sys.stderr.flush()
            report(proto, "crash", "decide raised %s" % describe(e))
            continue
        printed = log.take()
        try:
            text = dump(with_log(answer, printed))
        except (TypeError, ValueError, RecursionError) as e:
            try:
                text = dump(with_log(without_bad_notes(answer), printed))
                print(f"gbely: notes that are not JSON were dropped: {e}", file=sys.stderr)
            except (TypeError, ValueError, RecursionError):
                report(proto, "unreadable", "the answer is not JSON: %s" % e)
                continue
        proto.write(text + "\n")
        proto.flush()
        sys.stderr.flush()


main()
