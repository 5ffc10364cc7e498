#!/usr/bin/python3
"""Turn scripts/bench's raw outputs into results.json, report.md and plots.

    report.py OUT        # reads OUT/raw (guest outputs) and OUT/host.env

Standard library only (Debian's python3). Exits non-zero with one line on
stderr when an experiment that ran left no parseable outputs.
"""

import itertools
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

EXPERIMENTS = {
    "fork": "Fork placement (seed 000)",
    "schedidle": "SCHED_IDLE batch work (seed 003)",
    "latency": "Wakeup latency beside SCHED_IDLE noise (seed 004)",
    "smt": "SMT: one task per core (seed 002)",
    "overhead": "Hot-path cost per callback",
    "foreground": "The foreground beside SCHED_IDLE work",
    "wakeup": "Wakeup latency of sleepers, against the floor",
    "scope": "What idle work is: the three --sched-idle-scope values (seed 004's review)",
}
FORK_POLICIES = ["kernel", "floor", "floor-nostats", "builtin", "recency", "first", "reservoir"]
CLAIM_POLICIES = ["recency", "first", "reservoir"]
SI_CONFIGS = ["kernel", "builtin", "mainline", "wakee-aware"]
LAT_CONFIGS = ["kernel", "builtin", "mainline", "wakee-aware", "idle-first", "ignore"]
LAT_SMOKE_CONFIGS = ["kernel", "mainline", "wakee-aware"]
SMT_CONFIGS = ["kernel", "builtin", "off", "idle-core"]
OH_POLICIES = ["floor", "builtin", "recency", "first", "reservoir", "default", "default-task", "sampled"]
SCOPE_CONFIGS = ["task", "cgroup", "hierarchy"]
SCOPE_LAYOUTS = ["t1", "t2", "kubepods-g", "kubepods-c"]
WK_CONFIGS = ["kernel", "floor", "builtin", "reservoir"]
WK_PARAMS = ["half-idle", "half-busy"]
FG_CONFIGS = ["kernel", "builtin", "mainline", "wakee-aware", "idle-first", "ignore"]
FG_QUICK_CONFIGS = ["kernel", "builtin", "wakee-aware"]
FG_PARAMS = ["half-alone", "half-noise", "all-alone", "all-noise"]
PCTS = [("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9)]
# The scheduler's performance goals (issue 4): claim key, what, bound, sense.
GOAL_FORK_SIZE = "8,4"
GOALS = [
    ("select_cpu_cost_ratio_reservoir_builtin", "`select_cpu` ns/call, reservoir / builtin", 1.5, "<="),
    ("select_cpu_cost_ratio_default_builtin", "`select_cpu` ns/call, default config / builtin", 1.5, "<="),
    ("select_cpu_cost_ratio_hierarchy_task",
     "`select_cpu` ns/call, default config (scope hierarchy) / the same with scope task", 1.3, "<="),
    ("fork_8_4_claim_failure_ratio_reservoir_first",
     "claim-failure rate under `--fork 8 --fork-max 4`, reservoir / first", 0.6, "<="),
    ("fork_8_4_throughput_ratio_reservoir_kernel",
     "`--fork 8 --fork-max 4` bogo ops/s, reservoir / kernel scheduler", 1.0, ">="),
    ("fork_8_4_throughput_ratio_builtin_floor",
     "`--fork 8 --fork-max 4` bogo ops/s, builtin / floor", 0.98, ">="),
    ("fork_8_4_throughput_ratio_reservoir_floor",
     "`--fork 8 --fork-max 4` bogo ops/s, reservoir / floor", 0.97, ">="),
    ("wakeup_p99_ratio_reservoir_floor_half-idle",
     "sleepers' wakeup p99 (half the CPUs idle), default config / floor", 1.05, "<="),
    ("wakeup_p99_ratio_reservoir_floor_half-busy",
     "sleepers' wakeup p99 (beside CPU hogs), default config / floor", 1.05, "<="),
    ("daemon_cpu_share_sampled",
     "daemon CPU share with every pick an event and `top` at 1 Hz (fraction of one CPU)", 0.01, "<="),
    ("foreground_throughput_vs_kernel",
     "foreground throughput beside SCHED_IDLE noise (all CPUs), default config / kernel", 0.95, ">="),
    ("foreground_throughput_vs_alone",
     "foreground throughput beside SCHED_IDLE noise / without it (all CPUs), default config", 0.9, ">="),
    ("foreground_p99_vs_kernel",
     "foreground wakeup p99 beside SCHED_IDLE noise (all CPUs), default config / kernel", 1.1, "<="),
    ("noise_work_vs_kernel",
     "SCHED_IDLE noise's work done beside the saturating foreground, default config / kernel", 2.0, "<="),
]

NOTE = ("These figures come from a QEMU TCG guest whose vCPUs share the host's "
        "cores (2 on the development machine), not from the seeds' hardware "
        "(160-CPU Altra, 64-thread Xeons, Vera). Absolute numbers mean little; "
        "the claim is the ratios between configurations measured in the same "
        "boot, over interleaved repetitions.")


class ParseError(Exception):
    pass


def read(path, default=None):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        if default is None:
            raise
        return default


def read_env(path):
    env = {}
    for line in read(path, "").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            env[k.strip()] = v.strip()
    return env


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


# ---- parsers ------------------------------------------------------------------------
def parse_stress(d):
    """bogo ops/s (real time) of the first stressor: YAML first, else the metrc line."""
    y = read(os.path.join(d, "stress.yaml"), "")
    m = re.search(r"bogo-ops-per-second-real-time:\s*([0-9.eE+-]+)", y)
    ops = re.search(r"bogo-ops:\s*([0-9]+)", y)
    if m:
        return {"bogo_ops_s": float(m.group(1)), "bogo_ops": int(ops.group(1)) if ops else None}
    for line in (read(os.path.join(d, "stderr"), "") + read(os.path.join(d, "stdout"), "")).splitlines():
        f = line.split()
        # stress-ng: metrc: [pid] fork  5114  2.00  1.04  1.01  2556.65  2489.93
        if "metrc:" in f and len(f) >= 10 and re.fullmatch(r"[0-9]+", f[4] if len(f) > 4 else ""):
            return {"bogo_ops_s": float(f[8]), "bogo_ops": int(f[4])}
    raise ParseError("no stress-ng metrics (stress.yaml or metrc line)")


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ParseError(f"{os.path.basename(path)}: {e}") from None


def gen_of(stats, gen):
    for g in stats.get("generations", []):
        if g.get("generation") == gen:
            return g
    return None


def programs_delta(d):
    """Per BPF program (callback or tracepoint): calls and ns during the run."""
    after = load_json(os.path.join(d, "stats-after.json"))
    before_path = os.path.join(d, "stats-before.json")
    before = load_json(before_path) if os.path.exists(before_path) else {}
    earlier = {str(p.get("name")): p for p in before.get("programs", [])}
    out = {}
    for p in after.get("programs", []):
        name = str(p.get("name"))
        b = earlier.get(name, {})
        out[name] = {"calls": p.get("run_count", 0) - b.get("run_count", 0),
                     "ns": p.get("run_time_ns", 0) - b.get("run_time_ns", 0)}
    return out


def counters_delta(d):
    """Counters of the run's generation (after - before) and select_cpu cost."""
    after = load_json(os.path.join(d, "stats-after.json"))
    before_path = os.path.join(d, "stats-before.json")
    before = load_json(before_path) if os.path.exists(before_path) else {}
    gen = after.get("generation")
    m = re.search(r"generation (\d+)", read(os.path.join(d, "ctl-set.txt"), ""))
    if m:
        gen = int(m.group(1))
    ga = gen_of(after, gen)
    if ga is None:
        raise ParseError(f"generation {gen} missing from stats-after.json")
    gb = gen_of(before, gen) or {}
    ca, cb = ga.get("counters", {}), gb.get("counters", {})
    delta = {k: v - cb.get(k, 0) for k, v in ca.items() if isinstance(v, (int, float))}
    out = {"generation": gen, "settings": ga.get("settings", {}), "counters": delta}
    fp_a, fp_b = ga.get("fork_picks", []), gb.get("fork_picks", [])
    if fp_a:
        out["fork_picks"] = [a - (fp_b[i] if i < len(fp_b) else 0) for i, a in enumerate(fp_a)]
    att = delta.get("claim_attempts", 0)
    out["claim_failure_rate"] = delta.get("claim_failures", 0) / att if att else None
    return out


def parse_cyclictest(d):
    text = read(os.path.join(d, "cyclictest.txt"), "")
    hist = {}
    maxes, overflows = [], 0
    for line in text.splitlines():
        if line.startswith("# Max Latencies:"):
            maxes = [int(x) for x in line.split(":", 1)[1].split()]
        elif line.startswith("# Histogram Overflows:"):
            overflows = sum(int(x) for x in line.split(":", 1)[1].split())
        elif not line.startswith("#"):
            f = line.split()
            if len(f) >= 2 and f[0].isdigit():
                hist[int(f[0])] = hist.get(int(f[0]), 0) + sum(int(x) for x in f[1:])
    total = sum(hist.values()) + overflows
    if total == 0:
        raise ParseError("cyclictest histogram is empty")
    vmax = max(maxes) if maxes else max(hist)
    if overflows:
        hist[vmax] = hist.get(vmax, 0) + overflows
    res = {"samples": total, "overflows": overflows, "max_us": vmax}
    keys = sorted(hist)
    for name, p in PCTS:
        want = math.ceil(total * p / 100.0)
        acc = 0
        for k in keys:
            acc += hist[k]
            if acc >= want:
                res[name] = k
                break
    return res


def parse_latency(d):
    res = {"cyclictest": parse_cyclictest(d)}
    pipe = read(os.path.join(d, "perf-pipe.txt"), "")
    m = re.search(r"([0-9.]+)\s+usecs/op", pipe)
    if m:
        res["pipe_us_per_op"] = float(m.group(1))
    elif os.path.exists(os.path.join(d, "perf-pipe.txt")):
        raise ParseError("perf bench sched pipe printed no usecs/op")
    hb = read(os.path.join(d, "hackbench.txt"), "")
    m = re.search(r"Time:\s*([0-9.]+)", hb)
    if not m:
        raise ParseError("hackbench printed no Time:")
    res["hackbench_s"] = float(m.group(1))
    return res


def parse_foreground(d):
    res = {"cyclictest": parse_cyclictest(d)}
    m = re.search(r"Total time:\s*([0-9.]+)", read(os.path.join(d, "messaging.txt"), ""))
    if not m:
        raise ParseError("perf bench sched messaging printed no Total time")
    res["messaging_s"] = float(m.group(1))
    m = re.search(r"Time:\s*([0-9.]+)", read(os.path.join(d, "hackbench.txt"), ""))
    if not m:
        raise ParseError("hackbench printed no Time:")
    res["hackbench_s"] = float(m.group(1))
    noise = read_env(os.path.join(d, "noise.env"))
    if noise:
        ticks, secs, hz = num(noise.get("noise_ticks")), num(noise.get("noise_s")), num(noise.get("clk_tck"))
        if ticks is None or not secs or not hz:
            raise ParseError("noise.env lacks noise_ticks, noise_s or clk_tck")
        res["noise_cpus"] = ticks / hz / secs
    return res


def parse_wakeup(d):
    """Median over the sleepers of each one's avg and p99 (loehle-wakelat):
    one sleeper's stall under TCG would dominate a mean."""
    avgs, p99s, maxes = [], [], []
    for name in sorted(os.listdir(d)):
        if not name.startswith("wakelat."):
            continue
        f = read(os.path.join(d, name), "").split()
        if len(f) < 3 or any(num(x) is None for x in f[:3]):
            raise ParseError(f"{name}: expected 'avg_us p99_us max_us', got {' '.join(f[:6])!r}")
        avgs.append(float(f[0]))
        p99s.append(float(f[1]))
        maxes.append(float(f[2]))
    if not p99s:
        raise ParseError("no wakelat.* outputs")
    return {"wake_avg_us": statistics.median(avgs), "wake_p99_us": statistics.median(p99s),
            "wake_max_us": max(maxes), "sleepers": len(p99s)}


def topology(raw):
    cores = {}
    for line in read(os.path.join(raw, "meta", "topology.tsv"), "").splitlines():
        f = line.split("\t")
        if len(f) < 2 or not f[1]:
            continue
        sib = expand_cpus(f[1])
        cores[int(f[0])] = min(sib) if sib else int(f[0])
    return cores


def expand_cpus(s):
    out = []
    for part in s.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def parse_smt(d, core_of):
    lines = read(os.path.join(d, "samples.txt"), "").splitlines()
    samples = [[int(x) for x in l.split()[1:]] for l in lines if l.startswith("s ")]
    if not samples:
        raise ParseError("no CPU samples in samples.txt")
    siblings = {}
    for cpu, core in core_of.items():
        siblings.setdefault(core, set()).add(cpu)
    smt_cores = [c for c, s in siblings.items() if len(s) > 1]
    both = shared = stacked = 0
    tasks = 0
    for s in samples:
        busy = set(s)
        if smt_cores:
            both += sum(1 for c in smt_cores if siblings[c] <= busy)
        per_core = {}
        for cpu in s:
            per_core[core_of.get(cpu, cpu)] = per_core.get(core_of.get(cpu, cpu), 0) + 1
        shared += sum(n for n in per_core.values() if n > 1)
        tasks += len(s)
        stacked += 1 if len(busy) < len(s) else 0
    return {
        "samples": len(samples),
        "both_busy_share": both / (len(samples) * len(smt_cores)) if smt_cores else None,
        "tasks_sharing_core": shared / tasks if tasks else None,
        "stacked_share": stacked / len(samples),
    }


def parse_run(raw, entry, core_of):
    d = os.path.join(raw, entry["dir"])
    exp, m = entry["exp"], {}
    if exp in ("fork", "smt", "overhead"):
        m.update(parse_stress(d))
    if exp == "schedidle":
        r = read_env(os.path.join(d, "result.env"))
        if num(r.get("completion_s")) is None:
            raise ParseError("no completion_s in result.env")
        m["completion_s"] = float(r["completion_s"])
    if exp == "latency":
        m.update(parse_latency(d))
    if exp == "smt":
        m.update(parse_smt(d, core_of))
    if exp == "foreground":
        m.update(parse_foreground(d))
    if exp == "overhead":
        hb = re.search(r"Time:\s*([0-9.]+)", read(os.path.join(d, "hackbench.txt"), ""))
        m["hackbench_s"] = float(hb.group(1)) if hb else None
    if exp == "wakeup":
        m.update(parse_wakeup(d))
    if exp == "scope":
        m["cyclictest"] = parse_cyclictest(d)
        m["noise_bogo_ops_s"] = parse_stress(d)["bogo_ops_s"]
    # The window between the two statistics snapshots (older runs: the
    # whole run, scheduler start and `ctl set` included).
    m["_elapsed_s"] = entry["run"].get("stats_window_s") or entry["run"].get("elapsed_s")
    spec = entry["run"].get("spec", entry["config"])
    if spec != "kernel" and entry["status"] == "ok":
        m["progs"] = programs_delta(d)
        sel = m["progs"].get("select_cpu", {})
        m["select_cpu_ns_per_call"] = sel["ns"] / sel["calls"] if sel.get("calls", 0) > 0 else None
        if not spec.startswith("floor"):
            m["scx"] = counters_delta(d)
            dm = read_env(os.path.join(d, "daemon.env"))
            if num(dm.get("daemon_ns")) is not None and num(dm.get("window_s")):
                m["daemon_cpu_share"] = float(dm["daemon_ns"]) / (float(dm["window_s"]) * 1e9)
                c = m["scx"]["counters"]
                m["events_per_s"] = c.get("events", 0) / float(dm["window_s"])
                m["event_drops"] = c.get("event_drops", 0)
        if exp == "overhead" and m["select_cpu_ns_per_call"] is None:
            raise ParseError("no select_cpu run-time statistics (programs[].run_count did not grow)")
    return m


# ---- statistics -----------------------------------------------------------------------
def summary(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v)}


def group(runs, exp):
    g = {}
    for r in runs:
        if r["exp"] == exp and not r["warmup"] and r["status"] == "ok" and r.get("metrics"):
            g.setdefault((r["config"], r["params"]), []).append(r)
    return g


def metric(rs, fn):
    out = []
    for r in rs:
        try:
            out.append(fn(r["metrics"]))
        except (KeyError, TypeError):
            out.append(None)
    return summary(out)


def fmt(x, digits=2):
    if x is None:
        return "n/a"
    if isinstance(x, float) and (abs(x) >= 1000 or x == int(x)) and digits <= 2:
        return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.{digits}f}"
    return f"{x:.{digits}f}"


