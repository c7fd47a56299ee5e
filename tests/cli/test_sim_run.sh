#!/usr/bin/env bash
# `kerf sim run` tells what is still pending at the end of a run: the
# section "pending at the end: N", one line "tenant/name: reason" per
# workload (the core's sentence), the "pending" array of --json, and exit
# status 3; a run where everything started exits 0 without the section.
# Prints TAP.
#
# usage: test_sim_run.sh KERF SOURCE_ROOT
set -u

kerf=$1
src=$2
dir=$src/tests/cli/sim_run
demo=$src/examples/scenario/demo-day.yaml
. "$(dirname "$0")/tap.sh"

# has LINE: LINE is exactly a line of the last run's stdout.
has() { grep -qxF -- "$1" "$tmp/out" && echo 0 || echo 1; }

# pending_first FILE "TENANT/NAME CODE REASON-START": the first item of the
# document's pending array is that workload, code and reason.
pending_first() {
	python3 - "$1" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["pending"][0]
key, code, reason = sys.argv[2].split(" ", 2)
sys.exit(not (p["tenant"] + "/" + p["name"] == key and p["code"] == code
              and p["reason"].startswith(reason)))
PY
}

run() { timeout 120 "$kerf" sim run "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; echo $?; }

# ---- the complete example of docs/scenario.md: the budget runs out ------
rc=$(run "$demo")
check "demo-day: exit 3 with work pending" 3 "$rc"
check "demo-day: the section counts 8 pending" 0 "$(has 'pending at the end: 8')"
check "demo-day: train-12 waits for the budget, the core's sentence" 0 \
	"$(has "team-a/train-12: tenant 'research' spent its GPU-hour budget (714.0 GPU-h of 500.0 GPU-h this window); new work waits until the window resets in 6d13h")"
check "demo-day: one line per pending workload, train-12 .. train-19" 8 \
	"$(grep -c "^team-a/train-1[2-9]: tenant 'research' spent its GPU-hour budget" "$tmp/out")"
check "demo-day: the report comes before the pending section" 0 \
	"$(awk '/^class /{c=NR} /^pending at the end/{p=NR} END{exit !(c && p > c)}' "$tmp/out"; echo $?)"

rc=$(run "$demo" --json)
check "demo-day --json: exit 3" 3 "$rc"
check "demo-day --json: the pending array names code and reason" 0 \
	"$(pending_first "$tmp/out" "team-a/train-12 BudgetExhausted tenant 'research' spent its GPU-hour budget"; echo $?)"
check "demo-day --json: one document, kind SimulationRun, 8 pending" 0 \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["kind"]=="SimulationRun" and len(d["pending"])==8 and d["summary"]["pending"]==8))' "$tmp/out"; echo $?)"
rc=$(run "$demo" -o yaml)
check "demo-day -o yaml: exit 3 as well" 3 "$rc"
rc=$(run "$demo" -o wide)
check "demo-day -o wide: exit 3 as well, the pending section" 0 \
	"$([ "$rc" = 3 ] && has 'pending at the end: 8' | grep -q 0; echo $?)"

# ---- a gang that must share an NVLink domain, 16 GPUs free in two -------
rc=$(run "$dir/nvlink-split.yaml")
check "nvlink-split: exit 3" 3 "$rc"
check "nvlink-split: the gang's reason names the NVLink domain" 0 \
	"$(grep -qx 'lab/gang-0: needs 2 of 2 pods (16000 GPU milli) placed together in one NVLink domain; .*' "$tmp/out"; echo $?)"
check "nvlink-split: the section counts 1" 0 "$(has 'pending at the end: 1')"

# ---- tests/sim/isolation.yaml: a fraction kept off GPUs others share ------
rc=$(run "$src/tests/sim/isolation.yaml")
check "isolation: exit 3" 3 "$rc"
check "isolation: bank2's reason names the isolation" 0 \
	"$(grep -qx "bank2/bank2-0: .*GPUs with room are shared against the pod's isolation or sharing mode" "$tmp/out"; echo $?)"

# ---- everything starts ------------------------------------------------------
rc=$(run "$dir/all-start.yaml")
check "all-start: exit 0" 0 "$rc"
check "all-start: all 5 started" 0 "$(grep -qE '^batch +5/5 ' "$tmp/out"; echo $?)"
check "all-start: no pending section" 1 \
	"$(grep -q 'pending' "$tmp/out"; echo $?)"
rc=$(run "$dir/all-start.yaml" --json)
check "all-start --json: exit 0" 0 "$rc"
check "all-start --json: an empty pending array" 0 \
	"$(python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["pending"] != [])' "$tmp/out"; echo $?)"

# ---- the exit status is documented -------------------------------------------
rc=$(run --help)
check "--help: exit 0" 0 "$rc"
check "--help: names exit status 3" 0 \
	"$(grep -qF '2 usage, 3 some workload is still pending at the end' "$tmp/out"; echo $?)"

tap_end
