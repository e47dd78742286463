"""`python -m gbely …` and the `gbely` console script: the same CLI as the Rust binary."""
import os
import sys


def main() -> int:
    # Agent files run with this very interpreter unless told otherwise.
    os.environ.setdefault("GBELY_PYTHON", sys.executable)
    if sys.argv[1:2] == ["pack"]:
        # `gbely pack` is Python (it reads numpy files and runs the packed agent's inference).
        from gbely.pack import main as pack_main

        return pack_main(sys.argv[2:])
    import signal

    from gbely._gbely import cli_main

    # Ctrl-C as for the Rust binary: while a command plays, the CLI stops it cleanly (agents
    # killed, the replay kept) and says how it ended in its exit code; otherwise it ends the
    # process. Python's own handler would raise KeyboardInterrupt after the CLI has returned,
    # and the exit code would be lost.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return cli_main(["gbely", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
