#!/usr/bin/env bash
# Run every libFuzzer target for $1 seconds each (default 60) from its seed
# corpus in fuzz/corpus/<name>/.  Builds them with clang in build-fuzz
# (-Dfuzz=true; the rest of the project is built there too, without tests).
# New inputs go to a scratch folder, not into the seed corpus; a crash is
# written to fuzz/artifacts/ and makes the script fail.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-60}
dir=build-fuzz
targets=(kobj kobj_gpupool kobj_tenant kobj_pdb mig_node openb options scenario state_json timesim kubeconfig watch_event admission_review deviceplugin pod_annotations cgroup node_marks)

if [ ! -f "$dir/build.ninja" ]; then
	CC=clang meson setup "$dir" --buildtype=debugoptimized \
		-Dfuzz=true -Dtests=false -Db_sanitize=none -Db_lundef=false \
		>/dev/null
fi
ninja -C "$dir"

mkdir -p fuzz/artifacts
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

for t in "${targets[@]}"; do
	mkdir -p "$scratch/$t"
	echo "fuzz_$t: ${secs}s"
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$dir/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 \
		-print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t-" \
		"$scratch/$t" "fuzz/corpus/$t"
done
echo "fuzz: ${#targets[@]} target(s) ran ${secs}s each, no crash"
