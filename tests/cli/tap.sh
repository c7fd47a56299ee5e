# tap.sh: what the shell tests of tests/cli share; source it after setting
# nothing: a scratch folder $tmp (removed on exit), the TAP counters, check
# and tap_end.  A test's run helpers write the last run's output to
# $tmp/out and $tmp/err, which check shows on a failure.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# check NAME WANT GOT: one TAP line; on a failure, the last run's output.
check() {
	n=$((n + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $n - $1"
	else
		failed=$((failed + 1))
		echo "not ok $n - $1 (got '$3', want '$2')"
		sed 's/^/#   /' "$tmp/out" "$tmp/err" 2>/dev/null | head -30
	fi
}

# tap_end: the plan, the summary line, and the status (non-zero on a failure).
tap_end() {
	echo "1..$n"
	echo "# $((n - failed)) passed, $failed failed"
	[ "$failed" -eq 0 ]
}
