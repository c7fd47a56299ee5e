#!/usr/bin/env bash
# `kerf agent mig` against the fake libnvidia-ml: a plan, its NVML steps
# carried out, a failure injected half way (exit 1, the layout legal, the
# step and NVML's error named) and a second run completing it, instances
# in use, MIG mode, actuation off on an old driver, and usage errors
# (exit 2).  Prints TAP.
#
# usage: test_agent_mig.sh KERF FAKE_LIB FAKE_LIB_MINIMAL SCRIPTS_DIR
set -u

kerf=$1
lib=$2
minimal=$3
scripts=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# check NAME STATUS SCRIPT GREP_OUT GREP_ERR ARGS...: kerf agent mig ARGS
# with the fake on SCRIPT exits STATUS, stdout has a line containing
# GREP_OUT and stderr one equal to GREP_ERR (either may be empty).  SCRIPT
# is a file of SCRIPTS_DIR or an absolute path.
check() {
	local name=$1 want=$2 script=$3 out=$4 err=$5 rc ok=1
	shift 5
	n=$((n + 1))
	case $script in /*) ;; *) script=$scripts/$script ;; esac
	KERF_NVML_LIBRARY=$lib KERF_FAKE_NVML_SCRIPT="$script" timeout 60 \
		"$kerf" agent mig "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[ "$rc" -eq "$want" ] || ok=0
	[ -z "$out" ] || grep -qF -- "$out" "$tmp/out" || ok=0
	[ -z "$err" ] || grep -qxF -- "$err" "$tmp/err" || ok=0
	if [ $ok -eq 1 ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name (exit $rc)"
		sed 's/^/# out: /' "$tmp/out" | head -30
		sed 's/^/# err: /' "$tmp/err" | head -5
		failed=$((failed + 1))
	fi
}

check "plan: the core's actions as NVML steps" 0 mig_actuate.json \
	"plan: 3 actions, 6 NVML steps" "" plan --want 1g.10gb=3
check "plan: the first step" 0 mig_actuate.json \
	"   1 destroy-ci gpu 0 3g.40gb@4 ci 0: planned" "" plan --want 1g.10gb=3
check "plan: the GPU without MIG left alone" 0 mig_actuate.json \
	"model H100-80GB; left alone: gpu 1: MIG off" "" plan --want 1g.10gb=3
check "apply: every step done" 0 mig_actuate.json "result: all 6 steps done" "" \
	apply --want 1g.10gb=3
check "apply: the layout read back" 0 mig_actuate.json \
	"  gpu 0: 1g.10gb@1, 1g.10gb@0, 1g.10gb@6, 2g.20gb@2" "" apply --want 1g.10gb=3
check "apply --dry-run changes nothing" 0 mig_actuate.json "   6 create-ci  gpu 0 1g.10gb@6: planned" "" \
	apply --want 1g.10gb=3 --dry-run

# The 4th NVML write fails: the create-ci of the first new 1g.
check "failure half way: exit 1, the step and NVML's error" 1 mig_fail.json \
	"result: step 4 of 6 failed: nvmlGpuInstanceCreateComputeInstance: NVML_ERROR_UNKNOWN (999)" \
	"kerf agent mig: step 4 of 6, create-ci 1g.10gb@1 on gpu 0: nvmlGpuInstanceCreateComputeInstance: NVML_ERROR_UNKNOWN (999)" \
	apply --want 1g.10gb=3
check "failure half way: what is left undone" 1 mig_fail.json "   5 create-gi  gpu 0 1g.10gb@6: not done" "" \
	apply --want 1g.10gb=3
check "failure half way: the layout now, legal" 1 mig_fail.json \
	"  gpu 0: 1g.10gb@1 (no compute instance), 1g.10gb@0, 2g.20gb@2" "" apply --want 1g.10gb=3
check "failure half way: legal" 1 mig_fail.json "layout legal" "" apply --want 1g.10gb=3
check "failure half way: JSON" 1 mig_fail.json '"failedStep": 4,' "" apply --want 1g.10gb=3 -o json
check "failure half way: JSON names NVML's code" 1 mig_fail.json '"nvml": "NVML_ERROR_UNKNOWN",' "" \
	apply --want 1g.10gb=3 -o json

# The layout the failed run left, as a script: the second run completes it.
cat >"$tmp/after_fail.json" <<'JSON'
{"devices": [{"uuid": "GPU-dddddddd-0000-0000-0000-000000000000",
  "name": "NVIDIA H100 80GB HBM3", "memoryMiB": 81559,
  "pciBusId": "00000000:10:00.0", "pciDeviceId": "0x233010DE",
  "mig": {"current": 1, "pending": 1, "gpuInstances": [
   {"id": 2, "profileId": 14, "start": 2, "size": 2, "computeInstances": [
     {"id": 0, "profileId": 0, "start": 0, "size": 1},
     {"id": 1, "profileId": 0, "start": 1, "size": 1}]},
   {"id": 3, "profileId": 19, "start": 0, "size": 1, "computeInstances": [
     {"id": 0, "profileId": 0, "start": 0, "size": 1}]},
   {"id": 1, "profileId": 19, "start": 1, "size": 1, "computeInstances": []}]}}]}
JSON
check "second run: completes the 1g at 1 first" 0 "$tmp/after_fail.json" \
	"   1 create-ci  gpu 0 1g.10gb@1 ci 0: done" "" apply --want 1g.10gb=3
check "second run: all done" 0 "$tmp/after_fail.json" "result: all 3 steps done" "" \
	apply --want 1g.10gb=3

check "in use by a pod: planned around" 0 mig_actuate.json "  want 7g.80gb 1: served 0, unserved 1" "" \
	apply --want 7g.80gb=1 --in-use 0:2g.20gb@2
check "in use by a pod: shown" 0 mig_actuate.json "  gpu 0: 1g.10gb@0, 2g.20gb@2 (in use), 3g.40gb@4" "" \
	plan --want 7g.80gb=1 --in-use 0:2g.20gb@2
check "in use by a process: shown" 0 mig_busy.json "  gpu 0: 1g.10gb@0, 2g.20gb@2, 3g.40gb@4 (in use)" "" \
	plan --want 7g.80gb=1
check "assigned: made, the instance in use kept" 0 mig_actuate.json "  gpu 0: 3g.40gb@4 (in use), 3g.40gb@0" "" \
	apply --assigned 0:3g.40gb@0,0:3g.40gb@4
check "assigned over an instance in use: refused" 1 mig_actuate.json "" \
	"kerf agent mig: assigned '0:3g.40gb@0' cannot be made: it overlaps 1g.10gb@0 in use (gpu 0: create 3g.40gb at 0: not legal beside the instances there)" \
	plan --assigned 0:3g.40gb@0 --in-use 0:1g.10gb@0

check "enable: current at once" 0 mig_mode.json "gpu 0: MIG current on, pending on" "" enable --gpu 0
check "enable: a reset needed is reported" 1 mig_mode.json \
	"gpu 1: MIG current off, pending on (NVML_ERROR_RESET_REQUIRED)" \
	"kerf agent mig: gpu 1: MIG on is pending, not current: NVML_ERROR_RESET_REQUIRED: the GPU must be reset (or the machine rebooted) to apply it" \
	enable --gpu 1

check "old driver: actuation off, said why" 1 mig_actuate.json "" \
	"kerf agent mig: MIG actuation is off: numa (nvmlDeviceGetNumaNodeId missing); nvlink (nvmlDeviceGetNvLinkState missing); telemetry (nvmlDeviceGetUtilizationRates missing); events (nvmlEventSetCreate missing); mig-actuation (nvmlDeviceSetMigMode missing); processes (nvmlDeviceGetComputeRunningProcesses_v3 missing); gpm (nvmlGpmQueryDeviceSupport missing)" \
	apply --want 1g.10gb=1 --nvml-library "$minimal"
check "no NVML: exit 1" 1 mig_actuate.json "" \
	"kerf agent mig: cannot load NVML from '/nonexistent/libnvidia-ml.so.1': /nonexistent/libnvidia-ml.so.1: cannot open shared object file: No such file or directory (no NVIDIA driver on this node?)" \
	plan --want 1g.10gb=1 --nvml-library /nonexistent/libnvidia-ml.so.1

check "neither --want nor --assigned" 2 mig_actuate.json "" \
	"kerf agent mig: apply needs exactly one of --want and --assigned" apply
check "unknown profile" 2 mig_actuate.json "" \
	"kerf agent mig: --want: '9g.1gb': H100-80GB has no such profile" plan --want 9g.1gb=1
check "bad count" 2 mig_actuate.json "" \
	"kerf agent mig: --want: '1g.10gb=-1': N must be a count from 0 to 64" plan --want 1g.10gb=-1
check "bad --in-use" 2 mig_actuate.json "" \
	"kerf agent mig: --in-use: '0:1g.10gb': missing '@START'" plan --want 1g.10gb=1 --in-use 0:1g.10gb
check "--in-use with a forged byte" 2 mig_actuate.json "" \
	"kerf agent mig: --in-use: byte 2 of an entry: only letters, digits and . : @ + _ - may name an instance" \
	plan --want 1g.10gb=1 --in-use "0"$'\n'":1g.10gb@0"
check "enable without --gpu" 2 mig_mode.json "" "kerf agent mig: enable needs --gpu N" enable
check "unknown command" 2 mig_mode.json "" "kerf agent mig: unknown command 'shuffle'" shuffle

echo "1..$n"
[ $failed -eq 0 ]
