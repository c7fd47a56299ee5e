#!/usr/bin/env bash
# kerf's help (issue 13, friction 2): every command `kerf --help` lists
# answers `kerf help COMMAND` and `kerf COMMAND --help` with its usage
# (exit 0), as does every `kerf sim` subcommand with --help, -h and `kerf
# sim help SUB`; -V and --version print the version; an unknown command
# is a usage error (exit 2) naming it.  Prints TAP.
#
# usage: test_help.sh KERF
set -u
kerf=$1
n=0
failed=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

list=$("$kerf" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
[ -n "$list" ]
ok $? "kerf --help lists the commands"
for c in $list; do
	case $c in help | version) continue ;; esac
	"$kerf" help "$c" 2>&1 | grep -q "usage:"
	ok $? "kerf help $c: its usage"
	"$kerf" "$c" --help >/dev/null 2>&1
	ok $? "kerf $c --help: exit 0"
done
"$kerf" help agent run | grep -q -- "--node-name NAME"
ok $? "kerf help agent run: the subcommand's usage"
for s in placement mig check run openb openb-replay openb-gpuspec; do
	"$kerf" sim "$s" --help >/dev/null 2>&1 && "$kerf" sim "$s" -h >/dev/null 2>&1
	ok $? "kerf sim $s --help and -h: exit 0"
	"$kerf" sim help "$s" 2>&1 | grep -qE "kerf sim $s( |\$)"
	ok $? "kerf sim help $s: its usage"
done
"$kerf" sim help 2>&1 | grep -q "usage: kerf sim"
ok $? "kerf sim help: the list"
"$kerf" sim help nope >/dev/null 2>&1
ok $([ $? -eq 2 ] && echo 0 || echo 1) "kerf sim help nope: exit 2"
[ "$("$kerf" -V)" = "$("$kerf" --version)" ] && "$kerf" -V | grep -q '^kerf [0-9]'
ok $? "kerf -V and --version: the version"
"$kerf" help nope >/dev/null 2>&1
[ $? -eq 2 ] && "$kerf" help nope 2>&1 | grep -q "kerf help: unknown command 'nope'"
ok $? "kerf help nope: exit 2, named"
echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
