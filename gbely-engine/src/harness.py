"""gbely agent harness: runs one agent file in its own process (SPEC §8).

Protocol: one observation (JSON) per line on stdin, one answer (JSON) per line on stdout.
The agent's own print() output goes to stderr (the agent's log), never to the protocol.
This process never loads the engine or the Council: only the agent file and `pravidla`.
"""
import importlib.util
import json
import os
import sys
import traceback


def main():
    agent_path = sys.argv[1]
    # The protocol keeps the real stdout; everything else written to fd 1 goes to the log.
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # `import pravidla` finds the module written next to this harness; the agent's own folder
    # comes first so that its helper modules import too.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.dirname(os.path.abspath(agent_path)))
    spec = importlib.util.spec_from_file_location("agent", agent_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["agent"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        traceback.print_exc()
        print("gbely: the agent failed at import", file=sys.stderr)
        sys.stderr.flush()
        os._exit(3)
    decide = getattr(module, "decide", None)
    if not callable(decide):
        print("gbely: the agent file defines no function decide(stav)", file=sys.stderr)
        sys.stderr.flush()
        os._exit(4)
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            return
        stav = json.loads(line)
        try:
            answer = decide(stav)
        except Exception as e:  # the round is a violation; the runner restarts us
            traceback.print_exc()
            sys.stderr.flush()
            err = {"kind": "crash", "detail": "decide raised %s: %s" % (type(e).__name__, e)}
            proto.write(json.dumps({"__gbely_error__": err}) + "\n")
            proto.flush()
            continue
        try:
            text = json.dumps(answer, allow_nan=False, separators=(",", ":"))
        except (TypeError, ValueError) as e:
            err = {"kind": "unreadable", "detail": "the answer is not JSON: %s" % e}
            text = json.dumps({"__gbely_error__": err})
        proto.write(text + "\n")
        proto.flush()
        sys.stderr.flush()


main()
