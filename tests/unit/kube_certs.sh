#!/bin/sh
# Test certificates for test_kube_client, made fresh in directory $1 with
# the openssl tool: a CA, a server certificate it signed for 127.0.0.1 and
# localhost, a client certificate it signed (CN kerf-client), another CA
# that signed nothing here (a wrong CA), and base64 forms of the client
# pair for a kubeconfig's *-data fields.  Exit 77 when openssl is missing.
set -eu
command -v openssl >/dev/null 2>&1 || exit 77
cd "$1"
q() { "$@" >/dev/null 2>&1; }
q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout ca.key -out ca.crt -days 2 -subj /CN=kerf-test-ca
q openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout wrong-ca.key -out wrong-ca.crt -days 2 -subj /CN=kerf-wrong-ca
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > server.ext
q openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout server.key -out server.csr -subj /CN=localhost
q openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
	-out server.crt -days 2 -extfile server.ext
printf 'extendedKeyUsage=clientAuth\n' > client.ext
q openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout client.key -out client.csr -subj /CN=kerf-client
q openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
	-out client.crt -days 2 -extfile client.ext
openssl base64 -A -in client.crt > client.crt.b64
openssl base64 -A -in client.key > client.key.b64
