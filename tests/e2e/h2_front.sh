#!/bin/sh
# The end-to-end suite over HTTP/2: kerf's test API server behind nghttpx
# (Debian's nghttp2-proxy), which speaks HTTP/2 over TLS to its clients as
# a real kube-apiserver does, and HTTP/1.1 to the test server.  kerf serve
# and the suite reach the API through it (KERF_E2E_KUBECONFIG), so every
# request of theirs, watches included, goes over HTTP/2 streams on one
# connection; nghttpx's access log must show them all as h2.
#
#   h2_front.sh TESTAPI E2E_SERVE CERTS_SH
#
# TAP (the suite's own); skipped when nghttpx is not installed.
set -u
testapi=$1 e2e=$2 certs=$3
if ! command -v nghttpx >/dev/null 2>&1; then
	echo "1..0 # SKIP nghttpx (nghttp2-proxy) not installed"
	exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/kerf-h2-XXXXXX")
ta_pid= px_pid=
cleanup() {
	[ -n "$px_pid" ] && kill "$px_pid" 2>/dev/null && wait "$px_pid" 2>/dev/null
	[ -n "$ta_pid" ] && kill "$ta_pid" 2>/dev/null && wait "$ta_pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
if ! sh "$certs" "$dir" >/dev/null 2>&1; then
	echo "1..0 # SKIP no openssl to make certificates"
	exit 0
fi
printf 'kerf-h2-token' >"$dir/token"
"$testapi" --port 0 --token-file "$dir/token" --tls-cert "$dir/server.crt" \
	--tls-key "$dir/server.key" --tls-ca "$dir/ca.crt" \
	--kubeconfig-out "$dir/kc.yaml" >"$dir/testapi.log" 2>&1 &
ta_pid=$!
for _ in $(seq 100); do
	[ -s "$dir/kc.yaml" ] && break
	sleep 0.1
done
back=$(sed -n 's/^ *server: *https:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/kc.yaml")
front=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if [ -z "$back" ] || [ -z "$front" ]; then
	echo "Bail out! the test API server did not start"
	exit 1
fi
nghttpx --conf=/dev/null --frontend="127.0.0.1,$front" \
	--backend="127.0.0.1,$back;;tls" --insecure --workers=1 --no-ocsp \
	-L WARN --accesslog-file="$dir/access.log" --accesslog-format='$alpn $status' \
	"$dir/server.key" "$dir/server.crt" >"$dir/nghttpx.log" 2>&1 &
px_pid=$!
for _ in $(seq 100); do
	python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' \
		"$front" 2>/dev/null && break
	sleep 0.1
done
sed "s/127\.0\.0\.1:$back/127.0.0.1:$front/" "$dir/kc.yaml" >"$dir/front.yaml"
KERF_E2E_KUBECONFIG="$dir/front.yaml" "$e2e" "$certs"
rc=$?
h2=$(grep -c '^h2 ' "$dir/access.log" 2>/dev/null || true)
other=$(grep -vc '^h2 ' "$dir/access.log" 2>/dev/null || true)
echo "# through nghttpx: ${h2:-0} requests over HTTP/2, ${other:-0} otherwise"
if [ "${h2:-0}" -eq 0 ] || [ "${other:-0}" -ne 0 ]; then
	echo "Bail out! not every request went over HTTP/2"
	exit 1
fi
exit $rc
