#!/usr/bin/env python3
"""Draw a cc1d-bench JSON result as a PNG: bars of % of copy bandwidth per case.

    cc1d-bench --config configs/bench/anchors.json --json anchors.json
    scripts/plot_bench.py anchors.json -o anchors.png

Forward/backward cases get one panel per dtype; each group on the x axis is a shape
(with its activation and features), and its bars are fwd and bwd in both layouts side
by side. Decode (update) and packed-prefill (varlen_fwd) cases share a last panel.
Bars of cases that failed their check are hatched and marked; cases that did not run
are left out and listed under the title. Where the run timed a device copy of each case's
bytes (`same_size_copy_us`), a black tick over the bar marks the % of copy bandwidth that
copy reached: the most any kernel moving those bytes could show under the same per-call
costs.
"""
import argparse
import json
import sys
from collections import OrderedDict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
except ImportError:  # the bench itself never needs it
    sys.exit("plot_bench.py needs matplotlib: pip install matplotlib")

# (op, layout) -> bar position in a group, legend text, colour.
BARS = OrderedDict([
    (("fwd", "channel_first"), ("fwd channel-first", "#1f77b4")),
    (("fwd", "channel_last"), ("fwd channel-last", "#9ecae1")),
    (("bwd", "channel_first"), ("bwd channel-first", "#d95f02")),
    (("bwd", "channel_last"), ("bwd channel-last", "#fdae6b")),
])
SERVING_COLOURS = {"update": "#2ca02c", "varlen_fwd": "#9467bd"}
DTYPES = ["fp32", "fp16", "bf16"]


def features(case):
    """What sets a case apart besides op, layout and dtype, as short words."""
    words = []
    if case["weight_dtype"] != case["x_dtype"]:
        words.append("w:" + case["weight_dtype"])
    if case["activation"] != "none":
        words.append(case["activation"])
    if case["seq_idx"]:
        words.append("seq_idx")
    if case["initial_states"]:
        words.append("states" if case["op"] == "varlen_fwd" else "init")
    if case["final_states"]:
        words.append("final")
    if case["op"] == "bwd" and not case["deterministic"]:
        words.append("nondet")
    if case["cache_seqlens"]:
        words.append("circular")
    if case["state_indices"]:
        words.append("indexed")
    return words


def group_label(case):
    """x-axis text of a fwd/bwd group: name, shape, width and features."""
    words = features(case)
    # Non-deterministic backward has no forward twin: keep it in the plain group's label.
    if "nondet" in words:
        words.remove("nondet")
        words.append("bwd nondet")
    return "{}\n{} w{}\n{}".format(case["name"], case["shape_text"], case["width"], " ".join(words) or "plain")


def same_size_copy_percent(case):
    """% of copy bandwidth the same-size copy reached, or None where the run has none."""
    ratio = case.get("percent_of_same_size_copy")
    if not ratio:
        return None
    return 100.0 * case["percent_of_copy"] / ratio


def draw_bars(ax, positions, cases, colours, width):
    values = [c["percent_of_copy"] for c in cases]
    bars = ax.bar(positions, values, width=width, color=colours, edgecolor="black", linewidth=0.3)
    for bar, case in zip(bars, cases):
        ceiling = same_size_copy_percent(case)
        if ceiling is not None:
            ax.hlines(ceiling, bar.get_x(), bar.get_x() + bar.get_width(), colors="black", linewidth=1.2)
    for bar, case, value in zip(bars, cases, values):
        check = case.get("check")
        failed = check is not None and not check["ok"]
        if failed:
            bar.set_hatch("xx")
            bar.set_edgecolor("red")
        text = "{:.0f}".format(value) if len(cases) <= 64 else ""
        if failed:
            text = (text + "\n" if text else "") + "check\nfailed"
        if text:
            ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom",
                        fontsize=6, xytext=(0, 1), textcoords="offset points", color="red" if failed else "black")


def style_axis(ax, title, top):
    ax.set_title(title, fontsize=10, loc="left")
    ax.set_ylabel("% of copy bandwidth")
    ax.set_ylim(0, max(110.0, top * 1.12))
    ax.axhline(100, color="grey", linewidth=0.8)
    ax.axhline(90, color="grey", linewidth=0.6, linestyle="--")
    ax.grid(axis="y", linewidth=0.3, alpha=0.6)
    ax.set_axisbelow(True)


