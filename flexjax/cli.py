"""Command line: `flexjax list` and `flexjax run [NAME] [--out DIR] [--quick]`.

The experiments live in the `flexjax.experiments` package; only this module imports it,
and only when called, so the library never depends on it.
"""

import argparse
import json
import sys


def _parsers(names, default) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    parser = argparse.ArgumentParser(prog="flexjax", description="Run flexjax experiments.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the registered experiments")
    run = sub.add_parser("run", help="run one experiment and write its summary, data and plots")
    run.add_argument(
        "name",
        nargs="?",
        default=default,
        metavar="NAME",
        help=f"experiment to run, one of: {', '.join(names)} (default: {default})",
    )
    run.add_argument(
        "--out",
        default="flexjax_out",
        metavar="DIR",
        help="output folder; results go to DIR/NAME/ (default: flexjax_out)",
    )
    run.add_argument("--quick", action="store_true", help="shorter simulation, for smoke tests")
    return parser, run


def main(argv=None) -> int:
    """Entry point of the `flexjax` command.

    **Arguments:** `argv`: the arguments without the program name (default
    `sys.argv[1:]`); path-like items are accepted.

    **Returns:** exit status 0. Bad usage, including an unknown experiment name, exits
    with status 2 and a message naming the valid experiments.
    """
    from flexjax.experiments import DEFAULT, EXPERIMENTS, run_experiment

    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    parser, run_parser = _parsers(list(EXPERIMENTS), DEFAULT)
    args = parser.parse_args(argv)

    if args.command == "list":
        width = max(len(name) for name in EXPERIMENTS)
        for name, exp in EXPERIMENTS.items():
            default = " (default)" if name == DEFAULT else ""
            print(f"{name:<{width}}  {exp.description}{default}")
        return 0

    if args.name not in EXPERIMENTS:
        run_parser.error(f"unknown experiment {args.name!r}; valid experiments: {', '.join(EXPERIMENTS)}")
    out_dir, summary = run_experiment(args.name, args.out, quick=args.quick, progress=True)
    print(f"{args.name}: wrote results to {out_dir}/")
    for path in sorted(p for p in out_dir.iterdir() if p.is_file()):
        print(f"  {path.name}")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
