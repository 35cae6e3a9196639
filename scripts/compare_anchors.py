#!/usr/bin/env python3
"""cc1d's anchor results next to the reference library's, as a Markdown table.

Reads the reference library's cells (ANCHORS.md's table: "µs / % of copy" per shape,
dtype, silu and column) and a cc1d-bench JSON of configs/bench/anchors.json, and prints
one row per (shape, dtype, silu) with cc1d's "µs / %" and the reference's "%" for fwd
cf, fwd cl, bwd cf and bwd cl; ▼ marks a cell where cc1d's % of copy is lower. Ends
with the count of such cells.

    scripts/compare_anchors.py path/to/ANCHORS.md docs/bench/bench-anchors.json
"""

import json
import re
import sys

COLUMNS = [("fwd", "channel_first", "ref-cf fwd"), ("fwd", "channel_last", "ref-cl fwd"),
           ("bwd", "channel_first", "ref-cf bwd"), ("bwd", "channel_last", "ref-cl bwd")]


def reference_cells(anchors_text):
    """{(shape, dtype, silu): {column: percent}} from ANCHORS.md's first table."""
    lines = anchors_text.splitlines()
    header_at = next(i for i, line in enumerate(lines) if line.startswith("| shape (B×D×L, W)"))
    header = [h.strip() for h in lines[header_at].strip("|").split("|")]
    cells = {}
    for line in lines[header_at + 2:]:
        if not line.startswith("|"):
            break
        row = [c.strip() for c in line.strip("|").split("|")]
        shape = row[0].split(" (")[0]
        key = (shape, row[1], row[2] == "y")
        cells[key] = {}
        for name in (c[2] for c in COLUMNS):
            match = re.search(r"/\s*([\d.]+)%", row[header.index(name)])
            cells[key][name] = float(match.group(1))
    return cells


def cc1d_cells(bench):
    """{(shape, dtype, silu, op, layout): (µs, %)} for the plain anchor cases."""
    cells = {}
    for case in bench["cases"]:
        if case.get("seq_idx") or case.get("initial_states") or case.get("final_states"):
            continue
        if not case.get("deterministic", True) or case.get("weight_dtype") != case.get("x_dtype"):
            continue
        key = (case["name"], case["x_dtype"], case["activation"] == "silu", case["op"], case["layout"])
        cells[key] = (case["median_us"], case["percent_of_copy"])
    return cells


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    reference = reference_cells(open(sys.argv[1], encoding="utf-8").read())
    ours = cc1d_cells(json.load(open(sys.argv[2], encoding="utf-8")))
    print("| shape | dtype | silu | fwd cf | fwd cl | bwd cf | bwd cl |")
    print("|---|---|---|---|---|---|---|")
    below = total = 0
    for (shape, dtype, silu), ref in reference.items():
        row = [shape, dtype, "y" if silu else "n"]
        for op, layout, name in COLUMNS:
            mine = ours.get((shape, dtype, silu, op, layout))
            if mine is None or mine[1] is None:
                row.append(f"– (ref {ref[name]:.0f}%)")
                continue
            total += 1
            # Whole-percent comparison, as the reference table is given in whole percent.
            worse = round(mine[1]) < ref[name]
            below += worse
            row.append(f"{mine[0]:.1f} µs / {mine[1]:.0f}% (ref {ref[name]:.0f}%){' ▼' if worse else ''}")
        print("| " + " | ".join(row) + " |")
    print(f"\n{below} of {total} cells below the reference library's % of copy.")


if __name__ == "__main__":
    main()