def plot_training(ax, dtype, cases):
    """One panel: the fwd/bwd cases of one dtype, grouped by shape and features."""
    groups = OrderedDict()
    for case in cases:
        groups.setdefault(group_label(case), []).append(case)
    bar_width = 0.8 / len(BARS)
    top = 0.0
    for index, (label, members) in enumerate(groups.items()):
        for case in members:
            slot = list(BARS).index((case["op"], case["layout"]))
            text, colour = BARS[(case["op"], case["layout"])]
            draw_bars(ax, [index - 0.4 + bar_width * (slot + 0.5)], [case], [colour], bar_width)
            top = max(top, case["percent_of_copy"], same_size_copy_percent(case) or 0.0)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups.keys(), fontsize=6)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    style_axis(ax, dtype, top)


def plot_serving(ax, cases):
    """The last panel: decode steps and packed prefill, one bar per case."""
    labels = ["{} {}\n{}\n{}".format(c["name"], c["x_dtype"], c["shape_text"], " ".join(features(c)) or "plain")
              for c in cases]
    draw_bars(ax, range(len(cases)), cases, [SERVING_COLOURS[c["op"]] for c in cases], 0.6)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels(labels, fontsize=6)
    ax.set_xlim(-0.6, max(len(cases), 6) - 0.4)   # a lone bar stays bar-sized
    style_axis(ax, "decode (update) and packed prefill (varlen_fwd)",
               max(max(c["percent_of_copy"], same_size_copy_percent(c) or 0.0) for c in cases))


def main():
    parser = argparse.ArgumentParser(description="Draw cc1d-bench --json output as bars of % of copy bandwidth.")
    parser.add_argument("results", help="JSON written by cc1d-bench --json")
    parser.add_argument("-o", "--output", help="PNG to write (default: the results file with .png)")
    parser.add_argument("--title", help="title above the panels (default: config, device, date, copy bandwidth)")
    args = parser.parse_args()

    with open(args.results) as stream:
        run = json.load(stream)
    measured = [c for c in run["cases"] if c.get("percent_of_copy") is not None]
    missing = [c["label"] for c in run["cases"] if c.get("percent_of_copy") is None]
    training = OrderedDict((d, [c for c in measured if c["op"] in ("fwd", "bwd") and c["x_dtype"] == d])
                           for d in DTYPES)
    training = OrderedDict((d, cs) for d, cs in training.items() if cs)
    serving = [c for c in measured if c["op"] in ("update", "varlen_fwd")]
    panels = len(training) + (1 if serving else 0)
    if panels == 0:
        sys.exit("{}: no timed cases to draw".format(args.results))

    widest = max([len({group_label(c) for c in cs}) for cs in training.values()] + [len(serving) * 0.5])
    title = args.title or "cc1d-bench {} · {} ({}) · {} · copy {:.0f} GB/s".format(
        run.get("config", ""), run.get("device", "?"), run.get("target", "?"), run.get("date", ""),
        run.get("copy_gb_per_s", 0.0))
    if run.get("empty_kernel_us") is not None:
        title += " · empty kernel {:.1f} µs".format(run["empty_kernel_us"])
    if missing:
        title += "\nnot run: " + ", ".join(missing[:6]) + (" ..." if len(missing) > 6 else "")

    # Heights in inches: the title's lines and a legend row above the panels.
    title_lines = title.count("\n") + 1
    header = 0.2 + 0.2 * title_lines + 0.35
    height = 3.6 * panels + header
    figure, axes = plt.subplots(panels, 1, figsize=(max(10.0, 0.9 * widest + 2), height), squeeze=False)
    axes = [row[0] for row in axes]
    for ax, (dtype, cases) in zip(axes, training.items()):
        plot_training(ax, dtype, cases)
    if serving:
        plot_serving(axes[-1], serving)

    figure.suptitle(title, fontsize=10, y=1 - 0.1 / height, va="top")
    legend = [Patch(facecolor=colour, edgecolor="black", label=text) for text, colour in BARS.values()]
    legend += [Patch(facecolor=colour, edgecolor="black", label=op) for op, colour in SERVING_COLOURS.items()
               if any(c["op"] == op for c in serving)]
    legend.append(plt.Line2D([], [], color="grey", linestyle="--", label="90% target"))
    if any(same_size_copy_percent(c) is not None for c in measured):
        legend.append(plt.Line2D([], [], color="black", linewidth=1.2, label="a copy of the same bytes"))
    figure.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, 1 - (0.15 + 0.2 * title_lines) / height),
                  fontsize=7, ncol=len(legend), frameon=False)
    figure.tight_layout()
    figure.subplots_adjust(top=1 - (header + 0.25) / height)   # the panels' own titles need 0.25 in

    output = args.output or (args.results[:-5] if args.results.endswith(".json") else args.results) + ".png"
    figure.savefig(output, dpi=130)
    print("wrote {}".format(output))


if __name__ == "__main__":
    main()
