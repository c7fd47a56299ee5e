#!/usr/bin/env bash
# kerf serve's dashboard in headless Chromium (tests/ui/dashboard.mjs,
# driven by playwright-core from npm with Debian's chromium).  Prints TAP.
# A missing Chromium, Node.js or playwright-core is a failure, not a skip:
# CI must run this.  KERF_UI_TEST=skip skips it on purpose (a machine
# without a browser).  playwright-core is installed by
# scripts/install-deps.sh, else here, with `npm ci` into the git-ignored
# tests/ui/node_modules; KERF_CHROMIUM names another Chromium.
#
# usage: test_dashboard.sh KERF KERF_TESTAPI CERT_SCRIPT
set -u

kerf=$1
testapi=$2
certs=$3
here=$(cd "$(dirname "$0")" && pwd)

fail() {
	echo "1..1"
	echo "not ok 1 - $1"
	echo "# (set KERF_UI_TEST=skip to skip this test on a machine without a browser)"
	exit 1
}

if [ "${KERF_UI_TEST:-}" = skip ]; then
	echo "1..0 # SKIP KERF_UI_TEST=skip"
	exit 0
fi
command -v node >/dev/null 2>&1 || fail "node (Node.js) is not installed: bash scripts/install-deps.sh"
if [ -n "${KERF_CHROMIUM:-}" ]; then
	chromium=$KERF_CHROMIUM
else
	chromium=$(command -v chromium || echo /usr/bin/chromium)
fi
[ -x "$chromium" ] || fail "chromium ('$chromium') is not installed: bash scripts/install-deps.sh (apt-get install chromium)"
if [ ! -f "$here/node_modules/playwright-core/package.json" ]; then
	command -v npm >/dev/null 2>&1 || fail "npm is not installed: bash scripts/install-deps.sh"
	npm ci --prefix "$here" --no-audit --no-fund >&2 ||
		fail "playwright-core: 'npm ci' in tests/ui failed"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh "$certs" "$tmp" || fail "cannot make test certificates (openssl) with $certs"
NODE_EXTRA_CA_CERTS="$tmp/ca.crt" node "$here/dashboard.mjs" "$kerf" "$testapi" "$chromium" "$tmp"
