#!/usr/bin/env python3
"""Renders an `orca timeline` trace (Chrome trace-event JSON) into a PNG: one row per thread
that did something, monitor holds (async b/e events) in green, blocked spans in red, waits in
orange, sleeps in grey, joins in blue, semaphore acquires in purple, and an arrow for each
monitor hand-off (flow s -> f) from the releasing thread to the thread that got the monitor.

    orca timeline out/run -o trace.json
    scripts/render-timeline.py trace.json docs/timeline.png [--title TEXT]

Needs matplotlib (pip install matplotlib).
"""

import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

KINDS = [
    # (label, colour, bar height, predicate on a complete event's name)
    ("blocked", "#d62728", 0.55, lambda n: n.startswith("blocked on ")),
    ("waiting", "#ff9f1c", 0.55, lambda n: n.startswith("wait on ")),
    ("sleeping", "#8c8c8c", 0.55, lambda n: n == "sleep" or n.startswith("sleep")),
    ("joining", "#1f77b4", 0.55, lambda n: n.startswith("join ")),
    ("acquiring semaphore", "#9467bd", 0.55, lambda n: n.startswith("acquire semaphore")),
]
HOLD = ("holding monitor", "#2ca02c", 0.3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", help="JSON written by `orca timeline`")
    ap.add_argument("png", help="image to write")
    ap.add_argument("--title", default=None)
    ap.add_argument("--width", type=float, default=11.0, help="inches")
    ap.add_argument("--dpi", type=int, default=100)
    a = ap.parse_args()

    with open(a.trace) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data

    names = {}
    for e in events:
        if e["ph"] == "M" and e.get("name") == "thread_name":
            names[e["tid"]] = e["args"]["name"]

    spans = {k[0]: [] for k in KINDS}  # label -> [(tid, start_us, dur_us)]
    holds = []
    open_holds = {}
    flows = {}  # id -> [start (tid, ts), finish (tid, ts)]
    first, last = {}, {}

    def seen(tid, ts, end=None):
        first[tid] = min(first.get(tid, ts), ts)
        last[tid] = max(last.get(tid, ts), end if end is not None else ts)

    for e in events:
        ph = e["ph"]
        if ph == "M":
            continue
        tid, ts = e["tid"], float(e["ts"])
        if ph == "X":
            dur = float(e.get("dur", 0))
            seen(tid, ts, ts + dur)
            for label, _, _, pred in KINDS:
                if pred(e["name"]):
                    spans[label].append((tid, ts, dur))
                    break
        elif ph == "b":
            seen(tid, ts)
            open_holds.setdefault(e["id"], []).append(ts)
        elif ph == "e":
            seen(tid, ts)
            starts = open_holds.get(e["id"])
            if starts:
                holds.append((tid, starts.pop(), ts))
        elif ph in ("s", "f"):
            flows.setdefault(e["id"], [None, None])[0 if ph == "s" else 1] = (tid, ts)
        else:
            seen(tid, ts)

    # Rows: threads that did something, in the order the trace numbers them.
    tids = sorted(first)
    row = {t: i for i, t in enumerate(tids)}
    t0 = min(first.values())
    ms = lambda us: (us - t0) / 1000.0  # noqa: E731

    fig_h = 1.0 + 0.45 * len(tids)
    fig, ax = plt.subplots(figsize=(a.width, fig_h), dpi=a.dpi)
    for t in tids:
        ax.hlines(row[t], ms(first[t]), ms(last[t]), color="#cccccc", lw=1, zorder=1)
    for label, colour, h, _ in KINDS:
        bars = {}
        for tid, ts, dur in spans[label]:
            bars.setdefault(tid, []).append((ms(ts), max(dur / 1000.0, 0.02)))
        for tid, b in bars.items():
            ax.broken_barh(b, (row[tid] - h / 2, h), facecolors=colour, zorder=2)
    bars = {}
    for tid, s, e in holds:
        bars.setdefault(tid, []).append((ms(s), max((e - s) / 1000.0, 0.02)))
    for tid, b in bars.items():
        ax.broken_barh(b, (row[tid] - HOLD[2] / 2, HOLD[2]), facecolors=HOLD[1], zorder=3)
    n_flows = 0
    for s, f in flows.values():
        if s and f and s[0] in row and f[0] in row:
            n_flows += 1
            ax.annotate(
                "",
                xy=(ms(f[1]), row[f[0]]),
                xytext=(ms(s[1]), row[s[0]]),
                arrowprops=dict(arrowstyle="->", color="black", lw=1.2),
                zorder=4,
            )

    ax.set_yticks(range(len(tids)))
    ax.set_yticklabels([names.get(t, str(t)) for t in tids], fontsize=9)
    ax.set_ylim(len(tids) - 0.5, -0.5)
    ax.set_xlabel("ms since the first event")
    ax.grid(axis="x", color="#eeeeee", zorder=0)
    legend = [Patch(color=c, label=l) for l, c, _, _ in KINDS if spans[l]]
    legend.append(Patch(color=HOLD[1], label=HOLD[0]))
    if n_flows:
        legend.append(plt.Line2D([], [], color="black", marker=">", lw=1.2, label="monitor hand-off"))
    ax.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.16 * 4.5 / fig_h),
              ncol=len(legend), fontsize=8, frameon=False)
    if a.title:
        ax.set_title(a.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.png)
    print(f"{a.png}: {len(tids)} threads, {sum(len(v) for v in spans.values())} spans, "
          f"{len(holds)} holds, {n_flows} hand-offs")


if __name__ == "__main__":
    main()
