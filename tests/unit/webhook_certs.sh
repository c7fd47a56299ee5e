#!/bin/sh
# Test certificates for test_webhook_server, made fresh in directory $1
# with the openssl tool: a CA, and two serving pairs it signed for
# 127.0.0.1 and localhost, a (CN kerf-webhook-a) and b (CN
# kerf-webhook-b), to swap one for the other.  Exit 77 when openssl is
# missing.
set -eu
command -v openssl >/dev/null 2>&1 || exit 77
cd "$1"
q() { "$@" >/dev/null 2>&1; }
q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout ca.key -out ca.crt -days 2 -subj /CN=kerf-webhook-test-ca
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > server.ext
for p in a b; do
	q openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout $p.key -out $p.csr -subj /CN=kerf-webhook-$p
	q openssl x509 -req -in $p.csr -CA ca.crt -CAkey ca.key \
		-CAcreateserial -out $p.crt -days 2 -extfile server.ext
done
