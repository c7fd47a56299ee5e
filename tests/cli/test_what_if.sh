#!/usr/bin/env bash
# `kerf what-if --scenario FILE --at TIME CHANGE...` on the scenarios of
# tests/cli/what_if: raising a quota starts the job that waited for it,
# lowering a weight changes the fair-share order, switching the policy
# changes the placement, and a bad change (unknown tenant, flavor or
# policy, a negative number, --scenario without --at) is refused with
# exit status 2 and nothing on stdout.  Prints TAP.
#
# usage: test_what_if.sh KERF SOURCE_ROOT
set -u

kerf=$1
dir=$2/tests/cli/what_if
. "$(dirname "$0")/tap.sh"

run() { timeout 60 "$kerf" what-if "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; echo $?; }

# field WORKLOAD PATH: a field of the workload in the last JSON output
# (PATH like effect or whatIf.nodes), "" when absent.
field() {
	python3 - "$tmp/out" "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for w in d["workloads"]:
    if w["workload"] == sys.argv[2]:
        v = w
        for k in sys.argv[3].split("."):
            v = v.get(k, "") if isinstance(v, dict) else ""
        print(v)
PY
}

# table_row WORKLOAD: the row of the table output for it, spaces squeezed.
table_row() { grep "^$1 " "$tmp/out" | tr -s ' '; }

# ---- quota: the second job of a waits for quota; 16 GPUs start it ----
q=$dir/quota.yaml
rc=$(run --scenario "$q" --at 10m -o json)
check "quota: no change exits 0" 0 "$rc"
check "quota: as is, second-0 waits for quota" QuotaExceeded "$(field second-0 asIs.code)"
check "quota: with no change, nothing differs" StillWaits "$(field second-0 effect)"
rc=$(run --scenario "$q" --at 10m --set-quota a=16 -o json)
check "quota: raised, exit 0" 0 "$rc"
check "quota: raised, second-0 starts" Starts "$(field second-0 effect)"
check "quota: raised, second-0 on n1" n1 "$(field second-0 whatIf.nodes)"
check "quota: raised, first-0 unchanged" Same "$(field first-0 effect)"
rc=$(run --scenario "$q" --at 10m --set-quota a:H100-80GB=16)
check "quota: table, exit 0" 0 "$rc"
check "quota: table row" "second-0 a Pending Pending Running Starts n1 -" "$(table_row second-0)"
check "quota: tenant a's GPUs 8 -> 16" "a 8 8 16" "$(table_row a)"
rc=$(run --scenario "$q" --at 10m --set-borrowing-limit a=8 -o json)
check "borrowing: a may borrow 8, second-0 starts" Starts "$(field second-0 effect)"
rc=$(run --scenario "$q" --at 10m --set-quota a=12 -o json)
check "quota: 12 is not enough, second-0 still waits" StillWaits "$(field second-0 effect)"
check "quota: 12, the reason is the quota" QuotaExceeded "$(field second-0 whatIf.code)"

# ---- weight: equal weights, x goes first; x's weight 1, y does --------
w=$dir/weight.yaml
rc=$(run --scenario "$w" --at 2m -o json)
check "weight: as is, x-more starts" Running "$(field x-more-0 asIs.state)"
check "weight: as is, y-more waits" Pending "$(field y-more-0 asIs.state)"
rc=$(run --scenario "$w" --at 2m --set-weight x=1 -o json)
check "weight: x lowered, exit 0" 0 "$rc"
check "weight: x lowered, y-more starts" Starts "$(field y-more-0 effect)"
check "weight: x lowered, x-more waits" Waits "$(field x-more-0 effect)"

# ---- policy: kerf puts the new job on the idle node, best-fit beside ---
p=$dir/policy.yaml
rc=$(run --scenario "$p" --at 2m --policy best-fit -o json)
check "policy: exit 0" 0 "$rc"
check "policy: as is (kerf), new-0 on n1" n1 "$(field new-0 asIs.nodes)"
check "policy: best-fit, new-0 on n0" n0 "$(field new-0 whatIf.nodes)"
check "policy: best-fit, new-0 moves" Moves "$(field new-0 effect)"
rc=$(run --scenario "$p" --at 2m --policy gpu-clustering -o json)
check "policy: gpu-clustering keeps n1" Same "$(field new-0 effect)"

# ---- preemption: hi's quota raised, its production job preempts lo's ----
r=$dir/reclaim.yaml
rc=$(run --scenario "$r" --at 2m --set-quota hi=8 -o json)
check "reclaim: exit 0" 0 "$rc"
check "reclaim: lo's job is asked to leave" Preempted "$(field lo-job-0 effect)"
check "reclaim: ... and shown Leaving" Leaving "$(field lo-job-0 whatIf.state)"
check "reclaim: hi's job waits for it" WaitingForPreemption "$(field hi-job-0 whatIf.code)"
rc=$(run --scenario "$r" --at 2m --set-quota hi=8 --horizon 5m -o json)
check "reclaim, 5 minutes on: hi's job starts" Starts "$(field hi-job-0 effect)"
check "reclaim, 5 minutes on: lo's job waits again" Pending "$(field lo-job-0 whatIf.state)"
rc=$(run --scenario "$r" --at 2m --horizon 5m -o json)
check "reclaim, no change, 5 minutes on: lo's job keeps running" Same "$(field lo-job-0 effect)"

# ---- deterministic: the same run twice, the same bytes -----------------
run --scenario "$w" --at 2m --set-weight x=1 -o yaml >/dev/null
cp "$tmp/out" "$tmp/first"
run --scenario "$w" --at 2m --set-weight x=1 -o yaml >/dev/null
check "deterministic: yaml twice the same" 0 "$(cmp -s "$tmp/first" "$tmp/out"; echo $?)"

# ---- bad changes: exit 2, the option and the reason, nothing on stdout --
# refused WANT-IN-STDERR ARGS...
refused() {
	local want=$1 rc
	shift
	rc=$(run "$@")
	check "refused: $* (exit 2)" 2 "$rc"
	check "refused: $* (message)" 0 "$(grep -qF -- "$want" "$tmp/err"; echo $?)"
	check "refused: $* (no stdout)" 0 "$(wc -c <"$tmp/out" | tr -d ' ')"
}
refused "--set-quota: unknown tenant 'nobody' (tenants: a b)" --scenario "$q" --at 10m --set-quota nobody=4
refused "--set-quota: unknown flavor 'A100' (flavors: H100-80GB)" --scenario "$q" --at 10m --set-quota a:A100=4
refused "--set-weight 'a=-1': the weight must not be negative" --scenario "$q" --at 10m --set-weight a=-1
refused "--set-quota 'a=-2': GPUS must not be negative" --scenario "$q" --at 10m --set-quota a=-2
refused "--policy 'spread': not a placement policy" --scenario "$q" --at 10m --policy spread
refused "--scenario needs --at TIME" --scenario "$q" --set-quota a=16
refused "--at '-5m': must not be negative" --scenario "$q" --at -5m --set-quota a=16
refused "--at: 20h is past the scenario's horizon" --scenario "$q" --at 20h --set-quota a=16
refused "unexpected argument" --scenario "$q" --at 10m a=16
# a bad change is refused before the scenario is even read
refused "--set-weight 'a=0'" --scenario /nonexistent.yaml --at 1m --set-weight a=0
rc=$(run --help)
check "--help exits 0" 0 "$rc"
check "--help names --set-quota" 0 "$(grep -qF -- '--set-quota TENANT[:FLAVOR]=GPUS' "$tmp/out"; echo $?)"
rc=$(run --scenario /nonexistent.yaml --at 1m)
check "a scenario that does not load: exit 1" 1 "$rc"

# ---- --server: a state document as kerf serve answers it -------------
# (state.json, served at /api/v1/state by a small HTTP server on a free
# port; a document without history, as one written by hand)
python3 - "$dir/state.json" "$tmp/port" <<'PY' &
import http.server, sys
body = open(sys.argv[1], "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.path == "/api/v1/state"
        self.send_response(200 if ok else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body if ok else b'{"kind":"Status","message":"not served"}')
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2] + ".tmp", "w").write(str(s.server_port))
import os; os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.timeout = 60
for _ in range(20):
    s.handle_request()
PY
server_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
url=http://127.0.0.1:$(cat "$tmp/port" 2>/dev/null)
rc=$(run --server "$url" -o json)
check "server: as it is, exit 0" 0 "$rc"
check "server: as it is, ml/train-1 waits for quota" QuotaExceeded "$(field ml/train-1 asIs.code)"
rc=$(run --server "$url" --set-quota ml:nvidia-h100-80gb-hbm3=2 -o json)
check "server: quota raised (flavor as a Tenant names it), exit 0" 0 "$rc"
check "server: quota raised, ml/train-1 starts" Starts "$(field ml/train-1 effect)"
check "server: quota raised, on gpu-1" gpu-1 "$(field ml/train-1 whatIf.nodes)"
refused "--set-weight: unknown tenant 'team-z' (tenants: ml)" --server "$url" --set-weight team-z=2
refused "--server and --scenario" --server "$url" --scenario "$q" --at 1m --set-weight ml=2
refused "--at goes with --scenario" --server "$url" --at 1m --set-weight ml=2
kill "$server_pid" 2>/dev/null
wait "$server_pid" 2>/dev/null

tap_end