def cell(s, digits=2, scale=1.0, unit=""):
    if not s:
        return "n/a"
    med = fmt(s["median"] * scale, digits)
    if s["n"] > 1:
        return f"{med}{unit} [{fmt(s['min'] * scale, digits)}-{fmt(s['max'] * scale, digits)}]"
    return f"{med}{unit}"


def ratio(a, b):
    if not a or not b or not b["median"]:
        return None
    return a["median"] / b["median"]


def pct(r):
    return "n/a" if r is None else f"{(r - 1) * 100:+.2f}%"


def rfmt(r, digits=3):
    return "n/a" if r is None else f"{r:.{digits}f}"


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


# ---- plots ---------------------------------------------------------------------------
class Plotter:
    def __init__(self, out):
        self.out = out
        self.dir = os.path.join(out, "plots")
        os.makedirs(self.dir, exist_ok=True)
        ok = subprocess.run(["gnuplot", "-e", "set terminal pngcairo"],
                            capture_output=True).returncode == 0
        self.term = ("set terminal pngcairo size 900,560 noenhanced font 'sans,10'" if ok
                     else "set terminal png size 900,560 noenhanced")
        self.made = []

    def plot(self, name, data, script):
        for fname, text in data.items():
            with open(os.path.join(self.dir, fname), "w") as f:
                f.write(text)
        gp = os.path.join(self.dir, name + ".gp")
        with open(gp, "w") as f:
            f.write(f"{self.term}\nset output '{name}.png'\nset grid ytics\nset key outside right top\n{script}\n")
        r = subprocess.run(["gnuplot", name + ".gp"], cwd=self.dir, capture_output=True, text=True)
        png = os.path.join(self.dir, name + ".png")
        if r.returncode != 0 or not os.path.exists(png):
            raise ParseError(f"gnuplot failed on {name}.gp: {r.stderr.strip().splitlines()[-1:]}")
        self.made.append(f"plots/{name}.png")
        return f"plots/{name}.png"


