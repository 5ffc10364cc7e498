#!/usr/bin/env python3
"""Fills the figures of Documentation/simulation.d/*.md from the tables.

  figures.py WORK TEXT   prints TEXT with every {{NAME}} replaced by the
                         figure NAME, computed from the markdown tables
                         scripts/simulate wrote into WORK (WORK/NAME.md),
                         and every @NAME:UNIT@ by the simulator's parameter
                         NAME (a default of loader/sim/workloads.h or
                         loader/sim/machine.h) in ns, us, ms or n; an
                         unknown name, or a figure whose rows are missing,
                         is an error (exit 1)

So the prose quotes what the tables say: a figure in the text is one of the
functions below, never a number typed by hand. Ratios print as 0.45x,
percentages as they are in the tables.
"""
import functools
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# The seed's own figures (seed 000's cover letter: conditional stale-pick
# rates on the Altra, before the series and with it), which the text
# compares against.
SEED000 = {("recency", 32): 0.771, ("reservoir", 32): 0.335,
           ("recency", 64): 1.242, ("reservoir", 64): 0.633}


@functools.lru_cache(maxsize=None)
def tables(work, name):
    """Rows of every table in WORK/NAME.md, as dicts keyed by header."""
    rows, header = [], None
    with open(f"{work}/{name}.md", encoding="utf-8") as f:
        for line in f:
            if not line.startswith("|"):
                header = None
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not set(cells[0]) <= set("-"):
                rows.append(dict(zip(header, cells)))
    return rows


def row(work, name, **match):
    found = [r for r in tables(work, name)
             if all(r.get(k) == str(v) for k, v in match.items())]
    if len(found) != 1:
        sys.exit(f"figures: {name}: {len(found)} rows match {match}")
    return found[0]


def num(work, name, column, **match):
    return float(row(work, name, **match)[column].rstrip("%x"))


def stale(work, policy, creators):
    return num(work, "seed000", "stale picks %", policy=policy, creators=creators)


def seed000_ratio(work, creators):
    # The ratio table's own cell: computed from unrounded rates.
    return row(work, "seed000", ratio="reservoir / recency", creators=creators)["stale picks"]


def seed000_times_seed(work):
    times = [stale(work, p, c) / SEED000[(p, c)] for (p, c) in SEED000]
    return f"{min(times):.0f} to {max(times):.0f}"


def first_cv_range(work):
    cvs = [num(work, "seed000", "fork-pick CV", policy="first", creators=c) for c in (16, 32, 64)]
    return f"{min(cvs):.1f}-{max(cvs):.1f}"


def recency_cv_range(work):
    cvs = [num(work, "seed000", "fork-pick CV", policy="recency", creators=c) for c in (16, 32, 64)]
    lo, hi = f"{min(cvs):.1f}", f"{max(cvs):.1f}"
    return lo if lo == hi else f"{lo}-{hi}"


def cost_examined(work, topology):
    return f"{num(work, 'cost', 'CPUs examined per fork select', topology=topology, policy='reservoir'):.0f}"


def cost_select_us(work, topology):
    ns = num(work, "cost", "simulated select_cpu ns (fork)", topology=topology, policy="reservoir")
    return f"{ns / 1000:.1f}"


def seed003_range(work, lo, hi):
    values = [num(work, "seed003", "vs first mode", **{"sched-idle": "wakee-aware"}, workers=w)
              for w in (2, 4, 8, 16, 32) if lo <= w <= hi]
    return f"{min(values):+.1f}% to {max(values):+.1f}%"


def vm8(work, column, policy, creators, fmt="{:.2f}"):
    return fmt.format(num(work, "vm8", column, policy=policy, creators=creators))


FIGURES = {
    "seed000_ratio_16": lambda w: seed000_ratio(w, 16),
    "seed000_ratio_32": lambda w: seed000_ratio(w, 32),
    "seed000_ratio_64": lambda w: seed000_ratio(w, 64),
    "seed000_times_seed": seed000_times_seed,
    "seed000_first_cv": first_cv_range,
    "seed000_recency_cv": recency_cv_range,
    "seed000_one_creator_cv": lambda w: f"{num(w, 'seed000', 'fork-pick CV', policy='first', creators=1):.1f}",
    "altra_select_us": lambda w: cost_select_us(w, "altra-160"),
    "cost_examined_8": lambda w: cost_examined(w, "vm-8"),
    "cost_examined_160": lambda w: cost_examined(w, "altra-160"),
    "cost_examined_352": lambda w: cost_examined(w, "vera-352"),
    "seed003_range_2_32": lambda w: seed003_range(w, 2, 32),
    "seed003_at_64": lambda w: f"{num(w, 'seed003', 'vs first mode', **{'sched-idle': 'wakee-aware'}, workers=64):+.1f}%",
    "seed003_mainline_packing_8": lambda w: row(w, "seed003", **{"sched-idle": "mainline"}, workers=8)["packing"],
    "vm8_cv_first_4": lambda w: vm8(w, "fork-pick CV", "first", 4),
    "vm8_cv_reservoir_4": lambda w: vm8(w, "fork-pick CV", "reservoir", 4),
    "vm8_cv_first_1": lambda w: vm8(w, "fork-pick CV", "first", 1),
    "vm8_cv_reservoir_1": lambda w: vm8(w, "fork-pick CV", "reservoir", 1),
    "vm8_forks_per_creator": lambda w: vm8(w, "forks/s", "first", 1, "{:.0f}"),
    "vm8_forks_saturated": lambda w: f"{num(w, 'vm8', 'forks/s', policy='first', creators=8):,.0f}",
    "vm8_examined_4": lambda w: vm8(w, "CPUs examined per select", "reservoir", 4, "{:.1f}"),
    "vm8_select_us_4": lambda w: f"{(parameters()['select_base_ns'] + parameters()['scan_ns_per_cpu'] * num(w, 'vm8', 'CPUs examined per select', policy='reservoir', creators=4)) / 1000:.2f}",
    "vm8_claim_ratio_4": lambda w: row(w, "vm8", ratio="reservoir / first", creators=4)["claim failures"],
}


@functools.lru_cache(maxsize=None)
def parameters():
    """The simulator's parameters and their defaults, from its headers."""
    values = {}
    for path in ("loader/sim/workloads.h", "loader/sim/machine.h"):
        with open(f"{ROOT}/{path}", encoding="utf-8") as f:
            for name, value in re.findall(r"(?:uint64_t|uint32_t)\s+(\w+)\s*=\s*([0-9']+);",
                                          f.read()):
                values[name] = int(value.replace("'", ""))
    return values


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    work = argv[1]
    with open(argv[2], encoding="utf-8") as f:
        text = f.read()

    def fill(m):
        name = m.group(1)
        if name not in FIGURES:
            sys.exit(f"figures: {argv[2]} names an unknown figure {{{{{name}}}}}")
        return FIGURES[name](work)

    values = parameters()
    scale = {"ns": 1, "us": 1000, "ms": 1000000, "n": 1}

    def parameter(m):
        if m.group(1) not in values:
            sys.exit(f"figures: {argv[2]} names {m.group(1)}, which the simulator's headers do not define")
        return f"{values[m.group(1)] / scale[m.group(2)]:g}"

    text = re.sub(r"@(\w+):(ns|us|ms|n)@", parameter, text)
    sys.stdout.write(re.sub(r"\{\{(\w+)\}\}", fill, text))


if __name__ == "__main__":
    main(sys.argv)
