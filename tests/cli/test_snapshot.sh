#!/usr/bin/env bash
# kerf sim snapshot, and kerf get / explain / top on a snapshot file:
# options refused before any work, with a message naming the option and
# the reason; `kerf get gpus` and `kerf top` rendered from a fixed file
# (tests/cli/snapshot/fixed.json) compared line by line; a snapshot of a
# scenario read back by every view with the shapes of kerf serve's
# answers.  Prints TAP.
#
# usage: test_snapshot.sh KERF SOURCE_ROOT
set -u

kerf=$1
src=$2
fixed=$src/tests/cli/snapshot/fixed.json
nvl=$src/tests/cli/sim_run/nvlink-split.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# ok NAME COND-STATUS: one TAP line, the last output on failure.
ok() {
	n=$((n + 1))
	if [ "$2" = 0 ]; then
		echo "ok $n - $1"
	else
		failed=$((failed + 1))
		echo "not ok $n - $1"
		sed 's/^/#   /' "$tmp/out" "$tmp/err" | head -30
	fi
}

run() { timeout 120 "$kerf" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; echo $?; }
# err TEXT: stderr has TEXT and stdout is empty.
err() { grep -qF -- "$1" "$tmp/err" && [ ! -s "$tmp/out" ] && echo 0 || echo 1; }
same() { diff -u "$1" "$tmp/out" >"$tmp/diff" && echo 0 || { cat "$tmp/diff" >>"$tmp/err"; echo 1; }; }

# ---- kerf sim snapshot: usage errors, nothing run -----------------------
rc=$(run sim snapshot "$nvl")
ok "snapshot without --at: usage (2)" "$([ "$rc" = 2 ] && err '--at is required' | grep -q 0 && echo 0 || echo 1)"
for bad in 2x 1h30 -5 1.2.3 h 1.0005 1. ''; do
	rc=$(run sim snapshot "$nvl" --at "$bad")
	ok "snapshot --at '$bad' refused (2)" "$([ "$rc" = 2 ] && [ "$(err "--at '$bad': expected seconds")" = 0 ] && echo 0 || echo 1)"
done
rc=$(run sim snapshot "$nvl" --at 3h)
ok "snapshot --at after the horizon refused (2)" "$([ "$rc" = 2 ] && [ "$(err '--at is after the end of the scenario (its horizon is 120m)')" = 0 ] && echo 0 || echo 1)"
rc=$(run sim snapshot "$nvl" --at end extra)
ok "snapshot with a second operand refused (2)" "$([ "$rc" = 2 ] && [ "$(err "'extra'")" = 0 ] && echo 0 || echo 1)"
rc=$(run sim snapshot "$tmp/none.yaml" --at end)
ok "snapshot of a missing file fails (1)" "$([ "$rc" = 1 ] && [ -s "$tmp/err" ] && echo 0 || echo 1)"
rc=$(run sim snapshot --help)
ok "snapshot --help (0)" "$([ "$rc" = 0 ] && grep -q 'usage: kerf sim snapshot' "$tmp/out" && echo 0 || echo 1)"

for fmt in table wide; do
	rc=$(run sim snapshot "$nvl" --at end -o $fmt)
	ok "snapshot -o $fmt refused (2): a snapshot is a document" "$([ "$rc" = 2 ] && [ "$(err "-o $fmt: a snapshot is a document, json or yaml; kerf get ... --snapshot FILE prints its tables")" = 0 ] && echo 0 || echo 1)"
done
rc=$(run sim snapshot "$nvl" --at end --out '')
ok "snapshot --out '' refused (2)" "$([ "$rc" = 2 ] && [ "$(err "--out: an empty file name")" = 0 ] && echo 0 || echo 1)"

# ---- a snapshot written, each view read back ----------------------------
rc=$(run sim snapshot "$nvl" --at 1h30m --out "$tmp/s.json")
ok "snapshot --at 1h30m --out FILE (0, nothing on stdout)" "$([ "$rc" = 0 ] && [ ! -s "$tmp/out" ] && echo 0 || echo 1)"
ok "the snapshot's at is 5400 s and its source the scenario" \
	"$(python3 -c "import json,sys; s=json.load(open('$tmp/s.json')); sys.exit(not (s['atSeconds']==5400.0 and s['kind']=='Snapshot' and s['source']['name']=='nvlink-split' and s['source']['policy']=='kerf'))" && echo 0 || echo 1)"
rc=$(run sim snapshot "$nvl" --at 5400)
ok "--at 5400 writes the same document to stdout" "$([ "$rc" = 0 ] && same "$tmp/s.json")"
rc=$(run sim snapshot "$nvl" --at 5400 -o yaml)
ok "-o yaml: the same document as YAML" \
	"$([ "$rc" = 0 ] && python3 -c "import json,sys,yaml; sys.exit(yaml.safe_load(open('$tmp/out')) != json.load(open('$tmp/s.json')))" && echo 0 || echo 1)"
