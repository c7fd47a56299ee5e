#!/usr/bin/env bash
# `kerf agent inventory` against the fake libnvidia-ml: the table, the
# JSON, the Unknown inventory of a node without NVML (exit 1, N-01) and
# usage errors (exit 2).  Prints TAP.
#
# usage: test_agent_inventory.sh KERF FAKE_LIB SCRIPTS_DIR
set -u

kerf=$1
lib=$2
scripts=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# check NAME STATUS SCRIPT GREP_OUT GREP_ERR ARGS...: kerf agent inventory
# ARGS with the fake on SCRIPT exits STATUS, stdout has a line matching
# GREP_OUT and stderr one equal to GREP_ERR (either may be empty).
check() {
	local name=$1 want=$2 script=$3 out=$4 err=$5 rc ok=1
	shift 5
	n=$((n + 1))
	KERF_FAKE_NVML_SCRIPT="$scripts/$script" timeout 60 "$kerf" agent inventory "$@" \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[ "$rc" -eq "$want" ] || ok=0
	[ -z "$out" ] || grep -qF -- "$out" "$tmp/out" || ok=0
	[ -z "$err" ] || grep -qxF -- "$err" "$tmp/err" || ok=0
	if [ $ok -eq 1 ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name (exit $rc)"
		sed 's/^/# out: /' "$tmp/out" | head -20
		sed 's/^/# err: /' "$tmp/err" | head -5
		failed=$((failed + 1))
	fi
}

check "table of two NVLink cliques" 0 nvlink8.json "domain 4 (3 links)" "" \
	--nvml-library "$lib"
check "json of two NVLink cliques" 0 nvlink8.json '"nvlinkDomains": 2,' "" \
	--nvml-library "$lib" -o json
check "MIG instances in the table" 0 mig.json "on 1g.10gb@0,2g.20gb@2,3g.40gb@4" "" \
	--nvml-library "$lib"
check "a lost GPU is listed" 0 field_fail.json "Lost" "" --nvml-library "$lib"
check "the library from KERF_NVML_LIBRARY" 0 two_gpu.json '"model": "A100-40GB",' "" \
	-o json
check "no NVML: Unknown, no GPUs, exit 1" 1 two_gpu.json '"state": "Unknown",' \
	"kerf agent inventory: cannot load NVML from '/nonexistent/libnvidia-ml.so.1': /nonexistent/libnvidia-ml.so.1: cannot open shared object file: No such file or directory (no NVIDIA driver on this node?)" \
	--nvml-library /nonexistent/libnvidia-ml.so.1 -o json
check "nvmlInit_v2 failing: exit 1" 1 init_fail.json "NVML: Unknown (nvmlInit_v2 failed" \
	"kerf agent inventory: nvmlInit_v2 failed: NVML_ERROR_DRIVER_NOT_LOADED (9)" \
	--nvml-library "$lib"
check "yaml: the GPUInventory document" 0 two_gpu.json "kind: GPUInventory" "" -o yaml
check "unknown output" 2 two_gpu.json "" \
	"kerf agent inventory: -o 'xml': expected table, wide, json or yaml" -o xml
check "unexpected argument" 2 two_gpu.json "" \
	"kerf agent inventory: unexpected argument 'extra'" extra

echo "1..$n"
[ $failed -eq 0 ]
