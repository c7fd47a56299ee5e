#!/usr/bin/env bash
# Command-line tests: hostile options and files given to kerf and the bench
# tools are refused with the exit status and the exact message expected
# (the option or file named, the value escaped, the reason), never a crash,
# a hang or a silent acceptance.  Prints TAP.
#
# usage: test_cli.sh KERF BENCH_DIR SOURCE_ROOT
set -u

kerf=$1
bench=$2
src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0

# expect STATUS MESSAGE CMD...: CMD exits with STATUS (within 60 s) and
# one line of its stderr is exactly MESSAGE (any stderr when MESSAGE is
# empty).
expect() {
	local want=$1 msg=$2 rc
	shift 2
	n=$((n + 1))
	timeout 60 "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" -eq "$want" ] &&
	   { [ -z "$msg" ] || grep -qxF -- "$msg" "$tmp/err"; }; then
		echo "ok $n - $(printf '%q ' "${@:2}")"
	else
		failed=$((failed + 1))
		echo "not ok $n - $(printf '%q ' "${@:2}")"
		echo "# want status $want and the line: $msg"
		echo "# got status $rc, stderr:"
		sed 's/^/#   /' "$tmp/err" | cat -v | head -20
	fi
}

# ---- files a test refers to ----------------------------------------------
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,96000,786432,8,V100M16\n' >"$tmp/nodes.csv"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,scheduled_time\np0,1000,1024,1,500,,LS,0,100,0\n' >"$tmp/pods.csv"
esc=$(printf 'x\033[2J\ny')

# ---- kerf sim openb: --seeds (once a stack overflow), numbers ------------
o=(sim openb --nodes "$tmp/nodes.csv" --pods "$tmp/pods.csv")
expect 2 "kerf sim openb: --seeds '18446744073709551614-18446744073709551615x': expected A-B or A,B,... (decimal integers up to 18446744073709551615)" \
	"$kerf" "${o[@]}" --seeds 18446744073709551614-18446744073709551615x
expect 2 "kerf sim openb: --seeds '1,,2': item 2 is empty or longer than 31 bytes (expected N,N,...)" \
	"$kerf" "${o[@]}" --seeds 1,,2
expect 2 "kerf sim openb: --seeds '': empty (expected a list N,N,... of integers 0..18446744073709551615)" \
	"$kerf" "${o[@]}" --seeds ''
expect 2 "kerf sim openb: --seeds '42,42': 42 is given twice" \
	"$kerf" "${o[@]}" --seeds 42,42
expect 2 "kerf sim openb: --seeds '0-18446744073709551615': more than 1000 seeds" \
	"$kerf" "${o[@]}" --seeds 0-18446744073709551615
expect 2 "kerf sim openb: --seeds '5-4': the range ends before it starts" \
	"$kerf" "${o[@]}" --seeds 5-4
expect 2 "kerf sim openb: --jobs '4abc': not a decimal integer (expected 1..64)" \
	"$kerf" "${o[@]}" --jobs 4abc
expect 2 "kerf sim openb: --arrival-s '': not a decimal number (expected 0..3600, at most 3 decimals)" \
	"$kerf" "${o[@]}" --arrival-s ''
expect 2 "kerf sim openb: --arrival-s 'nan': not a decimal number (expected 0..3600, at most 3 decimals)" \
	"$kerf" "${o[@]}" --arrival-s nan
expect 2 "kerf sim openb: --checkpoint-s 'inf': not a decimal number (expected 0..31536000, at most 3 decimals)" \
	"$kerf" "${o[@]}" --checkpoint-s inf
expect 2 "kerf sim openb: --inflate '1e400': not a decimal number (expected 0.01..10, at most 2 decimals)" \
	"$kerf" "${o[@]}" --inflate 1e400
expect 2 "kerf sim openb: --inflate '-1': not a decimal number (expected 0.01..10, at most 2 decimals)" \
	"$kerf" "${o[@]}" --inflate -1
expect 2 "kerf sim openb: --inflate '1.305': more than 2 decimals (expected 0.01..10)" \
	"$kerf" "${o[@]}" --inflate 1.305
expect 2 "kerf sim openb: --defrag-lost-per-hour '1e9': not a decimal number (expected 0..1000000, at most 3 decimals)" \
	"$kerf" "${o[@]}" --defrag-lost-per-hour 1e9
expect 2 "kerf sim openb: --defrag-moves-per-hour '2.5': not a decimal integer (expected 0..1000000)" \
	"$kerf" "${o[@]}" --defrag-moves-per-hour 2.5
expect 2 "kerf sim openb: --policy 'kerf,,fgd': expected NAME[,NAME...] or all, with no empty name" \
	"$kerf" "${o[@]}" --policy kerf,,fgd