for v in tenants:TenantList queue:Queue nodes:NodeList gpus:GPUList; do
	rc=$(run get "${v%%:*}" --snapshot "$tmp/s.json" -o json)
	ok "get ${v%%:*} --snapshot -o json is a ${v##*:}" "$([ "$rc" = 0 ] && python3 -c "import json,sys; sys.exit(json.load(open('$tmp/out'))['kind'] != '${v##*:}')" && echo 0 || echo 1)"
done
rc=$(run get nodes --snapshot "$tmp/s.json")
ok "get nodes --snapshot: NVLink domains named domain-N" "$([ "$rc" = 0 ] && grep -q '^a0 .* domain-1$' "$tmp/out" && echo 0 || echo 1)"
rc=$(run get gpus --snapshot "$tmp/s.json")
ok "get gpus --snapshot: 32 GPUs, those of a0 whole and lab's" "$([ "$rc" = 0 ] && [ "$(grep -c 'H100-80GB\|H200-141GB' "$tmp/out")" = 32 ] && grep -q '^a0  *0  *H100-80GB  *ok  *whole  *0  *lab  *1$' "$tmp/out" && echo 0 || echo 1)"
rc=$(run explain lab/gang-0 --snapshot "$tmp/s.json" -o yaml)
ok "explain --snapshot -o yaml" "$([ "$rc" = 0 ] && grep -q '^kind: Explanation$' "$tmp/out" && echo 0 || echo 1)"

# ---- GPUs of a simulated cluster: fractions, MIG instances, whole GPUs ---
rc=$(run sim snapshot "$src/tests/sim/mig.yaml" --at 30m --out "$tmp/mig.json")
ok "mig.yaml at 30m: snapshot written" "$rc"
ok "mig.yaml: MIG GPUs show each instance with its tenant and pod, whole GPUs their pod" "$(python3 - "$tmp/mig.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))['gpus']['items']
by = {(x['node'], x['index']): x for x in g}
m0, m1, f0 = by[('mig-0', 0)], by[('mig-0', 1)], by[('full-0', 1)]
good = [x['node'] for x in g] == ['mig-0', 'mig-0', 'full-0', 'full-0']
good &= m0['mode'] == 'mig' and m0['freeMilli'] == 0 and m0['tenant'] == 'lab'
good &= sorted((i['profile'], i['start'], i['pod']) for i in m0['mig']) == [
    ('3g.40gb', 0, 'lab/lab-0'), ('3g.40gb', 4, 'lab/lab-1')] or sorted(
    (i['profile'], i['start'], i['pod']) for i in m0['mig']) == [
    ('3g.40gb', 0, 'lab/lab-1'), ('3g.40gb', 4, 'lab/lab-0')]
good &= all(p['share'] == 'mig' for p in m0['pods'] + m1['pods'])
good &= m1['tenant'] is None and {i['tenant'] for i in m1['mig']} == {'serve', 'secure'}
good &= f0['mode'] == 'whole' and f0['pods'] == [{'namespace': 'train', 'name': 'train-0',
                                                  'tenant': 'train', 'gpuMilli': 1000, 'share': 'whole'}]
good &= 'mig' not in f0 and all(set(x) >= {'node', 'index', 'model', 'memoryMiB', 'health', 'mode',
                                          'freeMilli', 'tenant', 'pods'} for x in g)
sys.exit(not good)
PY
echo $?)"
rc=$(run sim snapshot "$src/tests/sim/isolation.yaml" --at 1h --out "$tmp/iso.json")
ok "isolation.yaml: fractions shared under MPS and time-slicing, one tenant or mixed" "$(python3 - "$tmp/iso.json" <<'PY'
import json, sys
g = {(x['node'], x['index']): x for x in json.load(open(sys.argv[1]))['gpus']['items']}
a, b = g[('l4-0', 0)], g[('l4-0', 1)]
good = a['mode'] == 'shared' and a['tenant'] == 'bank' and {p['share'] for p in a['pods']} == {'mps'}
good &= sum(p['gpuMilli'] for p in a['pods']) + a['freeMilli'] == 1000
good &= b['tenant'] is None and {p['tenant'] for p in b['pods']} == {'lab', 'lab2'}
good &= {p['share'] for p in b['pods']} == {'timeslice'}
sys.exit(not good)
PY
echo $?)"

