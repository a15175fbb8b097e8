"""Run benchmarks: ``python -m benchmarks [--quick] [--output DIR] [name ...]``.

Every module ``benchmarks/<name>.py`` exposing ``run(output_dir, quick=False)`` is a
benchmark; results (CSV, PNG) go to ``benchmarks/results/`` unless told otherwise.
"""

import argparse
import importlib
import pkgutil
from pathlib import Path

import benchmarks

RESULTS = Path(__file__).resolve().parent / "results"


def available():
    """Names of the benchmark modules."""
    return sorted(
        info.name
        for info in pkgutil.iter_modules(benchmarks.__path__)
        if not info.name.startswith("_")
        and hasattr(importlib.import_module(f"benchmarks.{info.name}"), "run")
    )


def main(argv=None):
    """Parse arguments and run the selected benchmarks."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    names = args.names or available()
    unknown = sorted(set(names) - set(available()))
    if unknown:
        parser.error(f"unknown benchmarks {unknown}; available: {available()}")
    args.output.mkdir(parents=True, exist_ok=True)
    for name in names:
        print(f"=== benchmark {name} ===", flush=True)
        importlib.import_module(f"benchmarks.{name}").run(args.output, quick=args.quick)


if __name__ == "__main__":
    main()