expect 2 "kerf sim openb: --policy 'fgd,fgd': 'fgd' is given twice" \
	"$kerf" "${o[@]}" --policy fgd,fgd
expect 2 "kerf sim openb: --policy: unknown policy 'x\\x1b[2J\\x0ay' (known: random, dotprod, gpu-packing, gpu-clustering, best-fit, first-fit, fgd, kerf)" \
	"$kerf" "${o[@]}" --policy "$esc"
expect 2 "kerf sim openb: --policy-options 'cap=+5': item 1 'cap=+5' is not KEY=N (a lower-case key, decimal digits)" \
	"$kerf" "${o[@]}" --policy-options cap=+5
expect 2 "kerf sim openb: --policy-options 'cap=5,': item 2 '' is not KEY=N (a lower-case key, decimal digits)" \
	"$kerf" "${o[@]}" --policy-options cap=5,
expect 2 "kerf sim openb: --policy-options 'x\\x1b[2J\\x0ay=1': item 1 'x\\x1b[2J\\x0ay=1' is not KEY=N (a lower-case key, decimal digits)" \
	"$kerf" "${o[@]}" --policy-options "$esc=1"
# checked against the policies chosen before any work: no table header
expect 2 "kerf sim openb: --policy-options 'bogus=1': unknown key 'bogus' (policy options: kerf: online, mem, cap, coverage, rebuild, adopt, spec)" \
	"$kerf" "${o[@]}" --policy-options bogus=1
expect 2 "kerf sim openb: --policy-options 'cap=5': key 'cap' is an option of policy kerf, which is not selected (policies: fgd, random)" \
	"$kerf" "${o[@]}" --policy-options cap=5 --policy fgd,random
expect 2 "kerf sim openb: --policy-options 'cap=2000': kerf policy option 'cap' '2000': out of range (expected 0..1000)" \
	"$kerf" "${o[@]}" --policy kerf,fgd --policy-options cap=2000
n=$((n + 1))
if "$kerf" "${o[@]}" --policy-options bogus=1 >"$tmp/out" 2>/dev/null ||
   [ -s "$tmp/out" ]; then
	failed=$((failed + 1))
	echo "not ok $n - a refused --policy-options prints nothing on stdout"
	sed 's/^/#   /' "$tmp/out" | head -5
else
	echo "ok $n - a refused --policy-options prints nothing on stdout"
fi
expect 2 "kerf sim openb: unknown option '--x\\x1b[2J\\x0ay'" \
	"$kerf" "${o[@]}" "--$esc"
expect 2 "kerf sim openb: option '--jobs' needs a value" \
	"$kerf" "${o[@]}" --jobs
expect 2 "kerf sim openb: option '--json=1' takes no value" \
	"$kerf" "${o[@]}" --json=1
expect 2 "kerf sim openb: unexpected argument 'x\\x1b[2J\\x0ay'" \
	"$kerf" "${o[@]}" "$esc"
# -o (issue 13): the format escaped, a value needed, --json only with json
expect 2 "kerf sim openb: -o 'x\\x1b[2J\\x0ay': expected table, wide, json or yaml" \
	"$kerf" "${o[@]}" -o "$esc"
expect 2 "kerf sim openb: option '-o' needs a value" "$kerf" "${o[@]}" -o
expect 2 "kerf sim openb: --json and -o yaml disagree (--json is -o json)" \
	"$kerf" "${o[@]}" -o yaml --json
expect 2 "kerf sim openb: --json and -o wide disagree (--json is -o json)" \
	"$kerf" "${o[@]}" --json --output wide
expect 0 "" "$kerf" "${o[@]}" --seeds 1 --json -o json

# ---- the other subcommands ----------------------------------------------
expect 2 "kerf: unknown command 'x\\x1b[2J\\x0ay'" "$kerf" "$esc"
expect 2 "kerf sim: unexpected argument 'x\\x1b[2J\\x0ay' (try 'kerf sim --help')" "$kerf" sim "$esc"
expect 2 "kerf sim placement: unexpected argument 'x\\x1b[2J\\x0ay' (try 'kerf sim placement --help')" "$kerf" sim placement "$esc"
expect 2 "kerf sim openb-replay: --days '4x': not a decimal integer (expected 1..365)" \
	"$kerf" sim openb-replay --nodes "$tmp/nodes.csv" --pods "$tmp/pods.csv" --days 4x
expect 2 "kerf sim openb-replay: --days '': not a decimal integer (expected 1..365)" \
	"$kerf" sim openb-replay --nodes "$tmp/nodes.csv" --pods "$tmp/pods.csv" --days ''
