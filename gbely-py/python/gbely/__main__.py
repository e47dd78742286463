"""`python -m gbely …` and the `gbely` console script: the same CLI as the Rust binary."""
import os
import sys


def main() -> int:
    # Agent files run with this very interpreter unless told otherwise.
    os.environ.setdefault("GBELY_PYTHON", sys.executable)
    from gbely._gbely import cli_main

    return cli_main(["gbely", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
