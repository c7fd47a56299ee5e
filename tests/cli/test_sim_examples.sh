#!/usr/bin/env bash
# The scenario files of examples/scenario/ and the built-in day:
#  - every example (but demo-day.yaml, which test_sim_run.sh covers) says
#    in a comment "# expect: exit N" and `kerf sim run` on it exits N;
#  - builtin-day.yaml is what the binary runs: `kerf sim --print-scenario`
#    and `kerf sim run --builtin --print` write its bytes, and `kerf sim`
#    and `kerf sim run FILE` on it give the same report, with the figures
#    the C day gave before it became a file;
#  - --policy changes the result where the policy decides, and --seed
#    makes runs reproducible; both are checked before any file is read.
# Prints TAP.
#
# usage: test_sim_examples.sh KERF SOURCE_ROOT
set -u

kerf=$1
src=$2
ex=$src/examples/scenario
. "$(dirname "$0")/tap.sh"

# run ARGS...: kerf with ARGS, stdout in out, stderr in err; prints the status.
run() { timeout 300 "$kerf" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; echo $?; }

has() { grep -qxF -- "$1" "$tmp/out" && echo yes || echo no; }

# ---- every example runs with the exit status its comment announces ----
nr=0
for f in "$ex"/*.yaml; do
	base=${f##*/}
	case $base in
	demo-day.yaml | builtin-day.yaml) continue ;;
	esac
	nr=$((nr + 1))
	want=$(sed -n 's/^# expect: exit \([0-9]\).*/\1/p' "$f" | head -1)
	check "$base: announces its exit status (# expect: exit N)" yes \
		"$([ -n "$want" ] && echo yes || echo no)"
	check "$base: kerf sim run exits $want" "$want" "$(run sim run "$f")"
	check "$base: the report names the scenario" yes \
		"$(head -1 "$tmp/out" | grep -q "^scenario ${base%.yaml}: " && echo yes || echo no)"
	if [ "$want" = 3 ]; then
		check "$base: exit 3 comes with the pending section" yes \
			"$(grep -q '^pending at the end: [1-9]' "$tmp/out" && echo yes || echo no)"
	fi
done
check "at least five examples besides the two days" yes "$([ "$nr" -ge 5 ] && echo yes || echo no)"

# What each example shows, in its report.
run sim run "$ex/fair-share.yaml" -o wide >/dev/null
# the share over time (-o wide), its last sixth: "73.7%/74.0%"
check "fair-share: weight 3 gets three quarters once the queue is full" yes \
	"$(awk '$1=="research/team-a" && NF==7 {split($7,a,"/"); v=a[1]+0; if (v>=70 && v<=80) ok=1} END{print ok?"yes":"no"}' "$tmp/out")"
run sim run "$ex/budget-runs-out.yaml" >/dev/null
check "budget-runs-out: held work names the budget" yes \
	"$(grep -q "^team/sweep-[0-9]*: tenant 'team' spent its GPU-hour budget" "$tmp/out" && echo yes || echo no)"
run sim run "$ex/preemption-checkpoint.yaml" >/dev/null
check "preemption-checkpoint: research was preempted and lost no work" yes \
	"$(awk '$1=="research" && $(NF-2)>0 && $(NF-1)=="0" && $NF=="GPU-h" {ok=1} END{print ok?"yes":"no"}' "$tmp/out")"
run sim run "$ex/gang-reservation.yaml" -o wide >/dev/null
check "gang-reservation: the gang and all 60 small jobs start" yes "$(has 'batch                  61/61      70m      85m      91m         0       0 26.2%')"

# ---- the built-in day is the file -------------------------------------
check "kerf sim --print-scenario: exit 0" 0 "$(run sim --print-scenario)"
check "kerf sim --print-scenario: the bytes of builtin-day.yaml" yes \
	"$(cmp -s "$tmp/out" "$ex/builtin-day.yaml" && echo yes || echo no)"
check "kerf sim run --builtin --print: exit 0" 0 "$(run sim run --builtin --print)"
check "kerf sim run --builtin --print: the same bytes" yes \
	"$(cmp -s "$tmp/out" "$ex/builtin-day.yaml" && echo yes || echo no)"
check "--print-scenario with --seed: usage error" 2 "$(run sim --print-scenario --seed 3)"
check "--print without --builtin: usage error" 2 "$(run sim run --print "$ex/fair-share.yaml")"

check "kerf sim: exit 0" 0 "$(run sim)"
cp "$tmp/out" "$tmp/day"
# Issue 13, friction 9: the summary's p99 wait is the class table's, in the
# same words (it was "32s" in one and "33 s" in the other).
check "kerf sim: production's p99 wait the same in the table and the summary" yes \
	"$(t=$(awk '$1=="production" && $2 ~ /\// {print $3}' "$tmp/out"); \
	   s=$(sed -n 's/^  production: .*, p99 wait \([^,]*\), .*/\1/p' "$tmp/out"); \
	   [ -n "$t" ] && [ "$t" = "$s" ] && echo yes || echo no)"
