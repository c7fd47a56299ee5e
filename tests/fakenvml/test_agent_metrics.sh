#!/usr/bin/env bash
# `kerf agent metrics` on the fake NVML (scripts/telemetry.json: an H100
# busy at 87 % with 20 GiB used and 612.345 W, an A100 in MIG mode whose
# utilisation NVML refuses): the exact samples, a refused value left out
# rather than reported as 0, the H100's processes by pod (a fake /proc
# tree: one in a pod, one on the host, one gone), and `promtool check
# metrics` accepting the text, also when NVML cannot be loaded at all;
# the GPM series of the H100 (two samples --gpm-interval-ms apart), none
# for the A100 (no GPM) and none with --gpm-interval-ms 0.
# Prints TAP.
#
# usage: test_agent_metrics.sh KERF FAKE_LIB SCRIPTS_DIR PROMTOOL
set -u
kerf=$1 lib=$2 scripts=$3 promtool=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
check() { # NAME CMD...
	local name=$1
	shift
	n=$((n + 1))
	if "$@" >"$tmp/check" 2>&1; then
		echo "ok $n - $name"
	else
		failed=$((failed + 1))
		echo "not ok $n - $name"
		sed 's/^/#   /' "$tmp/check" | head -20
	fi
}
has() { grep -qxF -- "$1" "$tmp/out"; }
hasnt() { ! grep -q -- "$1" "$tmp/out"; }

uid=8f4c2a3e-1b2d-4c5e-9f00-112233445566
mkdir -p "$tmp/proc/4001" "$tmp/proc/4002"
echo "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid//-/_}.slice/cri-containerd-1.scope" >"$tmp/proc/4001/cgroup"
echo "0::/system.slice/nvidia-persistenced.service" >"$tmp/proc/4002/cgroup"
KERF_FAKE_NVML_SCRIPT=$scripts/telemetry.json "$kerf" agent metrics \
	--nvml-library "$lib" --hostname node-1 --proc-root "$tmp/proc" --gpm-interval-ms 100 \
	>"$tmp/out" 2>"$tmp/err"
check "exit 0 when NVML is read" test $? -eq 0
l='{gpu="0",uuid="GPU-11111111-2222-3333-4444-555555555555",model_name="NVIDIA H100 80GB HBM3",hostname="node-1"}'
m='{gpu="1",uuid="GPU-66666666-7777-8888-9999-000000000000",model_name="NVIDIA A100-SXM4-40GB",hostname="node-1"}'
check "nvml up, 2 GPUs" eval 'has "kerf_agent_nvml_up 1" && has "kerf_agent_gpus 2"'
check "utilisation" has "DCGM_FI_DEV_GPU_UTIL$l 87"
check "memory used and free, MiB" eval 'has "DCGM_FI_DEV_FB_USED$l 20480" && has "DCGM_FI_DEV_FB_FREE$l 61079"'
check "power, W" has "DCGM_FI_DEV_POWER_USAGE$l 612.345"
check "a MIG GPU's refused utilisation is left out, not 0" hasnt "DCGM_FI_DEV_GPU_UTIL$m"
check "and counted as an NVML error" has "kerf_agent_nvml_errors$m 1"
p='{gpu="0",uuid="GPU-11111111-2222-3333-4444-555555555555"'
check "a pod's process memory, by UID (no pod table here)" \
	has "kerf_gpu_process_memory_used_bytes$p,pod=\"$uid\",namespace=\"\",tenant=\"\"} 20971520000"
check "a host process under pod \"\", a process gone left out" \
	has "kerf_gpu_process_memory_used_bytes$p,pod=\"\",namespace=\"\",tenant=\"\"} 419430400"
check "no process error" has "kerf_agent_gpu_process_errors 0"
check "GPM: SM occupancy and activity as ratios" \
	eval 'has "DCGM_FI_PROF_SM_OCCUPANCY$l 0.375" && has "DCGM_FI_PROF_SM_ACTIVE$l 0.6"'
check "GPM: NVLink bytes/s" \
	eval 'has "DCGM_FI_PROF_NVLINK_TX_BYTES$l 1000000000" && has "DCGM_FI_PROF_NVLINK_RX_BYTES$l 2000000000"'
check "GPM: the A100 has none, not 0" hasnt "DCGM_FI_PROF_SM_ACTIVE$m"
check "GPM: supported by GPU" eval 'has "kerf_agent_gpm_supported$l 1" && has "kerf_agent_gpm_supported$m 0"'
check "GPM: the GPU without it said once on stderr" \
	test "$(grep -c "GPU 1 (GPU-66666666-7777-8888-9999-000000000000, NVIDIA A100-SXM4-40GB): no GPM" "$tmp/err")" -eq 1
check "promtool check metrics accepts it" "$promtool" check metrics <"$tmp/out"

"$kerf" agent metrics --nvml-library "$tmp/none.so" >"$tmp/out" 2>"$tmp/err"
check "exit 1 when NVML cannot be loaded" test $? -eq 1
check "nvml down, 0 GPUs, no sample" eval 'has "kerf_agent_nvml_up 0" && has "kerf_agent_gpus 0" && hasnt DCGM_'
check "promtool accepts that too" "$promtool" check metrics <"$tmp/out"

KERF_FAKE_NVML_SCRIPT=$scripts/telemetry.json "$kerf" agent metrics \
	--nvml-library "$lib" --hostname node-1 --gpm-interval-ms 0 >"$tmp/out" 2>"$tmp/err"
check "--gpm-interval-ms 0: no GPM series, the rest there" \
	eval 'hasnt DCGM_FI_PROF_ && hasnt kerf_agent_gpm_ && has "DCGM_FI_DEV_GPU_UTIL$l 87"'
check "--gpm-interval-ms 50 is a usage error naming the option" eval \
	'"$kerf" agent metrics --gpm-interval-ms 50 >/dev/null 2>"$tmp/err"; test $? -eq 2 && grep -q -- "--gpm-interval-ms: 0 (off) or 100 to 60000" "$tmp/err"'
check "--gpm-interval-ms x is a usage error" eval \
	'"$kerf" agent metrics --gpm-interval-ms x >/dev/null 2>"$tmp/err"; test $? -eq 2 && grep -q -- "--gpm-interval-ms" "$tmp/err"'
check "a bad option is a usage error (2)" eval '"$kerf" agent metrics --bogus >/dev/null 2>&1; test $? -eq 2'

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
