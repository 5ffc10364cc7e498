#!/usr/bin/env python3
"""Plots for Documentation/simulation.md from scripts/simulate's JSON.

    plots.py WORK_DIR OUT_DIR

WORK_DIR holds the runs' JSON (seed000.json, seed003.json, cost-*.json);
OUT_DIR receives seed000.png, seed003.png and cost.png (gnuplot, as
scripts/bench's plots). Repetitions are pooled as the tables pool them.
"""
import json
import os
import subprocess
import sys
from collections import OrderedDict


def pooled(runs, key, num, den):
    """{series: {x: sum(num) / sum(den)}} over runs grouped by key(run)."""
    acc = OrderedDict()
    for r in runs:
        series, x = key(r)
        n, d = acc.setdefault(series, OrderedDict()).setdefault(x, [0, 0])
        acc[series][x] = [n + num(r), d + den(r)]
    return OrderedDict((s, OrderedDict((x, (n / d if d else 0.0)) for x, (n, d) in xs.items()))
                       for s, xs in acc.items())


def plot(out, name, title, xlabel, ylabel, series, logx=False):
    data = []
    plots = []
    for i, (label, points) in enumerate(series.items()):
        fname = os.path.join(out, f".{name}.{i}.dat")
        with open(fname, "w") as f:
            for x, y in points.items():
                f.write(f"{x}\t{y}\n")
        data.append(fname)
        plots.append(f"'{fname}' using 1:2 with linespoints title '{label}'")
    script = "\n".join([
        "set terminal pngcairo size 900,520 noenhanced font 'sans,10'",
        f"set output '{os.path.join(out, name + '.png')}'",
        "set grid ytics", "set key outside right top", f"set title '{title}'",
        f"set xlabel '{xlabel}'", f"set ylabel '{ylabel}'", "set yrange [0:*]",
        "set logscale x 2" if logx else "",
        "plot " + ", ".join(plots)])
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    for fname in data:
        os.remove(fname)
    if r.returncode != 0:
        sys.exit(f"plots.py: gnuplot failed on {name}: {r.stderr.strip()}")


def load(work, name):
    with open(os.path.join(work, name + ".json")) as f:
        return json.load(f)


def main():
    work, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    runs = [r for r in load(work, "seed000") if r["size"] > 1]
    plot(out, "seed000", "altra-160, fork: stale picks (a failed first claim)", "creators",
         "stale picks %",
         pooled(runs, lambda r: (r["policy"], r["size"]),
                lambda r: 100 * r["fork"]["stale_picks"], lambda r: r["fork"]["idle_picks"]))
    runs = load(work, "seed003")
    plot(out, "seed003", "xeon-64, schedidle: completion time", "SCHED_IDLE workers",
         "simulated seconds",
         pooled(runs, lambda r: (r["sched_idle"], r["size"]),
                lambda r: r["done_ns"] / 1e9, lambda r: 1), logx=True)
    cost = []
    for topo in ["vm-8", "xeon-64", "altra-160", "epyc-256", "vera-352"]:
        cost += load(work, "cost-" + topo)
    plot(out, "cost", "fork select_cpu: CPUs examined per call", "CPUs", "CPUs examined",
         pooled(cost, lambda r: (r["policy"], len(r["fork_picks"])),
                lambda r: r["fork"]["examined"], lambda r: r["fork"]["selects"]))


if __name__ == "__main__":
    main()
