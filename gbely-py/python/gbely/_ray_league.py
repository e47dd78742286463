"""The Ray driver of ``gbely league --ray ADDRESS`` (docs/league.md).

The engine starts it as ``python -m gbely._ray_league ADDRESS JOBS`` and speaks JSON lines with
it: on stdout ``{"ready": {"cpus": C}}`` once connected; then one match job a line on stdin
(``{"id": N, "job": {...}}``) as the engine's scheduler hands them out, until end of input; on
stdout one line a finished match, in the order they finish: ``{"id": N, "row": {...}}`` or
``{"id": N, "error": "..."}``. Each job is a Ray task
that plays the match on its worker with the engine's own code (``gbely._gbely.league_match``),
asking the cluster for one CPU per agent process, so agents on a clock are not starved.

ADDRESS is what ``ray.init`` takes (``auto``, ``HOST:PORT``, ``ray://HOST:PORT``), or ``local``
for a Ray instance of this process's own. JOBS is the most matches in flight, 0 for the
cluster's CPUs.
"""
import json
import queue
import shutil
import socket
import sys
import tempfile
import threading
from typing import Any, Dict, List, Optional


def _play(job: Dict[str, Any]) -> str:
    """Runs on a Ray worker: plays one match in a scratch folder; returns its row as JSON."""
    from gbely import _gbely

    folder = tempfile.mkdtemp(prefix="gbely-ray-")
    try:
        return _gbely.league_match(json.dumps(job), sys.executable, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _say(doc: Dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(doc) + "\n")
    sys.stdout.flush()


def _reachable(address: str) -> Optional[str]:
    """For a HOST:PORT address, why nothing answers there (Ray itself would retry for minutes)."""
    target = address[len("ray://"):] if address.startswith("ray://") else address
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        return None
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as e:
        return f"nothing answers at {target} ({e.strerror or e}): is a Ray head running there?"
    return None


def main(argv: List[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m gbely._ray_league ADDRESS JOBS (started by `gbely league --ray`)", file=sys.stderr)
        return 2
    address, in_flight = argv[0], int(argv[1])
    try:
        import ray
    except ImportError:
        print(f"gbely league --ray: Ray is not installed for {sys.executable} (pip install ray)", file=sys.stderr)
        return 1
    why = _reachable(address) if address not in ("local", "auto") else None
    if why:
        print(f"gbely league --ray: {why}", file=sys.stderr)
        return 1
    if address == "local":
        ray.init(include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    else:
        ray.init(address=address, logging_level="WARNING", log_to_driver=False)
    cpus = float(ray.cluster_resources().get("CPU", 1.0))
    _say({"ready": {"cpus": cpus}})
    limit = in_flight if in_flight > 0 else max(1, int(cpus))
    play = ray.remote(_play)
    # Jobs come while matches run: a thread reads them (None: end of input).
    jobs: "queue.Queue[Optional[Dict[str, Any]]]" = queue.Queue()

    def read_jobs() -> None:
        for line in sys.stdin:
            if line.strip():
                jobs.put(json.loads(line))
        jobs.put(None)

    threading.Thread(target=read_jobs, daemon=True).start()
    running: Dict[Any, int] = {}
    more = True
    while more or running:
        while more and len(running) < limit:
            try:
                # Nothing running: wait for the next job; else look and go on.
                item = jobs.get(timeout=None if not running else 0.05)
            except queue.Empty:
                break
            if item is None:
                more = False
                break
            need = min(float(item["job"].get("cpus", 1)), cpus)
            running[play.options(num_cpus=need, max_retries=0).remote(item["job"])] = item["id"]
        if not running:
            continue
        done, _ = ray.wait(list(running), num_returns=1, timeout=0.05)
        for ref in done:
            id_ = running.pop(ref)
            try:
                _say({"id": id_, "row": json.loads(ray.get(ref))})
            except Exception as e:  # a match that failed on its worker: reported, the others go on
                _say({"id": id_, "error": str(e).strip().splitlines()[-1] if str(e).strip() else repr(e)})
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