# ---- kerf get / explain / top: a bad snapshot or options ----------------
rc=$(run get gpus --snapshot "$tmp/nothing.json")
ok "get --snapshot of a missing file fails (1), naming it" "$([ "$rc" = 1 ] && [ "$(err "--snapshot '$tmp/nothing.json'")" = 0 ] && echo 0 || echo 1)"
echo '{"kind": "NodeList", "apiVersion": "kerf.io/api/v1", "items": []}' >"$tmp/notsnap.json"
rc=$(run get nodes --snapshot "$tmp/notsnap.json")
ok "get --snapshot of a file that is not a snapshot fails (1)" "$([ "$rc" = 1 ] && [ "$(err 'not a snapshot (apiVersion must be kerf.io/api/v1 and kind Snapshot')" = 0 ] && echo 0 || echo 1)"
rc=$(run get gpus --snapshot "$fixed" --server http://127.0.0.1:1)
ok "get --snapshot with --server: usage (2)" "$([ "$rc" = 2 ] && [ "$(err '--server and --snapshot: give one')" = 0 ] && echo 0 || echo 1)"
rc=$(run explain a/b --snapshot '')
ok "explain --snapshot '': usage (2)" "$([ "$rc" = 2 ] && [ "$(err '--snapshot: an empty file name')" = 0 ] && echo 0 || echo 1)"
rc=$(run get pods --snapshot "$fixed")
ok "get pods: unknown resource (2), gpus among those expected" "$([ "$rc" = 2 ] && [ "$(err 'expected tenants, queue, nodes or gpus')" = 0 ] && echo 0 || echo 1)"
rc=$(run top --interval 0 --snapshot "$fixed")
ok "top --interval 0 refused (2)" "$([ "$rc" = 2 ] && [ "$(err "--interval '0': out of range (expected 0.1..3600)")" = 0 ] && echo 0 || echo 1)"
rc=$(run top --snapshot "$fixed" --server http://127.0.0.1:1)
ok "top --snapshot with --server: usage (2)" "$([ "$rc" = 2 ] && [ "$(err '--server and --snapshot: give one')" = 0 ] && echo 0 || echo 1)"
rc=$(run top extra --snapshot "$fixed")
ok "top with an operand: usage (2)" "$([ "$rc" = 2 ] && [ "$(err "'extra'")" = 0 ] && echo 0 || echo 1)"
rc=$(run top --snapshot "$fixed" -o xml)
ok "top -o xml: usage (2)" "$([ "$rc" = 2 ] && [ "$(err "-o 'xml': expected table, wide, json or yaml")" = 0 ] && echo 0 || echo 1)"

# ---- rendering from the fixed file ---------------------------------------
cat >"$tmp/want" <<'TABLE'
NODE      GPU   MODEL            HEALTH   MODE     FREE   TENANT   PODS
gpu-a-0   0     A100-SXM4-80GB   ok       whole    0      team-a   1
gpu-a-0   1     A100-SXM4-80GB   ok       shared   0.25   -        2
gpu-a-0   2     A100-SXM4-80GB   ok       mig      0      team-a   1
gpu-a-0   3     -                down     free     1      -        0
TABLE
rc=$(run get gpus --snapshot "$fixed")
ok "get gpus: the table of the fixed file" "$([ "$rc" = 0 ] && same "$tmp/want")"
cat >"$tmp/want" <<'TABLE'
NODE      GPU   MODEL            MEMORY    HEALTH   MODE     FREE   TENANT   PODS                                  MIG
gpu-a-0   0     A100-SXM4-80GB   81920Mi   ok       whole    0      team-a   ml/train-0(1 whole)                   -
gpu-a-0   1     A100-SXM4-80GB   81920Mi   ok       shared   0.25   -        ml/nb-1(0.25 mps),bio/nb-2(0.5 mps)   -
gpu-a-0   2     A100-SXM4-80GB   81920Mi   ok       mig      0      team-a   ml/infer-0(0.428 mig)                 3g.40gb@0=team-a,3g.40gb@4!
gpu-a-0   3     -                -         down     free     1      -        -                                     -
TABLE
rc=$(run get gpus --snapshot "$fixed" -o wide)
ok "get gpus -o wide: memory, pods and MIG instances" "$([ "$rc" = 0 ] && same "$tmp/want")"
rc=$(run get gpus --snapshot "$fixed" -o yaml)
ok "get gpus -o yaml: the items as written" "$([ "$rc" = 0 ] && grep -q '^kind: GPUList$' "$tmp/out" && grep -q '^    share: mps$' "$tmp/out" && grep -q '^    pod: null$' "$tmp/out" && echo 0 || echo 1)"
cat >"$tmp/want" <<'TABLE'
GPUs in use: 3.75 of 4

TENANT   GPUS   SHARE   NOMINAL   BORROWED   PENDING   BUDGET
team-a   3.25   81.3%   2         1.25       1         42%
team-b   0.5    12.5%   2         0          0         -
TABLE
rc=$(run top --snapshot "$fixed")
ok "top: one sample when stdout is not a terminal, tenants by use" "$([ "$rc" = 0 ] && same "$tmp/want")"
rc=$(run top --snapshot "$fixed" -o json --once)
ok "top -o json: one TopSample" "$([ "$rc" = 0 ] && python3 -c "
import json,sys
s=json.load(open('$tmp/out'))
i=s['items']
sys.exit(not (s['kind']=='TopSample' and s['clusterGPUMilli']==4000 and [x['tenant'] for x in i]==['team-a','team-b']
  and i[0]['sharePercent']==81.3 and i[0]['budgetPercent']==42 and i[1]['budgetPercent'] is None and i[0]['borrowedGPUMilli']==1250))" && echo 0 || echo 1)"
rc=$(run top --snapshot "$fixed" -o wide)
ok "top -o wide: GPUs by flavor" "$([ "$rc" = 0 ] && grep -q '^team-a .* A100-SXM4-80GB:3.25$' "$tmp/out" && echo 0 || echo 1)"

echo "1..$n"
[ "$failed" = 0 ]
