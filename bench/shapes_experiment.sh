#!/usr/bin/env bash
# shapes_experiment: the cost of the placement policies against the number
# of distinct pod shapes (docs/placement.md §6).  For each N, gen_pods
# writes a pod list of N rows, each its own shape, into a temporary folder;
# `kerf sim openb` then runs it on the 1,213 GPU nodes of openb (130 % of
# GPU capacity, one worker thread) for each policy.  Prints per N and
# policy: the run time per seed (wall and CPU), the node evaluations per
# seed and their cost, the score cache's hit rate, unallocated GPU at 100 %
# arrival, and the time as a multiple of best-fit's.
#
# usage: bench/shapes_experiment.sh [BUILD_DIR [SHAPES [POLICIES [SEEDS]]]]
#   BUILD_DIR  meson build folder holding kerf and bench/gen_pods
#              (default: build in the repository root)
#   SHAPES     comma-separated distinct shape counts (default
#              100,1000,2000,10000)
#   POLICIES   comma-separated policies (default best-fit,fgd,kerf)
#   SEEDS      as `kerf sim openb --seeds` (default 42-51)
# The node list is $KERF_OPENB_DIR/openb_node_list_gpu_node.csv, else
# ../shared/data/openb relative to the repository root; without it the
# script says so and exits 0.  The pod lists are synthetic (see
# bench/gen_pods.c) and deleted afterwards.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shapes=${2:-100,1000,2000,10000}
policies=${3:-best-fit,fgd,kerf}
seeds=${4:-42-51}

trace=${KERF_OPENB_DIR:-$root/../shared/data/openb}
nodes=$trace/openb_node_list_gpu_node.csv
if [ ! -r "$nodes" ]; then
	echo "shapes_experiment: openb node list not found in '$trace' (set KERF_OPENB_DIR); skipping"
	exit 0
fi
for exe in "$build/kerf" "$build/bench/gen_pods"; do
	if [ ! -x "$exe" ]; then
		echo "shapes_experiment: '$exe' not found; build first (meson setup build && ninja -C build)" >&2
		exit 1
	fi
done
if ! command -v python3 >/dev/null 2>&1; then
	echo "shapes_experiment: python3 is needed to time the runs" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$build" "$nodes" "$tmp" "$shapes" "$policies" "$seeds" <<'PY'
import json, os, resource, subprocess, sys

build, nodes, tmp, shapes, policies, seeds = sys.argv[1:]
shapes = [int(x) for x in shapes.split(",")]
policies = policies.split(",")

def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

print("shapes_experiment: gen_pods --shapes N (seed 1) on %s, 130 %% of GPU "
      "capacity, seeds %s, --jobs 1" % (os.path.basename(nodes), seeds))
head = "%7s %-9s %9s %9s %12s %9s %7s %8s %8s" % (
    "shapes", "policy", "s/seed", "cpu s/sd", "evals/seed", "ns/eval",
    "hit %", "unalloc", "x best")
print(head)
print("-" * len(head))
for n in shapes:
    pods = os.path.join(tmp, "pods_%d.csv" % n)
    with open(pods, "w") as f:
        subprocess.run([os.path.join(build, "bench", "gen_pods"),
                        "--shapes", str(n)], stdout=f, check=True)
    base = None
    for p in policies:
        cpu0 = child_cpu()
        out = subprocess.run([os.path.join(build, "kerf"), "sim", "openb",
                              "--nodes", nodes, "--pods", pods,
                              "--policy", p, "--seeds", seeds, "--jobs", "1",
                              "--json"], capture_output=True, text=True,
                             check=True).stdout
        cpu = child_cpu() - cpu0
        d = json.loads(out)["items"][0]     # one OpenbRun document
        runs = len(d["seeds"])
        per_seed = d["wallSeconds"] / runs
        evals = d["nodeEvalsMean"]
        hits = d["cacheHitsMean"]
        if p == "best-fit":
            base = per_seed
        print("%7d %-9s %9.3f %9.3f %12.0f %9.0f %7.1f %8.2f %8s" % (
            n, p, per_seed, cpu / runs, evals,
            1e9 * per_seed / evals if evals else 0,
            100.0 * hits / (hits + evals) if hits + evals else 0,
            d["unallocPercentAt100Mean"],
            "%.1f" % (per_seed / base) if base else "-"))
    os.remove(pods)
PY