def lines_plot(p, name, title, ylabel, xlabels, series, logx=False):
    """series: {label: [summary or None per x]} -> yerrorlines per series."""
    data, plots = {}, []
    for i, (label, sums) in enumerate(series.items()):
        rows = []
        for x, s in enumerate(sums):
            if s:
                rows.append(f"{x}\t{s['median']}\t{s['min']}\t{s['max']}\t\"{xlabels[x]}\"")
        if not rows:
            continue
        fname = f"{name}.{i}.dat"
        data[fname] = "\n".join(rows) + "\n"
        # Series are nudged apart on x; the tick labels come from set xtics,
        # not from each series (which would print them once per series).
        plots.append(f"'{fname}' using ($1+{(i - len(series) / 2) * 0.03:.3f}):2:3:4 with yerrorlines title '{label}'")
    if not plots:
        return False
    tics = ", ".join(f'"{lab}" {x}' for x, lab in enumerate(xlabels))
    script = (f"set title '{title}'\nset ylabel '{ylabel}'\nset xrange [-0.5:{len(xlabels) - 0.5}]\n"
              f"set xtics ({tics})\nset yrange [0:*]\nplot " + ", \\\n     ".join(plots))
    return p.plot(name, data, script)


def bars_plot(p, name, title, ylabel, labels, sums):
    rows = [f"\"{l}\"\t{s['median']}\t{s['min']}\t{s['max']}" for l, s in zip(labels, sums) if s]
    if not rows:
        return False
    script = (f"set title '{title}'\nset ylabel '{ylabel}'\nset style data histogram\n"
              "set style histogram errorbars gap 1 lw 1\nset style fill solid 0.6 border -1\n"
              "set yrange [0:*]\nset key off\n"
              f"plot '{name}.dat' using 2:3:4:xtic(1) title '{ylabel}'")
    return p.plot(name, {f"{name}.dat": "\n".join(rows) + "\n"}, script)


def img(md, made, alt):
    if made:
        md.append(f"![{alt}]({made})\n")


