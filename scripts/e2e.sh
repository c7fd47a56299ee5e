#!/usr/bin/env bash
# The end-to-end suite of kerf serve (tests/e2e/e2e_serve.c).  By default
# against kerf's in-process test API server over TLS; with
# KERF_E2E_KUBECONFIG=FILE against that cluster (it installs the Tenant
# CRD, works in namespaces and nodes named kerf-e2e-*, removes them).
# Then GPUs out of service (tests/e2e/e2e_gpu_down.c), idle reclamation
# from the nodes' GPU utilisation (tests/e2e/e2e_idle.c), the admission
# webhook's suite (tests/e2e/e2e_webhook.c) and the node agent's
# (tests/e2e/e2e_agent.c, on the fake NVML), and kerf what-if on kerf
# serve's GET /api/v1/state (tests/e2e/e2e_whatif.c).
# Each ends with "N passed, N failed"; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
	meson setup build >/dev/null
fi
ninja -C build tests/e2e/e2e_serve tests/e2e/e2e_gpu_down tests/e2e/e2e_idle \
	tests/e2e/e2e_webhook tests/e2e/e2e_whatif \
	tests/agent/e2e_agent tests/fakenvml/libnvidia-ml.so.1 \
	tests/agent/nvidia-cuda-mps-control kerf >/dev/null
rc=0
build/tests/e2e/e2e_serve tests/unit/kube_certs.sh || rc=1
build/tests/e2e/e2e_gpu_down tests/unit/kube_certs.sh || rc=1
build/tests/e2e/e2e_idle tests/unit/kube_certs.sh || rc=1
build/tests/e2e/e2e_whatif tests/unit/kube_certs.sh || rc=1
# the admission webhook through the API server (against a real cluster
# the API server must reach 127.0.0.1 of this machine)
build/tests/e2e/e2e_webhook tests/unit/kube_certs.sh || rc=1
# the node agent on the fake NVML, on a Node the suite creates
build/tests/agent/e2e_agent tests/unit/kube_certs.sh \
	build/tests/fakenvml/libnvidia-ml.so.1 tests/fakenvml/scripts/agent.json build/kerf \
	build/tests/agent/nvidia-cuda-mps-control || rc=1
exit $rc
