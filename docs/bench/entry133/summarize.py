#!/usr/bin/env python3
"""Entry 133's A/B table: the mean of the rounds' medians per case, each build against base.

    summarize.py DIR   (DIR holds ab-SIDE-N.json from cc1d-bench --json, SIDE base and others)
"""
import json
import pathlib
import statistics
import sys

folder = pathlib.Path(sys.argv[1])
runs = {}
for path in sorted(folder.glob("ab-*-*.json")):
    side = path.stem.split("-")[1]
    runs.setdefault(side, []).append({c["label"]: c for c in json.loads(path.read_text())["cases"]})
if "base" not in runs or len(runs) < 2:
    sys.exit("summarize.py: need ab-base-N.json and another side's ab-SIDE-N.json")
others = sorted(side for side in runs if side != "base")
print("| case | base µs (rounds) | " + " | ".join(f"{o} µs (rounds) | change | % of copy" for o in others) + " |")
print("|---|---|" + "---|---|---|" * len(others))
for label, first in runs["base"][0].items():
    base = [r[label]["median_us"] for r in runs["base"] if label in r]
    row = f"| {label} {first['shape_text']} | {' / '.join(f'{t:.1f}' for t in base)} |"
    for side in others:
        times = [r[label]["median_us"] for r in runs[side] if label in r]
        if not times:
            row += " – | – | – |"
            continue
        change = (statistics.mean(times) / statistics.mean(base) - 1) * 100
        pct = statistics.mean(r[label]["percent_of_copy"] for r in runs[side] if label in r)
        row += f" {' / '.join(f'{t:.1f}' for t in times)} | {change:+.1f}% | {pct:.1f}% |"
    print(row)
