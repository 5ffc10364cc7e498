#!/usr/bin/python3
"""Checks a /metrics scrape against the `ctl stats --json` reply taken at the
same moment (both left in /out by case_metrics of tests/vm/cases/
observability.sh), with a real Prometheus parser:

    tests/vm/check-metrics.py METRICS.txt STATS.json

Every counter of every generation, every fork pick per CPU and every
callback's run count must appear with the reply's value; generations that
are no longer current are frozen, so they must agree exactly; the current
one may have moved on between the two readings (never backwards). Exits 0
when they agree, 1 with the differences otherwise, 77 (skip) without
python3-prometheus-client.
"""
import json
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("check-metrics: python3-prometheus-client is not installed", file=sys.stderr)
    sys.exit(77)


def main(metrics_path, stats_path):
    with open(metrics_path) as f:
        families = list(text_string_to_metric_families(f.read()))
    with open(stats_path) as f:
        stats = json.load(f)
    samples = {}
    for family in families:
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value

    def get(name, **labels):
        return samples.get((name, tuple(sorted(labels.items()))))

    errors = []
    current = stats["generation"]
    checked = 0

    def check(name, labels, want, frozen):
        nonlocal checked
        got = get(name, **labels)
        checked += 1
        if got is None:
            errors.append(f"missing {name}{labels}")
        elif frozen and got != want:
            errors.append(f"{name}{labels}: metrics {got}, stats {want}")
        elif not frozen and got > want:
            errors.append(f"{name}{labels}: metrics {got} ahead of stats {want}")

    if get("scx_loehle_generation") != current:
        errors.append(f"generation gauge {get('scx_loehle_generation')}, stats {current}")
    topo = {c["cpu"]: c for c in stats["topology"]["cpus"]}
    for gen in stats["generations"]:
        st = gen["settings"]
        base = {"generation": str(gen["generation"]), "policy": st["policy"],
                "sched_idle": st["sched_idle"], "smt": st["smt"],
                "sched_idle_scope": st.get("sched_idle_scope", "task")}
        frozen = gen["generation"] != current
        for name, value in gen["counters"].items():
            if name.startswith("select_"):
                check("scx_loehle_selects_total", dict(base, path=name[7:]), value, frozen)
            elif name.startswith("pick_"):
                check("scx_loehle_picks_total", dict(base, reason=name[5:]), value, frozen)
            elif name.startswith("tie_hist_"):
                check("scx_loehle_tie_groups_total", dict(base, size=name[9:]), value, frozen)
            else:
                check(f"scx_loehle_{name}_total", base, value, frozen)
        for cpu, value in enumerate(gen["fork_picks"]):
            t = topo.get(cpu)
            labels = dict(base, cpu=str(cpu))
            if t is not None:
                labels.update(node=str(t["node"]), llc=str(t["llc"]), core=str(t["core"]))
            check("scx_loehle_fork_picks_total", labels, value, frozen)
    for prog in stats["programs"]:
        check("scx_loehle_callback_runs_total", {"callback": prog["name"]},
              prog["run_count"], False)
    if errors:
        print(f"check-metrics: {len(errors)} of {checked} samples disagree:", file=sys.stderr)
        for e in errors[:20]:
            print("  " + e, file=sys.stderr)
        return 1
    print(f"check-metrics: {checked} samples agree ({len(families)} families)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