# ---- experiments ---------------------------------------------------------------------------
def report_fork(runs, meta, p, md, claims):
    g = group(runs, "fork")
    sizes = meta.get("fork_sizes", "").split()
    md.append("Median `stress-ng --fork N --fork-max M` throughput (bogo ops/s, real time), "
              "min-max over repetitions in brackets; `smt=off` (seed 000's Altra has no SMT). "
              "`floor` = tests/bench/floor.bpf.c with the BPF run-time statistics on, as "
              "scx_loehle runs; `floor-nostats` without them. Change columns compare medians.\n")
    hdr = ("| --fork | --fork-max | " + " | ".join(FORK_POLICIES) +
           " | reservoir vs first | reservoir vs kernel | reservoir vs builtin | builtin vs floor | reservoir vs floor |")
    md += [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    tp = {pol: [] for pol in FORK_POLICIES}
    cf = {pol: [] for pol in CLAIM_POLICIES}
    for s in sizes:
        n, m = s.split(",")
        sums = {pol: metric(g.get((pol, s), []), lambda x: x["bogo_ops_s"]) for pol in FORK_POLICIES}
        for pol in FORK_POLICIES:
            tp[pol].append(sums[pol])
        if s == GOAL_FORK_SIZE:
            claims["fork_8_4_throughput_ratio_reservoir_kernel"] = ratio(sums["reservoir"], sums["kernel"])
            claims["fork_8_4_throughput_ratio_builtin_floor"] = ratio(sums["builtin"], sums["floor"])
            claims["fork_8_4_throughput_ratio_reservoir_floor"] = ratio(sums["reservoir"], sums["floor"])
            claims["fork_8_4_throughput_ratio_floor_run_time_stats"] = ratio(sums["floor"], sums["floor-nostats"])
        md.append(f"| {n} | {m} | " + " | ".join(cell(sums[pol], 1) for pol in FORK_POLICIES) +
                  f" | {pct(ratio(sums['reservoir'], sums['first']))} | {pct(ratio(sums['reservoir'], sums['kernel']))}"
                  f" | {pct(ratio(sums['reservoir'], sums['builtin']))} | {rfmt(ratio(sums['builtin'], sums['floor']))}"
                  f" | {rfmt(ratio(sums['reservoir'], sums['floor']))} |")
    md.append("")
    md.append("Claim-failure rate: the share of `select_cpu` claims of a chosen idle CPU "
              "that lost the race (the CPU was no longer idle), seed 000's \"stale pick\" "
              "analogue; `builtin` claims inside the kernel and is not counted.\n")
    hdr = "| Workload | recency | first | reservoir | reservoir/first |"
    md += [hdr, "|---|---|---|---|---|"]
    pooled = {pol: [0, 0] for pol in CLAIM_POLICIES}
    for s in sizes:
        n, m = s.split(",")
        sums = {}
        for pol in CLAIM_POLICIES:
            rs = g.get((pol, s), [])
            sums[pol] = metric(rs, lambda x: x["scx"]["claim_failure_rate"])
            cf[pol].append(sums[pol])
            for r in rs:
                c = r["metrics"].get("scx", {}).get("counters", {})
                pooled[pol][0] += c.get("claim_failures", 0)
                pooled[pol][1] += c.get("claim_attempts", 0)
        if s == GOAL_FORK_SIZE:
            claims["fork_8_4_claim_failure_ratio_reservoir_first"] = ratio(sums["reservoir"], sums["first"])
        md.append(f"| fork, {n} creators, fork-max {m} | " +
                  " | ".join(cell(sums[pol], 3, 100, "%") for pol in CLAIM_POLICIES) +
                  f" | {rfmt(ratio(sums['reservoir'], sums['first']))} |")
    rates = {pol: (f / a if a else None) for pol, (f, a) in pooled.items()}
    r = rates["reservoir"] / rates["first"] if rates["reservoir"] is not None and rates["first"] else None
    md.append(f"| all sizes, pooled | " + " | ".join(
        "n/a" if rates[pol] is None else f"{rates[pol] * 100:.3f}%" for pol in CLAIM_POLICIES) +
        f" | {rfmt(r)} |")
    md.append("")
    claims["fork_claim_failure_ratio_reservoir_first"] = r
    claims["fork_claim_failure_rates_pooled"] = rates
    claims["fork_throughput_geomean_ratio_reservoir_first"] = geomean(
        [ratio(a, b) for a, b in zip(tp["reservoir"], tp["first"])])
    md.append(f"**Claim:** pooled claim-failure ratio reservoir/first = **{rfmt(r)}** "
              f"(seed 000: 0.335/0.771 = 0.43 and 0.633/1.242 = 0.51 on the Altra); "
              f"throughput geometric-mean ratio reservoir/first = "
              f"{rfmt(claims['fork_throughput_geomean_ratio_reservoir_first'])}.\n")
    report_fork_spread(g, sizes, md, claims)
    xl = [s.replace(",", "/") for s in sizes]
    img(md, lines_plot(p, "fork_throughput", "stress-ng --fork N/M: bogo ops/s (median, min-max)", "bogo ops/s", xl, tp), "fork throughput")
    img(md, lines_plot(p, "fork_claim_failures", "claim-failure rate (fraction of claims)", "failures / attempts", xl, cf), "claim failures")


def spread_cv(picks):
    """Coefficient of variation of fork picks over CPUs (std / mean), as
    `scx_loehle sim` reports it (fork_pick_cv): 0 for an even spread."""
    if not picks or not sum(picks):
        return None
    mean = sum(picks) / len(picks)
    var = max(0.0, sum(x * x for x in picks) / len(picks) - mean * mean)
    return var ** 0.5 / mean


def report_fork_spread(g, sizes, md, claims):
    """Fork picks per CPU, summed over repetitions, and their spread: the
    VM's side of the simulator's validation (Documentation/simulation.md)."""
    md.append("Fork picks per CPU, summed over repetitions, and their coefficient of "
              "variation over the CPUs (std / mean; 0 = even), the figure "
              "`scx_loehle sim` reports as fork-pick CV.\n")
    md += ["| Workload | policy | fork picks per CPU | CV |", "|---|---|---|---|"]
    cvs = {}
    for s in sizes:
        n, m = s.split(",")
        for pol in CLAIM_POLICIES:
            total = []
            for r in g.get((pol, s), []):
                fp = (r.get("metrics") or {}).get("scx", {}).get("fork_picks") or []
                # A run without the tally adds nothing; one with more CPUs
                # (another boot) lengthens the list rather than cutting it.
                total = [a + b for a, b in itertools.zip_longest(total, fp, fillvalue=0)]
            cv = spread_cv(total)
            cvs[f"{pol} {n},{m}"] = cv
            md.append(f"| fork, {n} creators, fork-max {m} | {pol} | {' '.join(map(str, total)) or 'n/a'} | "
                      f"{'n/a' if cv is None else f'{cv:.3f}'} |")
    md.append("")
    claims["fork_pick_cv"] = cvs


def report_schedidle(runs, meta, p, md, claims):
    g = group(runs, "schedidle")
    sizes = meta.get("si_sizes", "").split()
    md.append(f"A fixed amount of work ({meta.get('si_jobs')} jobs of a {meta.get('si_loop')}-iteration "
              f"busy loop, each a fork+exec followed by a 10 ms sleep) split over N SCHED_IDLE workers "
              f"(`chrt --idle 0`), with {meta.get('si_hogs')} SCHED_IDLE CPU hogs running throughout. "
              "Completion time in seconds, median [min-max]; `mainline` and `wakee-aware` use policy "
              "reservoir, smt idle-core. Packing = SCHED_IDLE wakees placed on a CPU running only "
              "SCHED_IDLE work while an idle CPU was allowed (median per run).\n")
    hdr = "| workers | " + " | ".join(SI_CONFIGS) + " | delta% (wakee-aware vs mainline) | wakee-aware/kernel | packing mainline | packing wakee-aware |"
    md += [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    series = {c: [] for c in SI_CONFIGS}
    ratios = []
    for s in sizes:
        sums = {c: metric(g.get((c, s), []), lambda x: x["completion_s"]) for c in SI_CONFIGS}
        pk = {c: metric(g.get((c, s), []), lambda x: x["scx"]["counters"]["packing"]) for c in ("mainline", "wakee-aware")}
        for c in SI_CONFIGS:
            series[c].append(sums[c])
        rr = ratio(sums["wakee-aware"], sums["mainline"])
        ratios.append(rr)
        md.append(f"| {s} | " + " | ".join(cell(sums[c], 2) for c in SI_CONFIGS) +
                  f" | {pct(rr)} | {rfmt(ratio(sums['wakee-aware'], sums['kernel']))}"
                  f" | {cell(pk['mainline'], 0)} | {cell(pk['wakee-aware'], 0)} |")
    md.append("")
    gm = geomean(ratios)
    claims["schedidle_completion_ratio_wakee_aware_mainline"] = gm
    claims["schedidle_completion_ratio_per_size"] = dict(zip(sizes, ratios))
    md.append(f"**Claim:** completion-time ratio wakee-aware/mainline (geometric mean over sizes) = "
              f"**{rfmt(gm)}** (seed 003: 0.88 for 1-16 workers on a 64-thread Xeon).\n")
    img(md, lines_plot(p, "schedidle_completion", "SCHED_IDLE batch: completion time (s)", "seconds", sizes, series), "schedidle completion")


def report_latency(runs, meta, p, md, claims):
    g = group(runs, "latency")
    md.append(f"`cyclictest` ({meta.get('lat_threads')} SCHED_OTHER threads, 1 ms interval, "
              f"{meta.get('lat_d')} s) wakeup latency in µs, plus `perf bench sched pipe` (µs/op) and "
              "`hackbench` (s), in the benchmark's cgroup while SCHED_IDLE CPU hogs on half the CPUs run "
              "in a `cpu.idle=1` cgroup: t1 = noise in a sibling cgroup, t2 = noise one level deeper "
              "under another sibling. SCHED_IDLE modes use policy reservoir, smt idle-core. "
              "Percentiles: median over repetitions [min-max].\n")
    cg = meta.get("_cgroups", "")
    if "failed" in cg:
        md.append(f"Note: cgroup setup was incomplete: {'; '.join(l for l in cg.splitlines() if 'failed' in l)}.\n")
    for layout in ("t1", "t2"):
        md.append(f"**Layout {layout}**\n")
        hdr = "| mode | " + " | ".join(n for n, _ in PCTS) + " | p99 vs kernel | p99 vs mainline | pipe µs/op | hackbench s |"
        md += [hdr, "|" + "---|" * (hdr.count("|") - 1)]
        series = {}
        mainline99 = metric(g.get(("mainline", layout), []), lambda x: x["cyclictest"]["p99"])
        kernel99 = metric(g.get(("kernel", layout), []), lambda x: x["cyclictest"]["p99"])
        for c in [c for c in LAT_CONFIGS if any(k[0] == c for k in g)]:
            rs = g.get((c, layout), [])
            ps = [metric(rs, lambda x, n=n: x["cyclictest"][n]) for n, _ in PCTS]
            series[c] = ps
            p99 = ps[2]
            claims.setdefault("latency_p99_us", {}).setdefault(layout, {})[c] = p99["median"] if p99 else None
            md.append(f"| {c} | " + " | ".join(cell(s, 0) for s in ps) +
                      f" | {rfmt(ratio(p99, kernel99), 2)} | {rfmt(ratio(p99, mainline99), 2)}"
                      f" | {cell(metric(rs, lambda x: x['pipe_us_per_op']), 2)}"
                      f" | {cell(metric(rs, lambda x: x['hackbench_s']), 3)} |")
        md.append("")
        img(md, lines_plot(p, f"latency_{layout}", f"cyclictest wakeup latency, layout {layout} (µs)", "µs",
                           [n for n, _ in PCTS], series), f"latency {layout}")


def report_smt(runs, meta, p, md, claims):
    g = group(runs, "smt")
    s = meta.get("smt_cores", "")
    md.append(f"`stress-ng --cpu {s} --cpu-method int64` ({s} = the number of cores, half the CPUs): "
              "throughput (bogo ops/s) and the share of samples (every ~20 ms, from the `processor` "
              "field of /proc/PID/stat) in which both SMT siblings of a core ran a stressor. Ideal "
              "placement gives 0. `off` and `idle-core` use policy reservoir.\n")
    hdr = "| config | bogo ops/s | vs kernel | both siblings busy | tasks sharing a core | busy-sibling picks |"
    md += [hdr, "|---|---|---|---|---|---|"]
    tp, bb = [], []
    k = metric(g.get(("kernel", s), []), lambda x: x["bogo_ops_s"])
    for c in SMT_CONFIGS:
        rs = g.get((c, s), [])
        t = metric(rs, lambda x: x["bogo_ops_s"])
        b = metric(rs, lambda x: x["both_busy_share"])
        tp.append(t)
        bb.append(b)
        bsp = metric(rs, lambda x: x["scx"]["counters"]["busy_sibling_pick"]) if c != "kernel" else None
        md.append(f"| {c} | {cell(t, 1)} | {rfmt(ratio(t, k))} | {cell(b, 3)} | "
                  f"{cell(metric(rs, lambda x: x['tasks_sharing_core']), 3)} | {cell(bsp, 0)} |")
    md.append("")
    ti, to = tp[SMT_CONFIGS.index("idle-core")], tp[SMT_CONFIGS.index("off")]
    bi, bo = bb[SMT_CONFIGS.index("idle-core")], bb[SMT_CONFIGS.index("off")]
    claims["smt_throughput_ratio_idle_core_off"] = ratio(ti, to)
    claims["smt_both_busy_idle_core"] = bi["median"] if bi else None
    claims["smt_both_busy_off"] = bo["median"] if bo else None
    md.append(f"**Claim:** throughput idle-core/off = **{rfmt(ratio(ti, to))}**; both-siblings-busy share "
              f"idle-core {rfmt(claims['smt_both_busy_idle_core'])} vs off {rfmt(claims['smt_both_busy_off'])}.\n")
    img(md, bars_plot(p, "smt_throughput", f"stress-ng --cpu {s}: bogo ops/s", "bogo ops/s", SMT_CONFIGS, tp), "smt throughput")
    img(md, bars_plot(p, "smt_both_busy", "share of samples with both siblings busy", "share", SMT_CONFIGS, bb), "smt both busy")


def callback_order(g):
    """Every program seen in the runs: select_cpu first, then by name."""
    names = set()
    for rs in g.values():
        for r in rs:
            names.update(r["metrics"].get("progs", {}))
    return sorted(names, key=lambda n: (n != "select_cpu", n))


def report_overhead(runs, meta, p, md, claims):
    g = group(runs, "overhead")
    ncpus = num(meta.get("vm_cpus")) or num(read(os.path.join(meta.get("_raw", ""), "meta", "ncpus"), "")) or 1
    md.append("Every callback's and tracepoint's cost from the kernel's BPF run-time statistics "
              "(`bpf_prog_info.run_time_ns` and `run_cnt`, before and after "
              f"`stress-ng --fork 4 -t {meta.get('oh_t')}` plus `hackbench`), for the floor "
              "(tests/bench/floor.bpf.c) and each policy (`default` = reservoir, wakee-aware, "
              "idle-core, scope hierarchy; `default-task` = the same with scope task; the others "
              "smt off). Share = the callback's run time over the run's "
              f"CPU time ({int(ncpus)} CPUs x elapsed). Under TCG every instruction is emulated: "
              "compare configurations, not the absolute numbers. A blank cell: the configuration "
              "has no such callback (or it never ran).\n")
    names = callback_order(g)
    per = {}
    for c in OH_POLICIES:
        rs = [r for k, v in g.items() if k[0] == c for r in v]
        per[c] = {}
        for n in names:
            def npc(x, n=n):
                q = x["progs"].get(n)
                return q["ns"] / q["calls"] if q and q["calls"] > 0 else None

            def rate(x, n=n):
                q = x["progs"].get(n)
                el = num(x.get("_elapsed_s"))
                return q["calls"] / el if q and el else None

            def share(x, n=n):
                q = x["progs"].get(n)
                el = num(x.get("_elapsed_s"))
                return q["ns"] / (el * 1e9 * ncpus) if q and el else None
            per[c][n] = (metric(rs, npc), metric(rs, rate), metric(rs, share))

        def total(x):
            el = num(x.get("_elapsed_s"))
            return sum(q["ns"] for q in x["progs"].values()) / (el * 1e9 * ncpus) if el else None
        per[c]["_total"] = metric(rs, total)
        per[c]["_ops"] = metric(rs, lambda x: x["bogo_ops_s"])
    for title, idx, digits, scale, unit in (("ns per call", 0, 0, 1.0, ""),
                                            ("calls per second", 1, 0, 1.0, ""),
                                            ("share of all CPU time", 2, 3, 100.0, "%")):
        md.append(f"**{title}**\n")
        hdr = "| callback | " + " | ".join(OH_POLICIES) + " |"
        md += [hdr, "|" + "---|" * (len(OH_POLICIES) + 1)]
        for n in names:
            md.append(f"| {n} | " + " | ".join(
                cell(per[c][n][idx], digits, scale, unit) if per[c][n][idx] else "" for c in OH_POLICIES) + " |")
        if idx == 2:
            md.append("| **all** | " + " | ".join(cell(per[c]["_total"], 3, 100.0, "%") for c in OH_POLICIES) + " |")
        md.append("")
    fl = per["floor"]
    md.append("| policy | select_cpu ns/call | vs builtin | vs floor | all callbacks' share vs floor | fork bogo ops/s |")
    md.append("|---|---|---|---|---|---|")
    none = (None, None, None)
    b = per["builtin"].get("select_cpu", none)[0]
    for c in OH_POLICIES:
        s = per[c].get("select_cpu", none)[0]
        claims.setdefault("select_cpu_ns_per_call", {})[c] = s["median"] if s else None
        claims.setdefault("callbacks_cpu_share", {})[c] = per[c]["_total"]["median"] if per[c]["_total"] else None
        if c in ("reservoir", "default"):
            claims[f"select_cpu_cost_ratio_{c}_builtin"] = ratio(s, b)
        md.append(f"| {c} | {cell(s, 0)} | {rfmt(ratio(s, b))} | {rfmt(ratio(s, fl.get('select_cpu', none)[0]))} | "
                  f"{rfmt(ratio(per[c]['_total'], fl['_total']))} | {cell(per[c]['_ops'], 1)} |")
    # Issue 15's cost bound: the hierarchy rule against the task scope.
    claims["select_cpu_cost_ratio_hierarchy_task"] = ratio(
        per["default"].get("select_cpu", none)[0], per["default-task"].get("select_cpu", none)[0])
    md.append("")
    md.append("The loader: the daemon's CPU time (every thread, from `/proc/PID/task/*/schedstat`) "
              "over the workload, as a share of one CPU; `sampled` = the default configuration with "
              "`--sample-every=1` (every pick an event through the ring buffer) and `scx_loehle top "
              "--interval=1` reading the daemon throughout.\n")
    md.append("| config | daemon CPU (% of one CPU) | events/s | event drops |")
    md.append("|---|---|---|---|")
    for c in OH_POLICIES[1:]:
        rs = [r for k, v in g.items() if k[0] == c for r in v]
        share = metric(rs, lambda x: x["daemon_cpu_share"])
        md.append(f"| {c} | {cell(share, 3, 100.0, '%')} | {cell(metric(rs, lambda x: x['events_per_s']), 0)} | "
                  f"{cell(metric(rs, lambda x: x['event_drops']), 0)} |")
        claims.setdefault("daemon_cpu_share", {})[c] = share["median"] if share else None
        if c == "sampled":
            claims["daemon_cpu_share_sampled"] = share["median"] if share else None
    md.append("")
    claims["callbacks"] = {c: {n: {"ns_per_call": v[0]["median"] if v[0] else None,
                                   "calls_per_s": v[1]["median"] if v[1] else None,
                                   "share": v[2]["median"] if v[2] else None}
                               for n, v in per[c].items() if not n.startswith("_")} for c in OH_POLICIES}
    img(md, bars_plot(p, "overhead", "select_cpu cost per call (ns, TCG)", "ns/call", OH_POLICIES,
                      [per[c].get("select_cpu", (None,))[0] for c in OH_POLICIES]), "overhead")
    img(md, bars_plot(p, "overhead_share", "all callbacks: share of CPU time (%)", "percent", OH_POLICIES,
                      [scaled(per[c]["_total"], 100.0) for c in OH_POLICIES]), "callbacks share")


def scaled(s, k):
    return {key: (v * k if key != "n" else v) for key, v in s.items()} if s else None


def report_wakeup(runs, meta, p, md, claims):
    g = group(runs, "wakeup")
    md.append(f"Half the CPUs' worth of unpinned sleepers (`loehle-wakelat 1000 {meta.get('wk_count')}`: "
              "sleep to an absolute deadline every 1 ms, lateness in µs), alone (`half-idle`) or beside as "
              "many `stress-ng --cpu` hogs at normal priority (`half-busy`, each wakeup must find an idle "
              "CPU). Per run: the median over the sleepers of each one's p99 (and average); cells: median "
              "over repetitions [min-max]. `builtin` and `reservoir` run the default configuration "
              "otherwise (wakee-aware, idle-core).\n")
    hdr = "| config | " + " | ".join(f"{x} p99 µs | {x} avg µs | p99 vs floor" for x in WK_PARAMS) + " |"
    md += [hdr, "|" + "---|" * (3 * len(WK_PARAMS) + 1)]
    series = {}
    for c in WK_CONFIGS:
        row, series[c] = [], []
        for x in WK_PARAMS:
            p99 = metric(g.get((c, x), []), lambda v: v["wake_p99_us"])
            avg = metric(g.get((c, x), []), lambda v: v["wake_avg_us"])
            f99 = metric(g.get(("floor", x), []), lambda v: v["wake_p99_us"])
            series[c].append(p99)
            row += [cell(p99, 0), cell(avg, 0), rfmt(ratio(p99, f99))]
            if c == "reservoir":
                claims[f"wakeup_p99_ratio_reservoir_floor_{x}"] = ratio(p99, f99)
            claims.setdefault("wakeup_p99_us", {}).setdefault(x, {})[c] = p99["median"] if p99 else None
        md.append(f"| {c} | " + " | ".join(row) + " |")
    md.append("")
    img(md, lines_plot(p, "wakeup_p99", "wakeup p99 of the sleepers (µs)", "µs", WK_PARAMS, series), "wakeup p99")


def report_foreground(runs, meta, p, md, claims):
    g = group(runs, "foreground")
    md.append("The foreground, `perf bench sched messaging -g {g} -l {l}` and `hackbench -g {g} -f 10 -l {h}` "
              "(throughput: 1 / time) and `cyclictest` (one SCHED_OTHER thread per foreground CPU, {d} s, "
              "wakeup latency in µs), on half the CPUs or on all of them, alone and beside "
              "`chrt --idle 0 stress-ng --cpu` hogs on every CPU; the noise's work done is the CPU time its "
              "workers got, in CPUs. Idle work should cost the foreground nothing "
              "(Documentation/policies.md, \"Idle work\"). Median over repetitions [min-max].\n"
              .format(g=meta.get("fg_groups"), l=meta.get("fg_loops"), h=meta.get("fg_hb"), d=meta.get("fg_d")))
    params = [x for x in FG_PARAMS if any(k[1] == x for k in g)]
    configs = [c for c in FG_CONFIGS if any(k[0] == c for k in g)]
    hdr = ("| config | setting | messaging s | hackbench s | p99 µs | noise CPUs | "
           "messaging vs kernel | vs alone | p99 vs kernel | noise vs kernel |")
    md += [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    tp_series = []
    for scope in ("half", "all"):
        for c in configs:
            for noise in ("alone", "noise"):
                x = f"{scope}-{noise}"
                if x not in params:
                    continue
                rs = g.get((c, x), [])
                msg = metric(rs, lambda v: v["messaging_s"])
                k_msg = metric(g.get(("kernel", x), []), lambda v: v["messaging_s"])
                own_alone = metric(g.get((c, f"{scope}-alone"), []), lambda v: v["messaging_s"])
                p99 = metric(rs, lambda v: v["cyclictest"]["p99"])
                k99 = metric(g.get(("kernel", x), []), lambda v: v["cyclictest"]["p99"])
                nz = metric(rs, lambda v: v.get("noise_cpus"))
                knz = metric(g.get(("kernel", x), []), lambda v: v.get("noise_cpus"))
                # Throughput is 1 / time: the ratio of times, inverted.
                vs_k = ratio(k_msg, msg)
                vs_alone = ratio(own_alone, msg) if noise == "noise" else None
                md.append(f"| {c} | {x} | {cell(msg, 3)} | {cell(metric(rs, lambda v: v['hackbench_s']), 3)} | "
                          f"{cell(p99, 0)} | {cell(nz, 2)} | {rfmt(vs_k, 2)} | {rfmt(vs_alone, 2)} | "
                          f"{rfmt(ratio(p99, k99), 2)} | {rfmt(ratio(nz, knz), 2)} |")
                if c == "wakee-aware" and x == "all-noise":
                    claims["foreground_throughput_vs_kernel"] = vs_k
                    claims["foreground_throughput_vs_alone"] = vs_alone
                    claims["foreground_p99_vs_kernel"] = ratio(p99, k99)
                    claims["noise_work_vs_kernel"] = ratio(nz, knz)
                if x == "all-noise":
                    tp_series.append(metric(rs, lambda v: 1.0 / v["messaging_s"] if v["messaging_s"] else None))
    md.append("")
    if tp_series:
        img(md, bars_plot(p, "foreground_throughput", "messaging throughput beside SCHED_IDLE noise (1/s)",
                          "1/s", configs, tp_series), "foreground throughput")


def report_scope(runs, meta, p, md, claims):
    g = group(runs, "scope")
    md.append(f"`cyclictest` ({meta.get('lat_threads')} SCHED_OTHER threads, 1 ms interval, "
              f"{meta.get('lat_d')} s) wakeup latency in µs of normal work, beside CPU hogs on half "
              "the CPUs that are idle work only by their cgroup's `cpu.idle=1` (no `chrt --idle`), "
              "under each `--sched-idle-scope` (default configuration otherwise). Layouts: t1 and t2 "
              "as in the latency experiment; seed 004's kubepods tree with the hogs in besteffort and "
              "the wakees in guaranteed (`kubepods-g`) or in system.slice/containerd (`kubepods-c`). "
              "Noise = the hogs' bogo ops/s (the idle work's throughput). Sched-idle picks and "
              "refusals: the run's generation counters. Median over repetitions [min-max].\n")
    layouts = [l for l in SCOPE_LAYOUTS if any(k[1] == l for k in g)]
    hdr = ("| layout | scope | p50 | p99 | p99 vs task | noise bogo ops/s | noise vs task | "
           "sched-idle picks | refused | preempt |")
    md += [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    p99s, noises = {}, {}
    for layout in layouts:
        t99 = metric(g.get(("task", layout), []), lambda x: x["cyclictest"]["p99"])
        tno = metric(g.get(("task", layout), []), lambda x: x["noise_bogo_ops_s"])
        for c in SCOPE_CONFIGS:
            rs = g.get((c, layout), [])
            p50 = metric(rs, lambda x: x["cyclictest"]["p50"])
            p99 = metric(rs, lambda x: x["cyclictest"]["p99"])
            noise = metric(rs, lambda x: x["noise_bogo_ops_s"])
            p99s.setdefault(c, []).append(p99)
            noises.setdefault(c, []).append(noise)

            def ctr(name):
                return metric(rs, lambda x: x["scx"]["counters"].get(name, 0))
            claims.setdefault("scope_p99_us", {}).setdefault(layout, {})[c] = p99["median"] if p99 else None
            claims.setdefault("scope_p99_ratio_vs_task", {}).setdefault(layout, {})[c] = ratio(p99, t99)
            claims.setdefault("scope_noise_ratio_vs_task", {}).setdefault(layout, {})[c] = ratio(noise, tno)
            md.append(f"| {layout} | {c} | {cell(p50, 0)} | {cell(p99, 0)} | {rfmt(ratio(p99, t99), 2)} | "
                      f"{cell(noise, 0)} | {rfmt(ratio(noise, tno), 2)} | {cell(ctr('pick_sched_idle'), 0)} | "
                      f"{cell(ctr('sched_idle_refused'), 0)} | {cell(ctr('sched_idle_preempt'), 0)} |")
    md.append("")
    img(md, lines_plot(p, "scope_p99", "cyclictest p99 beside cpu.idle hogs (µs)", "µs", layouts, p99s),
        "scope p99")
    img(md, lines_plot(p, "scope_noise", "throughput of the idle hogs (bogo ops/s)", "bogo ops/s", layouts,
                       noises), "scope noise")


REPORTERS = {"fork": report_fork, "schedidle": report_schedidle, "latency": report_latency,
             "smt": report_smt, "overhead": report_overhead, "foreground": report_foreground,
             "wakeup": report_wakeup, "scope": report_scope}
REQUIRED = {"fork": FORK_POLICIES, "schedidle": SI_CONFIGS, "latency": LAT_CONFIGS,
            "smt": SMT_CONFIGS, "overhead": OH_POLICIES, "foreground": FG_CONFIGS,
            "wakeup": WK_CONFIGS, "scope": SCOPE_CONFIGS}


def scx_version(versions):
    v = versions.get("scx_loehle", "?")
    return v if v.startswith("scx_loehle") else f"scx_loehle {v}"


def main():
    out = sys.argv[1]
    raw = os.path.join(out, "raw")
    meta = read_env(os.path.join(raw, "meta", "settings.env"))
    meta["_cgroups"] = read(os.path.join(raw, "meta", "cgroups.txt"), "")
    meta["_raw"] = raw
    host = read_env(os.path.join(out, "host.env"))
    core_of = topology(raw)
    runs, problems = [], []
    for line in read(os.path.join(raw, "runs.tsv"), "").splitlines():
        f = line.split("\t")
        if len(f) < 7:
            continue
        e = {"exp": f[0], "rep": int(f[1]), "config": f[2], "params": f[3],
             "warmup": f[4] == "1", "status": f[5], "dir": f[6]}
        e["run"] = read_env(os.path.join(raw, f[6], "run.env"))
        e["ctl_set"] = read(os.path.join(raw, f[6], "ctl-set.txt"), "").strip()
        if e["status"] == "ok":
            try:
                e["metrics"] = parse_run(raw, e, core_of)
            except (ParseError, OSError, ValueError, KeyError) as ex:
                e["status"] = "unparseable"
                e["error"] = str(ex)
                problems.append(f"{e['exp']} rep {e['rep']} {e['config']} {e['params']}: {ex}")
        else:
            problems.append(f"{e['exp']} rep {e['rep']} {e['config']} {e['params']}: {e['status']}")
        runs.append(e)
    ran = [x for x in EXPERIMENTS if any(r["exp"] == x for r in runs)]
    wanted = meta["only"].split(",") if meta.get("only") else list(EXPERIMENTS)
    for x in wanted:
        if x not in ran:
            problems.append(f"{x}: no runs at all")
            continue
        have = {r["config"] for r in runs if r["exp"] == x and not r["warmup"] and r.get("metrics")}
        required = REQUIRED[x]
        if x == "foreground" and meta.get("quick") == "1":
            required = FG_QUICK_CONFIGS
        if x == "latency" and meta.get("smoke") == "1":
            required = LAT_SMOKE_CONFIGS
        missing = [c for c in required if c not in have]
        if missing:
            problems.append(f"{x}: no parseable run for {', '.join(missing)}")

    versions = read(os.path.join(raw, "meta", "versions.txt"), "")
    env = {
        "kernel": read(os.path.join(raw, "meta", "kernel"), "").strip(),
        "uname": read(os.path.join(raw, "meta", "uname"), "").strip(),
        "cpus": meta.get("vm_cpus") or read(os.path.join(raw, "meta", "ncpus"), "").strip(),
        "cpu_model": read(os.path.join(raw, "meta", "cpu_model"), "").strip(),
        "smt_active": read(os.path.join(raw, "meta", "smt_active"), "").strip(),
        "topology": [l.split("\t") for l in read(os.path.join(raw, "meta", "topology.tsv"), "").splitlines()],
        "cgroups": meta["_cgroups"].splitlines(),
        "versions": dict(l.split(": ", 1) for l in versions.splitlines() if ": " in l),
        "settings": {k: v for k, v in meta.items() if not k.startswith("_")},
        "host": host,
    }
    md = ["# scx_loehle benchmarks", "",
          f"Kernel {env['kernel']}, {env['cpus']} CPUs ({host.get('mode', '?')}"
          + (f": {meta['vm_cpus']} vCPUs, SMT {meta.get('vm_smt')}, {meta.get('vm_nodes')} nodes, "
             f"{meta.get('vm_mem_mb')} MiB" if meta.get("vm_cpus") else "") + "), "
          f"{meta.get('reps')} repetition(s){' (smoke)' if meta.get('smoke') == '1' else ' (quick)' if meta.get('quick') == '1' else ''}, "
          f"{scx_version(env['versions'])}, git {host.get('git', '?')}, "
          f"host {host.get('host_model', '?')} ({host.get('host_cpus', '?')} CPUs), "
          f"wall time {host.get('wall_s', '?')} s.", "",
          f"> {NOTE}", "",
          "Configurations: `kernel` = the kernel's own scheduler (scx_loehle stopped); every "
          "other column is a live `scx_loehle ctl set` (one generation per run); `builtin` = "
          "`scx_bpf_select_cpu_dfl()`. Each repetition runs every configuration once, in "
          "rotated order, after one warm-up run" + (" (none in a smoke run)" if meta.get("smoke") == "1" else "")
          + ". Cells: median [min-max].", ""]
    p = Plotter(out)
    claims = {}
    for x in EXPERIMENTS:
        if x not in ran:
            continue
        md.append(f"## {EXPERIMENTS[x]}")
        md.append("")
        try:
            REPORTERS[x](runs, meta, p, md, claims)
        except ParseError as ex:
            problems.append(f"{x}: {ex}")
    goals = [(k, what, bound, sense) for k, what, bound, sense in GOALS if k in claims]
    if goals:
        md += ["## Goals", "",
               "The scheduler's goals, as ratios of medians from this boot (no timed assertions).", "",
               "| ratio | goal | measured | met |", "|---|---|---|---|"]
        for k, what, bound, sense in goals:
            v = claims[k]
            met = "n/a" if v is None else ("yes" if (v <= bound if sense == "<=" else v >= bound) else "no")
            md.append(f"| {what} | {sense} {bound} | {rfmt(v)} | {met} |")
        md.append("")
    if problems:
        md += ["## Problems", ""] + [f"- {x}" for x in problems] + [""]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(md))
    results = {"environment": env, "claims": claims, "plots": p.made, "problems": problems,
               "runs": runs}
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    if problems:
        print(f"report.py: {len(problems)} problem(s), first: {problems[0]}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
