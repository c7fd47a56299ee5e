#!/usr/bin/env bash
# What `kerf agent inventory` sees on a real GPU node, next to nvidia-smi's
# view of the same GPUs, for a session with a GPU machine (CI never runs
# it: there is no GPU there).  Prints the table, the JSON, nvidia-smi's
# listing, MIG instances and NVLink topology when nvidia-smi is there, and
# a check that the UUIDs agree.
#
# usage: bench/gpu_inventory.sh [KERF] [--nvml-library PATH]
set -u
cd "$(dirname "$0")/.."
kerf=${1:-build/kerf}
shift || true
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "== kerf agent inventory"
"$kerf" agent inventory "$@"
echo "exit $?"
echo "== kerf agent inventory -o json"
"$kerf" agent inventory -o json "$@" >"$out"
rc=$?
cat "$out"
echo "exit $rc"

if command -v nvidia-smi >/dev/null; then
	echo "== nvidia-smi"
	nvidia-smi --query-gpu=index,uuid,name,memory.total,pci.bus_id,mig.mode.current,mig.mode.pending \
		--format=csv,noheader
	echo "== nvidia-smi mig -lgi / -lci"
	nvidia-smi mig -lgi 2>&1 | head -40
	nvidia-smi mig -lci 2>&1 | head -40
	echo "== nvidia-smi topo -m"
	nvidia-smi topo -m 2>&1 | head -30
	echo "== UUIDs: kerf vs nvidia-smi"
	want=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | sort)
	got=$(grep -o '"uuid": "[^"]*"' "$out" | cut -d'"' -f4 | sort)
	if [ "$want" = "$got" ]; then echo "same"; else echo "DIFFER"; fi
else
	echo "nvidia-smi not found"
fi
