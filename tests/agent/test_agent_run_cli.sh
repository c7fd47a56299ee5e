#!/usr/bin/env bash
# `kerf agent run` and `kerf agent verify` on the command line: help, usage
# errors (exit 2, the option named), a verification whose check fails
# (exit 3: the mark stays), a kubeconfig that cannot be read (exit 1).  The
# agent at work is tests/e2e/e2e_agent.c.  Prints TAP.
#
# usage: test_agent_run_cli.sh KERF FAKE_LIB SCRIPTS_DIR
set -u

kerf=$1
lib=$2
scripts=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# check NAME STATUS GREP_OUT GREP_ERR ARGS...: kerf ARGS exits STATUS,
# stdout has a line containing GREP_OUT, stderr one containing GREP_ERR.
check() {
	local name=$1 want=$2 out=$3 err=$4 rc ok=1
	shift 4
	n=$((n + 1))
	KERF_NVML_LIBRARY="$lib" KERF_FAKE_NVML_SCRIPT="$scripts/agent.json" \
		timeout 60 "$kerf" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[ "$rc" -eq "$want" ] || ok=0
	[ -z "$out" ] || grep -qF -- "$out" "$tmp/out" || ok=0
	[ -z "$err" ] || grep -qF -- "$err" "$tmp/err" || ok=0
	if [ $ok -eq 1 ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name (exit $rc)"
		sed 's/^/# out: /' "$tmp/out" | head -10
		sed 's/^/# err: /' "$tmp/err" | head -5
		failed=$((failed + 1))
	fi
}

check "kerf agent lists run and verify" 0 "kerf agent verify --node-name" "" agent --help
check "run --help" 0 "--device-plugin-dir DIR" "" agent run --help
check "verify -h" 0 "--mig GPU:PROFILE@START" "" agent verify -h
check "run without --node-name" 2 "" "kerf agent run: --node-name: required" agent run
check "run with verify's option" 2 "" "--gpu: not an option of this command" \
	agent run --node-name n --gpu 1
check "run --inventory-interval 0" 2 "" "--inventory-interval '0'" \
	agent run --node-name n --inventory-interval 0
check "run with an operand" 2 "" "extra" agent run --node-name n extra
check "run with a kubeconfig that is not there" 1 "" "$tmp/none" \
	agent run --node-name n --kubeconfig "$tmp/none"
check "verify without what" 2 "" "give exactly one of --gpu, --mig, --node" \
	agent verify --node-name n
check "verify with two things" 2 "" "give exactly one of --gpu, --mig, --node" \
	agent verify --node-name n --gpu 1 --node
check "verify --gpu 64" 2 "" "--gpu '64'" agent verify --node-name n --gpu 64
check "verify --mig without a placement" 2 "" "--mig: annotation kerf.io/unhealthy-mig" \
	agent verify --node-name n --mig 3:3g.40gb
check "verify a GPU the node lacks: the check fails, exit 3" 3 "" \
	"kerf agent verify: the check failed: the mark stays" \
	agent verify --node-name n --gpu 5 --kubeconfig "$tmp/none"
check "verify a MIG instance that is not there: exit 3" 3 "" "no MIG instance 1g.10gb@0" \
	agent verify --node-name n --mig 3:1g.10gb@0 --kubeconfig "$tmp/none"
check "verify a GPU that passes, then a kubeconfig that is not there: exit 1" 1 \
	"GPU 2 GPU-a2222222-0000-0000-0000-000000000000: ok" "$tmp/none" \
	agent verify --node-name n --gpu 2 --kubeconfig "$tmp/none"

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
