#!/usr/bin/env python3
"""cc1d-bench runs of several builds or settings side by side, case by case.

Each argument names one build (or setting) and the JSON files of its runs:

    scripts/compare_runs.py before=/tmp/old-1.json,/tmp/old-2.json after=/tmp/new-1.json,/tmp/new-2.json

The first is the baseline. For every case (matched by label and shape) it prints each
build's mean of the runs' median µs, with the runs' own values and the change against the
baseline, the mean % of copy bandwidth, and whether every run's check against the fp64
reference passed. Runs of one build should alternate with the others' (A B A B), since
timings drift over minutes; the spread between a build's runs is that drift.

Exit status: 0, or 1 when a check failed in any run (a timing of a wrong result means
nothing) or a case is missing from some run; 2 on bad arguments or files.
"""

import json
import sys


def case_key(case):
    return (case["label"], case["shape_text"])


def load_build(spec):
    """("name", [run, ...]) from "name=a.json,b.json"."""
    name, sep, files = spec.partition("=")
    if not sep or not name or not files:
        raise ValueError(f"expected NAME=RUN.json[,RUN.json...], got {spec!r}")
    runs = []
    for path in files.split(","):
        with open(path, encoding="utf-8") as f:
            runs.append(json.load(f))
    return name, runs


def compare(builds):
    """Rows of the comparison and whether every case is present and checked in every run.

    builds: [(name, [run, ...]), ...], the first the baseline. A row: {"label", "shape",
    "builds": [{"name", "runs_us", "mean_us", "change", "percent_of_copy"}], "ok"}, in the
    order of the baseline's first run; "change" is None for the baseline.
    """
    indexed = [(name, [{case_key(c): c for c in run["cases"]} for run in runs]) for name, runs in builds]
    base_first = builds[0][1][0]["cases"]
    rows, complete = [], True
    for key in (case_key(c) for c in base_first):
        row = {"label": key[0], "shape": key[1], "builds": [], "ok": True}
        for name, runs in indexed:
            cases = [run.get(key) for run in runs]
            if any(c is None for c in cases):
                complete = False
                row["ok"] = False
                row["builds"].append({"name": name, "runs_us": [], "mean_us": None, "change": None,
                                      "percent_of_copy": None})
                continue
            row["ok"] = row["ok"] and all(c["check"]["ok"] for c in cases)
            runs_us = [c["median_us"] for c in cases]
            row["builds"].append({
                "name": name,
                "runs_us": runs_us,
                "mean_us": sum(runs_us) / len(runs_us),
                "change": None,
                "percent_of_copy": sum(c["percent_of_copy"] for c in cases) / len(cases),
            })
        base = row["builds"][0]["mean_us"]
        for b in row["builds"][1:]:
            if base and b["mean_us"] is not None:
                b["change"] = 100.0 * (b["mean_us"] / base - 1.0)
        rows.append(row)
    return rows, complete


def format_row(row):
    cells = []
    for b in row["builds"]:
        if b["mean_us"] is None:
            cells.append(f"{b['name']} missing")
            continue
        runs = "/".join(f"{t:.2f}" for t in b["runs_us"])
        change = "" if b["change"] is None else f" {b['change']:+.1f}%"
        cells.append(f"{b['name']} {b['mean_us']:.2f} ({runs}){change} {b['percent_of_copy']:.1f}%")
    status = "ok" if row["ok"] else "CHECK FAILED OR MISSING"
    return f"{row['label']:40s} {row['shape']:11s} " + " | ".join(cells) + f" | {status}"


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        builds = [load_build(spec) for spec in argv[1:]]
    except (ValueError, OSError, json.JSONDecodeError) as e:
        print(f"compare_runs.py: {e}", file=sys.stderr)
        return 2
    for name, runs in builds:
        copies = ", ".join(f"{run.get('copy_gb_per_s', 0):.0f}" for run in runs)
        print(f"# {name}: {runs[0].get('device', '?')}, copy GB/s {copies}")
    rows, complete = compare(builds)
    for row in rows:
        print(format_row(row))
    return 0 if complete and all(row["ok"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
