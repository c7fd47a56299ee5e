#!/usr/bin/env bash
# The crash-point suite of kerf serve (tests/crash/crash_serve.c): the
# kerf and kerf-testapi binaries as child processes, kerf serve killed
# with SIGKILL at each KERF_CRASH_AT point and started again, then two
# replicas with leader election and the leader killed.  With
# KERF_E2E_KUBECONFIG=FILE against that cluster (nodes and a namespace
# named kerf-crash-*, removed at the end; the relist point is skipped).
# Ends with "N passed, N failed"; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
	meson setup build >/dev/null
fi
ninja -C build kerf src/testapi/kerf-testapi tests/crash/crash_serve >/dev/null
exec build/tests/crash/crash_serve tests/unit/kube_certs.sh build/kerf \
	build/src/testapi/kerf-testapi
