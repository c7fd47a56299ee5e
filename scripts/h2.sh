#!/usr/bin/env bash
# The end-to-end suite over HTTP/2 (tests/e2e/h2_front.sh): kerf's test
# API server behind nghttpx, every request of kerf serve and the suite on
# HTTP/2 streams, as against a real kube-apiserver.  Needs nghttpx
# (nghttp2-proxy, scripts/install-deps.sh installs it).  Ends with
# "N passed, N failed"; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
	meson setup build >/dev/null
fi
ninja -C build tests/e2e/e2e_serve src/testapi/kerf-testapi >/dev/null
exec sh tests/e2e/h2_front.sh build/src/testapi/kerf-testapi build/tests/e2e/e2e_serve \
	tests/unit/kube_certs.sh