expect 2 "kerf sim openb-replay: --days '-3': not a decimal integer (expected 1..365)" \
	"$kerf" sim openb-replay --nodes "$tmp/nodes.csv" --pods "$tmp/pods.csv" --days -3
expect 2 "kerf sim check: --runs '1,,2': not a decimal integer (expected 1..100000000)" \
	"$kerf" sim check --runs 1,,2
expect 2 "kerf sim check: --seed 18446744073709551615 with --runs 2: the last seed would pass 18446744073709551615" \
	"$kerf" sim check --seed 18446744073709551615 --runs 2
expect 2 "kerf sim check: unknown option '-x'" "$kerf" sim check -x
expect 2 "kerf sim check: option '-o' needs a value" "$kerf" sim check -o
expect 2 "kerf sim placement: -o 'x\\x1b[2J\\x0ay': expected table, wide, json or yaml" \
	"$kerf" sim placement -o "$esc"
expect 2 "kerf sim run: unexpected argument 'x\\x1b[2J\\x0ay'" "$kerf" sim run a.yaml "$esc"
expect 2 "kerf sim mig: --nodes '4 ': not a decimal integer (expected 1..4096)" "$kerf" sim mig --nodes '4 '
expect 2 "kerf sim mig: --gpus '17': out of range (expected 1..16)" "$kerf" sim mig --gpus 17
expect 2 "kerf sim mig: --hours '0': out of range (expected 1..8760)" "$kerf" sim mig --hours 0
expect 2 "kerf sim mig: --load '': not a decimal integer (expected 1..1000)" "$kerf" sim mig --load ''
expect 2 "kerf sim mig: --seed '-1': not a decimal integer (expected 0..18446744073709551615)" "$kerf" sim mig --seed -1
expect 2 "kerf sim mig: --model 'x\\x1b[2J\\x0ay': no MIG table for this model (see docs/mig.md)" "$kerf" sim mig --model "$esc"
expect 2 "kerf plan-mig: unknown option '--x\\x1b[2J\\x0ay'" "$kerf" plan-mig "--$esc"
expect 2 "kerf plan-mig: unexpected argument 'x\\x1b[2J\\x0ay'" "$kerf" plan-mig a.yaml "$esc"

# ---- the bench tools ----------------------------------------------------
expect 2 "bench_cycle: --nodes '1,,2': item 2 is empty or longer than 31 bytes (expected N,N,...)" \
	"$bench/bench_cycle" --nodes 1,,2
expect 2 "bench_cycle: --pending '': empty (expected a list N,N,... of integers 0..10000000)" \
	"$bench/bench_cycle" --pending ''
expect 2 "bench_cycle: --fill '50%': not a decimal integer (expected 0..100)" \
	"$bench/bench_cycle" --fill 50%
expect 2 "bench_place: --nodes '10,': item 2 is empty or longer than 31 bytes (expected N,N,...)" \
	"$bench/bench_place" --nodes 10,
expect 2 "bench_place: --policy 'kerf,': expected NAME[,NAME...] or all, with no empty name" \
	"$bench/bench_place" --policy kerf,
expect 2 "bench_mig_place: -n '12abc': not a decimal integer (expected 1..100000)" \
	"$bench/bench_mig_place" -n 12abc
expect 2 "bench_mig_place: -n '0': out of range (expected 1..100000)" \
	"$bench/bench_mig_place" -n 0
expect 2 "openb_floor: --seeds '4294967295-4294967296x': expected A-B or A,B,... (decimal integers up to 18446744073709551615)" \
	"$bench/openb_floor" --nodes "$tmp/nodes.csv" --pods "$tmp/pods.csv" --seeds 4294967295-4294967296x
expect 2 "openb_floor: --seeds '1,,2': item 2 is empty or longer than 31 bytes (expected N,N,...)" \
	"$bench/openb_floor" --nodes "$tmp/nodes.csv" --pods "$tmp/pods.csv" --seeds 1,,2
expect 2 "openb_floor: --inflate '130abc': not a decimal integer (expected 100..1000)" \
	"$bench/openb_floor" --nodes "$tmp/nodes.csv" --pods "$tmp/pods.csv" --inflate 130abc

# ---- files that are not regular files (a FIFO once blocked forever) -----
mkfifo "$tmp/fifo"
expect 1 "kerf sim run: cannot read '$tmp/fifo': a FIFO, not a regular file" \
	"$kerf" sim run "$tmp/fifo"
expect 1 "kerf sim openb: cannot read '$tmp/fifo': a FIFO, not a regular file" \
	"$kerf" sim openb --nodes "$tmp/fifo" --pods "$tmp/pods.csv"