# The figures of the day as the C code gave them, before it was a file
# (since issue 13 waits rounded to the second in kubectl's style, GPU-hours
# as "GPU-h").
for line in \
	'product/serving                   1     3.2%     3.4%  231.4 GPU-h     500/500      37s         0      0 GPU-h' \
	'research/llm                      2    70.0%    68.5% 4691.2 GPU-h   1916/2046     162m       180      0 GPU-h' \
	'research/vision                   1    26.8%    28.2% 1930.8 GPU-h   2062/2062      14m       105    0.1 GPU-h' \
	'experiment         3883/4000     159m       284 54.2%' \
	'  vision spent its 900.0 GPU-h budget after 11h; from then only its preemptible work was admitted' \
	'  every invariant held after each of 18543 events (run '"'"'kerf sim check'"'"' for random scenarios)'; do
	check "kerf sim: '${line:0:40}...' as before" yes "$(has "$line")"
done
check "kerf sim --policy best-fit --seed 3: exit 0" 0 "$(run sim --policy best-fit --seed 3)"
check "kerf sim --policy best-fit --seed 3: says so" yes \
	"$(has 'run:      policy best-fit, seed 3 (given on the command line)')"
check "kerf sim --seed 3: other arrivals than the file's seed 7" yes \
	"$(w1=$(grep '^work:' "$tmp/day"); w2=$(grep '^work:' "$tmp/out"); [ -n "$w1" ] && [ "$w1" != "$w2" ] && echo yes || echo no)"
check "kerf sim without options: no run line" no \
	"$(grep -q '^run:' "$tmp/day" && echo yes || echo no)"
want=$(sed -n 's/^# kerf sim run on it: exit status \([0-9]\).*/\1/p' "$ex/builtin-day.yaml")
check "builtin-day.yaml through kerf sim run: exit $want, as its comment says" "$want" \
	"$(run sim run "$ex/builtin-day.yaml")"
# The report of both, from the tenant table to the class table, is the same.
sed -n '/^tenant /,/^production /p' "$tmp/day" >"$tmp/a"
sed -n '/^tenant /,/^production /p' "$tmp/out" >"$tmp/b"
check "kerf sim and kerf sim run FILE: the same report" yes \
	"$([ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b" && echo yes || echo no)"

# ---- --policy ---------------------------------------------------------
pp=$src/tests/cli/sim_run/policy-packing.yaml
check "policy-packing --policy kerf: both big pods start, exit 0" 0 "$(run sim run "$pp" --policy kerf)"
check "policy-packing --policy kerf: the header names the policy" yes \
	"$(head -1 "$tmp/out" | grep -q ', policy kerf$' && echo yes || echo no)"
check "policy-packing --policy random: the big pods wait, exit 3" 3 "$(run sim run --policy random "$pp")"
check "policy-packing --policy random: two pending" yes "$(has 'pending at the end: 2')"
check "policy-packing --policy best-fit: exit 0" 0 "$(run sim run "$pp" --policy=best-fit)"
check "unknown --policy: exit 2" 2 "$(run sim run "$pp" --policy bogus)"
check "unknown --policy: the message names the option and the known ones" yes \
	"$(grep -qxF "kerf sim run: --policy: unknown policy 'bogus' (known: random, dotprod, gpu-packing, gpu-clustering, best-fit, first-fit, fgd, kerf)" "$tmp/err" && echo yes || echo no)"
check "unknown --policy: nothing on stdout" 0 "$(wc -c <"$tmp/out")"
check "--policy checked before the file is read (a missing file: still 2)" 2 \
	"$(run sim run "$tmp/no-such.yaml" --policy bogus)"
check "kerf sim --policy bogus: exit 2" 2 "$(run sim --policy bogus)"
check "kerf sim --policy with no value: exit 2" 2 "$(run sim --policy)"
check "kerf sim --policy: the message names the option" yes \
	"$(grep -qxF "kerf sim: option '--policy' needs a value" "$tmp/err" && echo yes || echo no)"

# ---- --seed -----------------------------------------------------------
fs=$ex/fair-share.yaml
run sim run "$fs" --seed 2 >/dev/null; cp "$tmp/out" "$tmp/s2a"
run sim run "$fs" --seed 2 >/dev/null; cp "$tmp/out" "$tmp/s2b"
run sim run "$fs" --seed 3 >/dev/null; cp "$tmp/out" "$tmp/s3"
run sim run "$fs" >/dev/null; cp "$tmp/out" "$tmp/file"
run sim run "$fs" --seed 1 >/dev/null; cp "$tmp/out" "$tmp/s1"
check "--seed 2 twice: the same report" yes "$(cmp -s "$tmp/s2a" "$tmp/s2b" && echo yes || echo no)"
check "--seed 2 and --seed 3: different arrivals, different reports" yes \
	"$(cmp -s "$tmp/s2a" "$tmp/s3" && echo no || echo yes)"
check "--seed 1 is the file's own seed: the same report as without" yes \
	"$(cmp -s "$tmp/file" "$tmp/s1" && echo yes || echo no)"
check "--seed 2^62: accepted" 3 "$(run sim run "$fs" --seed 4611686018427387904)"
check "--seed 2^62+1: exit 2" 2 "$(run sim run "$fs" --seed 4611686018427387905)"
check "--seed out of range: the message names the option and the range" yes \
	"$(grep -qxF "kerf sim run: --seed '4611686018427387905': out of range (expected 0..4611686018427387904)" "$tmp/err" && echo yes || echo no)"
check "--seed -1: exit 2" 2 "$(run sim run "$fs" --seed -1)"
check "--seed 1x: exit 2" 2 "$(run sim run "$fs" --seed 1x)"
check "kerf sim --seed x: exit 2" 2 "$(run sim --seed x)"
check "kerf sim run --builtin FILE: exit 2" 2 "$(run sim run --builtin "$fs")"

tap_end
