#!/usr/bin/env python3
"""Chart of the overhead table: slowdown against no agent per workload and mode (the wall-time
ratio, or for a server or a steady-state program its no-agent throughput over the mode's), one panel
per JDK, log scale, min–max whiskers. Called by benches/run-table.

Usage: benches/chart.py CHART.csv OUT.png   (columns: jdk, workload, mode, ratio, lo, hi)
Needs matplotlib (pip install matplotlib).
"""

import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODES = [("jvmti", "#d62728"), ("instrument", "#1f77b4"), ("jfr", "#7f7f7f")]


def main():
    src, dst = sys.argv[1], sys.argv[2]
    rows = list(csv.DictReader(open(src)))
    jdks = list(dict.fromkeys(r["jdk"] for r in rows))
    fig, axes = plt.subplots(len(jdks), 1, figsize=(11, 4.2 * len(jdks)), squeeze=False)
    for ax, jdk in zip(axes[:, 0], jdks):
        sub = [r for r in rows if r["jdk"] == jdk]
        workloads = list(dict.fromkeys(r["workload"] for r in sub))
        width = 0.8 / len(MODES)
        for k, (mode, color) in enumerate(MODES):
            xs, ys, lo, hi = [], [], [], []
            for i, w in enumerate(workloads):
                r = next((r for r in sub if r["workload"] == w and r["mode"] == mode), None)
                if r is None:
                    continue
                y = float(r["ratio"])
                xs.append(i + (k - (len(MODES) - 1) / 2) * width)
                ys.append(y)
                lo.append(max(y - float(r["lo"]), 0))
                hi.append(max(float(r["hi"]) - y, 0))
            ax.bar(xs, ys, width, label=mode, color=color, yerr=[lo, hi], capsize=2)
            for x, y in zip(xs, ys):
                ax.text(x, y * 1.05, f"{y:.1f}", ha="center", va="bottom", fontsize=6)
        ax.set_yscale("log")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(workloads)))
        ax.set_xticklabels(workloads, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("slowdown against no agent (log)")
        ax.set_title(f"Orca overhead, JDK {jdk} (median of per-round ratios, min–max)")
        ax.legend(fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main()