expect 1 "kerf sim openb-replay: cannot read '$tmp/fifo': a FIFO, not a regular file" \
	"$kerf" sim openb-replay --nodes "$tmp/nodes.csv" --pods "$tmp/fifo"
expect 1 "kerf plan-mig: cannot read '$tmp': a directory, not a regular file" \
	"$kerf" plan-mig "$tmp"
expect 1 "kerf sim run: cannot read '/dev/zero': a character device, not a regular file" \
	"$kerf" sim run /dev/zero
expect 1 "kerf sim run: cannot open '$tmp/x\\x1b[2J\\x0ay': No such file or directory" \
	"$kerf" sim run "$tmp/$esc"

# ---- openb-replay: times that overflow in ms, lists without times -------
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np0,1000,1024,1,500,,LS,Running,0,9223372036854775807,0\n' >"$tmp/pods-big.csv"
expect 1 "kerf sim openb-replay: $tmp/pods-big.csv:2: column 'deletion_time': 9223372036854775807 is outside 0..1000000000000" \
	"$kerf" sim openb-replay --nodes "$tmp/nodes.csv" --pods "$tmp/pods-big.csv"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\n' >"$tmp/pods-untimed.csv"
expect 1 "kerf sim openb-replay: $tmp/pods-untimed.csv:1: the pod list has no creation_time or no deletion_time column; a replay in time needs both" \
	"$kerf" sim openb-replay --nodes "$tmp/nodes.csv" --pods "$tmp/pods-untimed.csv"
# a header and no rows, and a window with nothing in it: errors, not zeros
head -1 "$tmp/pods.csv" >"$tmp/pods-header.csv"
head -1 "$tmp/nodes.csv" >"$tmp/nodes-header.csv"
expect 1 "kerf sim openb-replay: $tmp/pods-header.csv: no pods after the header; a trace needs at least one" \
	"$kerf" sim openb-replay --nodes "$tmp/nodes.csv" --pods "$tmp/pods-header.csv"
expect 1 "kerf sim openb: $tmp/pods-header.csv: no pods after the header; a trace needs at least one" \
	"$kerf" sim openb --nodes "$tmp/nodes.csv" --pods "$tmp/pods-header.csv"
expect 1 "kerf sim openb-replay: $tmp/nodes-header.csv: no nodes after the header; a trace needs at least one" \
	"$kerf" sim openb-replay --nodes "$tmp/nodes-header.csv" --pods "$tmp/pods.csv"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,1000,1024,1,500,T4\n' >"$tmp/pods-like.csv"
expect 1 "kerf sim openb-gpuspec: $tmp/pods-header.csv: no pods after the header; a trace needs at least one" \
	"$kerf" sim openb-gpuspec --pods "$tmp/pods-header.csv" --like "$tmp/pods-like.csv" --share 10
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,creation_time,deletion_time\np0,1000,1024,1,500,LS,5,5\n' >"$tmp/pods-never.csv"
expect 1 "kerf sim openb-replay: $tmp/pods-never.csv: none of its 1 pods runs in the last 30 days of the trace; nothing to replay" \
	"$kerf" sim openb-replay --nodes "$tmp/nodes.csv" --pods "$tmp/pods-never.csv"
printf '\357\273\277sn,cpu_milli,memory_mib,gpu,model,gpu\nn0,96000,786432,8,V100M16,8\n' >"$tmp/nodes-dup.csv"
expect 1 "kerf sim openb: $tmp/nodes-dup.csv:1: column 'gpu' is named twice (fields 4 and 6)" \
	"$kerf" sim openb --nodes "$tmp/nodes-dup.csv" --pods "$tmp/pods.csv"
printf '\357\273\277sn,cpu_milli,memory_mib,gpu,model\nn0,96000,786432,8,V100M16\n' >"$tmp/nodes-bom.csv"
expect 0 "" "$kerf" sim openb-replay --nodes "$tmp/nodes-bom.csv" --pods "$tmp/pods.csv" --days 1

# ---- serve: the client's limits -----------------------------------------
expect 2 "kerf serve: --max-in-flight '0': out of range (expected 1..4096)" \
	"$kerf" serve --max-in-flight 0
expect 2 "kerf serve: --max-in-flight '64x': not a decimal integer (expected 1..4096)" \
	"$kerf" serve --max-in-flight 64x

# ---- valid options still run --------------------------------------------
expect 0 "" "$kerf" "${o[@]}" --seeds 18446744073709551615-18446744073709551615 --policy first-fit --inflate 1.3 --arrival-s 0.5 --jobs 1
echo "1..$n"
exit $((failed > 0))
