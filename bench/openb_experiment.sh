#!/usr/bin/env bash
# openb_experiment: the FGD experiment on the default openb trace (the 1,213
# GPU nodes, the default pod list, 130 % of GPU capacity, seeds 42-51) for
# each policy, once on one worker thread (--jobs 1) and once on the default
# number of workers (all online CPUs).  Prints one row per policy: the mean
# unallocated GPU share when arrivals reach 100 % of capacity, and the wall
# time of each batch as `kerf sim openb --json` reports it (the seeds' runs,
# without loading the trace).
#
# usage: bench/openb_experiment.sh [BUILD_DIR [POLICY[,POLICY...]]]
#   BUILD_DIR  meson build folder holding `kerf` (default: build in the
#              repository root)
#   POLICY     policies to run (default: every registered policy)
# The trace folder is $KERF_OPENB_DIR, else ../shared/data/openb relative to
# the repository root.  Without the trace the script says so and exits 0.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
policies_arg=${2:-}

if [ -n "${KERF_OPENB_DIR:-}" ]; then
	trace=$KERF_OPENB_DIR
else
	trace=$root/../shared/data/openb
fi
nodes=$trace/openb_node_list_gpu_node.csv
pods=$trace/openb_pod_list_default.csv
if [ ! -r "$nodes" ] || [ ! -r "$pods" ]; then
	echo "openb_experiment: openb trace not found in '$trace' (set KERF_OPENB_DIR); skipping"
	exit 0
fi

kerf=$build/kerf
if [ ! -x "$kerf" ]; then
	echo "openb_experiment: '$kerf' not found; build first (meson setup build && ninja -C build)" >&2
	exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "openb_experiment: python3 is needed to read the JSON results" >&2
	exit 1
fi

if [ -n "$policies_arg" ]; then
	IFS=, read -r -a policies <<<"$policies_arg"
else
	# The registry, as `kerf sim --help` lists it after "policies:".
	mapfile -t policies < <("$kerf" sim --help |
		awk '/^policies:/ { on = 1; next } on && NF { print $1 }')
fi
if [ "${#policies[@]}" -eq 0 ]; then
	echo "openb_experiment: no policies to run" >&2
	exit 1
fi

cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo "?")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "openb_experiment: default trace ($(basename "$nodes"), $(basename "$pods")), seeds 42-51, inflate 1.3; $cores online CPUs"
for p in "${policies[@]}"; do
	printf '  %-15s jobs=1 ...' "$p" >&2
	"$kerf" sim openb --nodes "$nodes" --pods "$pods" --policy "$p" \
		--seeds 42-51 --jobs 1 --json >"$tmp/$p.j1"
	printf ' jobs=%s ...' "$cores" >&2
	"$kerf" sim openb --nodes "$nodes" --pods "$pods" --policy "$p" \
		--seeds 42-51 --json >"$tmp/$p.jn"
	printf ' done\n' >&2
done

python3 - "$tmp" "$cores" "${policies[@]}" <<'PY'
import json, sys

tmp, cores, policies = sys.argv[1], sys.argv[2], sys.argv[3:]

def load(path):
    # one OpenbRun document (docs/schema/OpenbRun.json); one policy ran
    with open(path) as f:
        return json.load(f)["items"][0]

head = "%-15s %14s %9s %12s %14s" % ("policy", "unalloc mean %", "sd",
                                     "wall_s (j=1)", "wall_s (j=%s)" % cores)
print(head)
print("-" * len(head))
differ = []
for p in policies:
    one, many = load("%s/%s.j1" % (tmp, p)), load("%s/%s.jn" % (tmp, p))
    u = one["unallocPercentAt100Mean"]
    if one["seeds"] != many["seeds"]:
        differ.append(p)
    print("%-15s %14s %9s %12.2f %14.2f" % (
        p, "n/a" if u is None else "%.2f" % u,
        "n/a" if one["unallocPercentAt100Sd"] is None
        else "%.2f" % one["unallocPercentAt100Sd"],
        one["wallSeconds"], many["wallSeconds"]))
if differ:
    print("WARNING: results differ between --jobs 1 and --jobs %s for: %s"
          % (cores, ", ".join(differ)))
else:
    print("(per-seed results identical with --jobs 1 and --jobs %s)" % cores)
PY
