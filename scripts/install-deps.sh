#!/usr/bin/env bash
# Install every Debian package kerf needs to build, test, fuzz and benchmark.
# Debian 12 (bookworm). Idempotent: safe to run again.
set -euo pipefail

pkgs=(
	build-essential pkgconf meson ninja-build
	clang libclang-rt-14-dev
	libcmocka-dev libjansson-dev libyaml-dev
	libcurl4-openssl-dev libmicrohttpd-dev libgnutls28-dev libssl-dev openssl
	python3
	python3-yaml python3-jsonschema  # the Helm chart's test (tests/cli/test_helm_chart.py)
	nftables  # nft: the DSCP marking test applies real rulesets in network namespaces
	iproute2  # ip: that test makes its namespaces and veth pairs
	nghttp2-proxy   # nghttpx: an HTTP/2 front for the e2e suite (tests/e2e/h2_front.sh)
	nghttp2-client  # h2load: the admission webhook's load benchmark (bench/webhook_load.sh)
	libnghttp2-dev protobuf-c-compiler libprotobuf-c-dev  # the device plugin's gRPC (src/grpc, src/deviceplugin)
	python3-grpcio python3-grpc-tools python3-protobuf  # the kubelet stand-in of the device plugin test
	prometheus  # promtool: the node agent's metrics checked as Prometheus reads them
	chromium  # the dashboard's browser test (tests/ui), driven by playwright-core
	zsh groff-base  # kerf completion zsh loaded under compinit; kerf man rendered by groff
)
# Node.js and npm for that test: Debian's, unless a node and npm are there already
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	pkgs+=(nodejs npm)
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps: all ${#pkgs[@]} packages present"
else
	echo "install-deps: installing ${missing[*]}"
	$sudo apt-get -o DPkg::Lock::Timeout=600 update
	DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 \
		install -y --no-install-recommends "${missing[@]}"
fi

# playwright-core for tests/ui, the version its package-lock.json pins, into
# the git-ignored tests/ui/node_modules
npm ci --prefix "$(cd "$(dirname "$0")/.." && pwd)/tests/ui" --no-audit --no-fund
