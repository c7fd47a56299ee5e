#!/usr/bin/env bash
# The fault suite of kerf serve (tests/e2e/fault_serve.c): kerf serve
# through the fault proxy (src/faultproxy) while it injects 409s, 410s,
# dropped watches, 5xx, 429 and latency, then 0 lost, 0 doubled and every
# gang whole checked on the API server itself.  By default against kerf's
# in-process test API server over TLS; with KERF_E2E_KUBECONFIG=FILE
# against that cluster (it installs the Tenant CRD, works in the namespace
# kerf-fault and nodes named kerf-fault-*, removes them).
# KERF_FAULT_SCENARIO=N runs scenario N alone.
# Ends with "N passed, N failed"; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
	meson setup build >/dev/null
fi
ninja -C build tests/e2e/fault_serve >/dev/null
exec build/tests/e2e/fault_serve tests/unit/kube_certs.sh
