"""`python -m toolbench` runs the same command line as the `toolbench` script."""

from toolbench.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
