#!/usr/bin/env bash
# kerf's shell completion (issue 13, friction 2): `kerf completion bash`
# sourced in bash completes commands, subcommands, options, files,
# directories, fixed choices and policy names as the registry says; `kerf
# completion zsh` loads under compinit and its driver gives the same
# words.  Prints TAP.
#
# usage: test_completion.sh KERF
set -u
kerf=$1
n=0
failed=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

# same WANT GOT: the same words, in any order
same() {
	[ "$(tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort)" = "$(tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort)" ]
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/data/sub"
touch "$tmp/data/nodes.csv" "$tmp/data/pods.csv"

"$kerf" completion bash >"$tmp/kerf.bash"
ok $? "kerf completion bash: exit 0"
bash -n "$tmp/kerf.bash"
ok $? "the bash script parses"
"$kerf" completion zsh >"$tmp/kerf.zsh"
ok $? "kerf completion zsh: exit 0"
"$kerf" completion fish >/dev/null 2>&1
ok $([ $? -eq 2 ] && echo 0 || echo 1) "kerf completion fish: exit 2"

# the registry, for the expected words
spec=$("$kerf" completion spec)
opts_of() { awk -F'\t' -v p="$1" '$1 == "option" && $2 == p {printf "%s ", $3; if ($4 != "-") printf "%s ", $4}' <<<"$spec"; }
policies=$("$kerf" sim openb --help | awk '/^policies:/ {on = 1; next} on && /^  [a-z]/ {printf "%s ", $1}')
[ -n "$policies" ]
ok $? "kerf sim openb --help lists the policies"

# complete WORD... : COMPREPLY for the line, the last word the one completed
complete_bash() {
	bash --norc --noprofile -c '
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
		_kerf 2>/dev/null
		echo "${COMPREPLY[*]}"' bash "$tmp/kerf.bash" "$@"
}

# expect SHELL WANT WHAT WORD...: complete_SHELL's words for the line are WANT
expect() {
	local shell=$1 want=$2 what=$3 got
	shift 3
	got=$("complete_$shell" "$@")
	same "$want" "$got"
	ok $? "$shell: $what"
	if ! same "$want" "$got"; then echo "# want: $want"; echo "# got:  $got"; fi
}
check() { expect bash "$@"; }

top=$("$kerf" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {printf "%s ", $1}')
check "$top" "kerf <TAB>: every command of kerf --help" kerf ''
check "sim serve" "kerf s<TAB>" kerf s
check "placement run snapshot check openb openb-replay openb-gpuspec mig" "kerf sim <TAB>: its subcommands" kerf sim ''
check "openb openb-replay openb-gpuspec" "kerf sim op<TAB>" kerf sim op
check "$(opts_of 'sim openb')" "kerf sim openb -<TAB>: every option of sim openb" kerf sim openb -
check "--jobs --json" "kerf sim openb --nodes x --j<TAB>" kerf sim openb --nodes x --j
check "$policies all" "kerf sim openb --policy <TAB>: the policy names and all" kerf sim openb --policy ''
check "kerf,fgd kerf,first-fit" "kerf sim openb --policy kerf,f<TAB>: the list goes on" kerf sim openb --policy kerf,f
check "$policies" "kerf serve --policy <TAB>: one policy name" kerf serve --policy ''
check "table wide json yaml" "kerf get -o <TAB>" kerf get -o ''
check "json" "kerf get --output j<TAB>" kerf get --output j
check "--output=json" "kerf get --output=j<TAB> (one word)" kerf get --output=j
check "json" "kerf get --output = j<TAB> (bash splits at =)" kerf get --output = j
check "table wide json yaml" "kerf get --output =<TAB>" kerf get --output =
check "tenants queue nodes gpus" "kerf get <TAB>: the resources" kerf get ''
check "table wide json yaml" "kerf agent inventory -o <TAB>" kerf agent inventory -o ''
check "plan apply enable disable" "kerf agent mig <TAB>" kerf agent mig ''
check "$tmp/data/nodes.csv" "kerf sim openb --nodes .../n<TAB>: files" kerf sim openb --nodes "$tmp/data/n"
check "$tmp/data/nodes.csv $tmp/data/pods.csv $tmp/data/sub" "kerf sim run .../<TAB>: the operand is a file" kerf sim run "$tmp/data/"
check "$tmp/data/sub" "kerf agent run --mps-root .../<TAB>: directories only" kerf agent run --mps-root "$tmp/data/"
check "" "kerf sim check --runs <TAB>: a number, nothing offered" kerf sim check --runs ''
check "bash zsh spec" "kerf completion <TAB>" kerf completion ''
check "openb openb-replay openb-gpuspec" "kerf help sim op<TAB>" kerf help sim op
check "$top" "kerf help <TAB>" kerf help ''
check "$(opts_of 'serve')" "kerf serve -<TAB>: its own and the admission options" kerf serve -
bash --norc --noprofile -c 'source "$1"; complete -p kerf kubectl-kerf' bash "$tmp/kerf.bash" >/dev/null 2>&1
ok $? "bash: registered for kerf and kubectl-kerf"

# zsh, where installed (scripts/install-deps.sh installs it)
if command -v zsh >/dev/null 2>&1; then
	zsh -n "$tmp/kerf.zsh"
	ok $? "the zsh script parses"
	[ "$(head -n 1 "$tmp/kerf.zsh")" = "#compdef kerf kubectl-kerf" ]
	ok $? "the zsh script starts with #compdef (for fpath)"
	got=$(HOME=$tmp zsh -f -c 'autoload -Uz compinit && compinit -u -d "$HOME/.zcompdump" &&
		source "$1" && print -r -- "$_comps[kerf] $_comps[kubectl-kerf]"' zsh "$tmp/kerf.zsh" 2>&1)
	[ "$got" = "_kerf _kerf" ]
	ok $? "zsh: under compinit, compdef registers _kerf for kerf and kubectl-kerf"
	[ "$got" = "_kerf _kerf" ] || echo "# got: $got"

	# the driver with compadd, _files and compset as recorders
	complete_zsh() {
		HOME=$tmp zsh -f -c '
			autoload -Uz compinit && compinit -u -d "$HOME/.zcompdump"
			source "$1"; shift
			reply=()
			compadd() {
				while [[ $1 == -* && $1 != -- ]]; do
					[[ $1 == -[SPqJV] ]] && shift
					shift
				done
				[[ $1 == -- ]] && shift
				reply+=("$@")
			}
			_files() { reply+=("files$*") }
			compset() { return 0 }
			words=(kerf "$@"); CURRENT=$#words
			_kerf
			print -r -- "${reply[*]}"' zsh "$tmp/kerf.zsh" "$@" 2>&1
	}
	zcheck() { expect zsh "$@"; }
	zcheck "$top" "kerf <TAB>" ''
	zcheck "placement run snapshot check openb openb-replay openb-gpuspec mig" "kerf sim <TAB>" sim ''
	zcheck "$(opts_of 'sim openb')" "kerf sim openb -<TAB>" sim openb -
	zcheck "$policies all" "kerf sim openb --policy <TAB>" sim openb --policy ''
	zcheck "table wide json yaml" "kerf get -o <TAB>" get -o ''
	zcheck "table wide json yaml" "kerf get --output=<TAB>" get --output=
	zcheck "files" "kerf sim openb --nodes <TAB>: _files" sim openb --nodes ''
	zcheck "files-/" "kerf agent run --mps-root <TAB>: _files -/" agent run --mps-root ''
	zcheck "files" "kerf sim run <TAB>: _files" sim run ''
	zcheck "openb openb-replay openb-gpuspec placement run snapshot check mig" "kerf help sim <TAB>" help sim ''
else
	ok 0 "zsh # SKIP zsh not installed"
fi

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
