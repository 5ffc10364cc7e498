#!/bin/sh
# Checks what `scripts/bench --smoke --out DIR` (or --quick) left in DIR: results.json
# loads and holds runs of every experiment, report.md has every experiment's
# heading, every plot it references exists and is a PNG.
#   tests/bench/check-outputs.sh DIR
set -eu
dir=${1:?usage: check-outputs.sh DIR}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
exec "$py" - "$dir" <<'PY'
import json, os, re, sys
d = sys.argv[1]
def die(msg):
    print(f"check-outputs: {msg}", file=sys.stderr)
    sys.exit(1)
try:
    with open(os.path.join(d, "results.json")) as f:
        res = json.load(f)
except (OSError, ValueError) as e:
    die(f"results.json does not load: {e}")
exps = ["fork", "schedidle", "latency", "smt", "overhead", "foreground", "wakeup"]
for x in exps:
    if not any(r.get("exp") == x and r.get("metrics") for r in res.get("runs", [])):
        die(f"results.json has no parsed run of {x}")
for k in ("kernel", "topology", "versions"):
    if not res.get("environment", {}).get(k):
        die(f"results.json lacks environment.{k}")
if res.get("problems"):
    die(f"results.json lists problems: {res['problems'][0]}")
try:
    md = open(os.path.join(d, "report.md")).read()
except OSError as e:
    die(f"no report.md: {e}")
for h in ["## Fork placement (seed 000)", "## SCHED_IDLE batch work (seed 003)",
          "## Wakeup latency beside SCHED_IDLE noise (seed 004)",
          "## SMT: one task per core (seed 002)", "## Hot-path cost per callback",
          "## The foreground beside SCHED_IDLE work",
          "## Wakeup latency of sleepers, against the floor"]:
    if h not in md:
        die(f"report.md lacks the heading '{h}'")
# The floor ran beside the policies, and every callback has its share.
cb = res.get("claims", {}).get("callbacks", {})
for c in ("floor", "builtin", "default", "sampled"):
    if not cb.get(c, {}).get("select_cpu", {}).get("ns_per_call"):
        die(f"claims.callbacks lacks {c}'s select_cpu cost")
for n in ("enqueue", "running", "stopping", "dispatch", "update_idle"):
    if not cb.get("default", {}).get(n, {}).get("share"):
        die(f"claims.callbacks.default lacks the share of {n}")
if "fork_8_4_throughput_ratio_reservoir_floor" not in res.get("claims", {}):
    die("claims lack the fork throughput ratio against the floor")
pngs = re.findall(r"\]\((plots/[^)]+\.png)\)", md)
if len(pngs) < 5:
    die(f"report.md references only {len(pngs)} plots")
for p in pngs + res.get("plots", []):
    try:
        with open(os.path.join(d, p), "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                die(f"{p} is not a PNG")
    except OSError:
        die(f"{p} is missing")
print(f"check-outputs: ok ({len(res['runs'])} runs, {len(set(pngs))} plots)")
PY
