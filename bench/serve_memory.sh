#!/usr/bin/env bash
# kerf serve's memory with N nodes and M pods cached, end to end:
#
#   bash bench/serve_memory.sh [NODES [PODS [BUILD_DIR]]]   (5000 50000 build)
#
# KERF_SERVE_ARGS adds options to kerf serve (e.g. --max-in-flight 256).
#
# Starts kerf-testapi over TLS (certificates from tests/unit/kube_certs.sh),
# installs the Tenant and GPUPool CRDs (deploy/crds/, read with python3's yaml), starts
# kerf serve, runs bench_k8s_bind --keep (N nodes of 8 GPUs, or more up to
# 16 so that every pod fits; M one-GPU pods for kerf, every pod bound),
# waits for kerf serve to settle, and prints one JSON line: nodes, pods, peak_rss_mib (VmHWM of kerf serve: the whole run,
# lists and binding included), steady_rss_mib (VmRSS with every pod bound
# and cached, 12 s of idle cycles later), pods_per_s (bench_k8s_bind's).
# Only kerf serve's memory is counted; the test API server is another
# process.  Everything it made is removed; its processes are stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=${1:-5000}
pods=${2:-50000}
build=${3:-build}
# every pod fits: at least 8 GPUs a node, more when the pods need them
gpus=$(( (pods + nodes - 1) / nodes ))
[ "$gpus" -lt 8 ] && gpus=8
if [ "$gpus" -gt 16 ]; then
	echo "serve_memory: $pods one-GPU pods do not fit $nodes nodes of 16 GPUs" >&2
	exit 2
fi
for b in "$build/kerf" "$build/src/testapi/kerf-testapi" "$build/bench/bench_k8s_bind"; do
	if [ ! -x "$b" ]; then
		echo "serve_memory: $b missing (ninja -C $build)" >&2
		exit 2
	fi
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/kerf-mem-XXXXXX")
ta_pid=
kerf_pid=
cleanup() {
	[ -n "$kerf_pid" ] && kill "$kerf_pid" 2>/dev/null && wait "$kerf_pid" 2>/dev/null
	[ -n "$ta_pid" ] && kill "$ta_pid" 2>/dev/null && wait "$ta_pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
sh tests/unit/kube_certs.sh "$dir" || { echo "serve_memory: no openssl" >&2; exit 2; }
printf 'kerf-mem-token' > "$dir/token"
"$build/src/testapi/kerf-testapi" --port 0 --token-file "$dir/token" \
	--tls-cert "$dir/server.crt" --tls-key "$dir/server.key" \
	--tls-ca "$dir/ca.crt" --kubeconfig-out "$dir/kc.yaml" \
	--watch-window 100000 >"$dir/testapi.log" 2>&1 &
ta_pid=$!
for _ in $(seq 100); do
	[ -s "$dir/kc.yaml" ] && break
	sleep 0.1
done
server=$(sed -n 's/^ *server: *//p' "$dir/kc.yaml")
for crd in tenants gpupools; do
	python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' \
		"deploy/crds/$crd.kerf.io.yaml" > "$dir/crd.json"
	curl -fsS --cacert "$dir/ca.crt" -H "Authorization: Bearer kerf-mem-token" \
		-H 'Content-Type: application/json' --data-binary @"$dir/crd.json" \
		"$server/apis/apiextensions.k8s.io/v1/customresourcedefinitions" >/dev/null
done
"$build/kerf" serve --kubeconfig "$dir/kc.yaml" --qps 100000 --burst 100000 \
	--metrics-addr '' ${KERF_SERVE_ARGS:-} 2>"$dir/serve.log" &
kerf_pid=$!
bench=$("$build/bench/bench_k8s_bind" --kubeconfig "$dir/kc.yaml" --nodes "$nodes" \
	--pods "$pods" --gpus-per-node "$gpus" --scheduler-name kerf --scheduler-pid "$kerf_pid" \
	--timeout-s 3600 --keep) || true
# idle cycles (resync is 1 s) after the last binding's answer, long
# enough for the idle malloc_trim (at most every 10 s) to have run
sleep 12
status() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$kerf_pid/status"; }
steady_kb=$(status VmRSS)
peak_kb=$(status VmHWM)
pps=$(printf '%s\n' "$bench" | sed -n 's/.*"pods_per_s":\([0-9.]*\).*/\1/p')
cpu=$(printf '%s\n' "$bench" | sed -n 's/.*"cpu_s_per_1000_pods":\([0-9.]*\).*/\1/p')
bound=$(printf '%s\n' "$bench" | sed -n 's/.*"bound":\([a-z]*\).*/\1/p')
awk -v n="$nodes" -v g="$gpus" -v p="$pods" -v b="${bound:-false}" -v pk="$peak_kb" \
	-v st="$steady_kb" -v r="${pps:-0}" -v c="${cpu:-null}" 'BEGIN {
	printf "{\"nodes\":%d,\"gpus_per_node\":%d,\"pods\":%d,\"bound\":%s,\"peak_rss_mib\":%.1f,\"steady_rss_mib\":%.1f,\"pods_per_s\":%s,\"cpu_s_per_1000_pods\":%s}\n",
		n, g, p, b, pk / 1024, st / 1024, r, c }'
