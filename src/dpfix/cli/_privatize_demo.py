"""``dpfix privatize --demo``: the package's synthetic table and, when the shared data folder
exists, the county homicides, each released with its own plan into ``--out-dir``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from dpfix.cli import _privatize_outputs as outputs
from dpfix.cli._privatize_plan import method_keywords, plan_from_args
from dpfix.numbers.numeric import require

__all__ = ["demo", "DEMO_EPSILON", "DEMO_SYNTHETIC_UPPER", "DEMO_CRIME", "DEMO_KEYS",
           "DEMO_FILES"]

DEMO_EPSILON = 1.0
DEMO_SYNTHETIC_UPPER = 40
DEMO_CRIME = ("crime_data.csv", "MURDER", 50)
#: The key column each demo table keeps (every other column is dropped: not private).
DEMO_KEYS = {"synthetic": ["category"], "crime": ["county_name"]}
DEMO_FILES = ("privatized.csv", "report.json", "plot.png", "confidential_report.json")


def demo(args: argparse.Namespace, staged: Any, release_file: Any) -> int:
    """Run the demo: its inputs and outputs are its own (the flags that would name others
    are refused); ``release_file`` releases one job as ``dpfix privatize`` releases a file
    (:func:`dpfix.cli.privatize.release_file`), its outputs staged in ``staged``."""
    from dpfix.io import data

    pd = require("pandas")

    given = [flag for flag, v in (("INPUT", args.input), ("--column", args.column),
                                  ("--upper", args.upper), ("--out", args.out),
                                  ("--report", args.report), ("--plot", args.plot),
                                  ("--confidential-report", args.confidential_report),
                                  ("--histogram", args.histogram),
                                  ("--key", args.key), ("--keep", args.keep),
                                  ("--engine dask", args.engine == "dask"),
                                  ("--sep", args.sep),
                                  ("--column-epsilon", args.column_epsilon),
                                  ("--ledger", getattr(args, "ledger", None)),
                                  ("--header/--no-header", args.header is not None)) if v]
    if given:
        raise ValueError(f"--demo chooses its own inputs and outputs; drop {', '.join(given)}")
    options = method_keywords(args)
    seed = options["seed"]
    if options.pop("upper_share") is not None:
        raise ValueError("--upper-share: applies to --upper auto only; --demo sets its bounds")
    root = Path(args.out_dir or "out/privatize")
    jobs = [("synthetic", root / "synthetic" / "input.csv", "count", DEMO_SYNTHETIC_UPPER)]
    if os.environ.get("DPFIX_DATA"):
        jobs.append(("crime", data.data_path(DEMO_CRIME[0]), *DEMO_CRIME[1:]))
    else:
        try:
            data.data_dir()
            jobs.append(("crime", data.data_path(DEMO_CRIME[0]), *DEMO_CRIME[1:]))
        except FileNotFoundError:
            print("dpfix privatize: shared data not found (set DPFIX_DATA): "
                  "crime demo skipped")
    eps = str(DEMO_EPSILON) if args.epsilon is None else args.epsilon
    outs = {f"{name}/{f}": root / name / f for name, *_ in jobs for f in DEMO_FILES}
    outputs.check_outputs({"input.csv": jobs[0][1], **outs}, args.force,
                          [p for _, p, _, _ in jobs[1:]], missing_folders_ok=True)
    created = [d for d in [root, *(root / name for name, *_ in jobs)] if not d.exists()]
    for d in created:
        d.mkdir(parents=True, exist_ok=True)
    try:
        table = pd.DataFrame({"category": [f"c{i:05d}" for i in range(2000)],
                              "count": data.synthetic_counts()})
        synthetic_input = staged.temp(jobs[0][1], "input.csv")
        table.to_csv(synthetic_input, index=False)
        summary = []
        for name, path, column, upper in jobs:
            d = root / name
            job = argparse.Namespace(**{**vars(args), "column": [column], "epsilon": eps,
                                        "upper": [str(upper)], "column_epsilon": None,
                                        "key": DEMO_KEYS[name], "keep": None})
            source = synthetic_input if name == "synthetic" else path
            plan = plan_from_args(job, dict(options), source, d / DEMO_FILES[0])
            secret = d / DEMO_FILES[3] if name == "synthetic" else None
            paths = {"--out": d / DEMO_FILES[0], "--report": d / DEMO_FILES[1],
                     "--plot": d / DEMO_FILES[2], "--confidential-report": secret}
            result = release_file(plan, path, paths, staged, force=args.force,
                                  quiet=args.quiet, label=f"{name} ({column})")
            summary.append((result, {k.lstrip("-"): v for k, v in paths.items()}))

        def say() -> None:
            for result, paths in summary:
                outputs.announce(result["columns"], paths)
            print(f"dpfix privatize: demo outputs in {root}")
            outputs.warn_seeded(seed, args.quiet)
        outputs.commit_outputs(staged, say)
    except BaseException:
        staged.discard()
        for d in reversed(created):  # the folders this run made, if still empty
            try:
                d.rmdir()
            except OSError:
                pass
        raise
    return 0
