#!/usr/bin/env bash
# `kerf agent run` as the DaemonSet runs it, a process against an API
# server (kerf-testapi over TLS) with the fake NVML: it writes its Node's
# GPU labels and condition, answers /readyz and /metrics on its two
# addresses, and ends cleanly (exit 0) on SIGTERM.  Prints TAP.
#
# usage: test_agent_run_smoke.sh KERF KERF_TESTAPI FAKE_LIB SCRIPTS_DIR CERT_SCRIPT
set -u

kerf=$1
testapi=$2
lib=$3
scripts=$4
certs=$5
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
n=0
failed=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

if ! sh "$certs" "$tmp" || ! command -v python3 >/dev/null; then
	echo "1..0 # SKIP no openssl or python3"
	exit 0
fi
port=$((20000 + RANDOM % 20000))
mport=$((port + 1))
hport=$((port + 2))
echo smoke-token > "$tmp/token"
"$testapi" --port "$port" --token-file "$tmp/token" --tls-cert "$tmp/server.crt" \
	--tls-key "$tmp/server.key" --tls-ca "$tmp/ca.crt" --kubeconfig-out "$tmp/kc" \
	>"$tmp/testapi.log" 2>&1 &
pids+=($!)

# api METHOD PATH [BODY]: the answer's JSON on stdout
api() {
	python3 - "$port" "$tmp/ca.crt" "$@" <<'PY'
import json, ssl, sys, urllib.request
port, ca, method, path = sys.argv[1:5]
body = sys.argv[5].encode() if len(sys.argv) > 5 else None
ctx = ssl.create_default_context(cafile=ca)
req = urllib.request.Request("https://127.0.0.1:%s%s" % (port, path), data=body, method=method,
                             headers={"Authorization": "Bearer smoke-token",
                                      "Content-Type": "application/json"})
try:
    print(urllib.request.urlopen(req, context=ctx, timeout=5).read().decode())
except Exception as e:
    print(json.dumps({"error": str(e)}))
PY
}

for _ in $(seq 50); do [ -s "$tmp/kc" ] && break; sleep 0.1; done
api POST /api/v1/nodes '{"apiVersion":"v1","kind":"Node","metadata":{"name":"smoke-1"}}' >/dev/null
KERF_NVML_LIBRARY="$lib" KERF_FAKE_NVML_SCRIPT="$scripts/agent.json" \
	"$kerf" agent run --node-name smoke-1 --kubeconfig "$tmp/kc" \
	--metrics-addr "127.0.0.1:$mport" --health-addr "127.0.0.1:$hport" \
	>"$tmp/agent.log" 2>&1 &
agent=$!
pids+=($agent)

labelled=1
for _ in $(seq 100); do
	if api GET /api/v1/nodes/smoke-1 | grep -q '"nvidia.com/gpu.count": *"5"'; then
		labelled=0
		break
	fi
	sleep 0.1
done
ok $labelled "the agent writes its Node's GPU count"
api GET /api/v1/nodes/smoke-1 | grep -q '"type": *"kerf.io/GPUHealthy"'
ok $? "and the condition kerf.io/GPUHealthy"
python3 -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:$hport/readyz', timeout=5).status == 200 else 1)" 2>/dev/null
ok $? "/readyz on --health-addr: 200"
python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$mport/metrics', timeout=5).read().decode())" >"$tmp/metrics" 2>/dev/null
grep -q '^DCGM_FI_DEV_GPU_UTIL{' "$tmp/metrics" && grep -q '^kerf_agent_health_known 1' "$tmp/metrics"
ok $? "/metrics on --metrics-addr: the GPUs' telemetry, health known"
kill -TERM "$agent"
st=0
for _ in $(seq 50); do kill -0 "$agent" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$agent" 2>/dev/null; then st=1; else wait "$agent"; st=$?; fi
ok $st "SIGTERM: the agent ends, exit 0"
[ $failed -eq 0 ] || sed 's/^/# agent: /' "$tmp/agent.log" | tail -20

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
