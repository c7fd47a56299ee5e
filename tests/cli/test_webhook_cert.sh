#!/usr/bin/env bash
# scripts/webhook-cert.sh, run in a temporary directory and its output read
# back with openssl: the serving certificate's names, key type and chain; a
# rotation whose bundle trusts the old and the new certificate; an expired
# CA left out of the bundle; the kustomize patch; and bad options refused,
# before anything is written, with a message that names the option.
# Prints TAP.
#
# usage: test_webhook_cert.sh SOURCE_ROOT
set -u

src=$1
script=$src/scripts/webhook-cert.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0

ok() {         # ok DESCRIPTION CMD...: CMD succeeds
	local what=$1
	shift
	n=$((n + 1))
	if "$@" >"$tmp/ok.out" 2>&1; then
		echo "ok $n - $what"
	else
		failed=$((failed + 1))
		echo "not ok $n - $what"
		sed 's/^/#   /' "$tmp/ok.out" | head -20
	fi
}

no() {         # no DESCRIPTION CMD...: CMD fails
	local what=$1
	shift
	n=$((n + 1))
	if "$@" >"$tmp/ok.out" 2>&1; then
		failed=$((failed + 1))
		echo "not ok $n - $what (it succeeded)"
	else
		echo "ok $n - $what"
	fi
}

# refuse MESSAGE ARGS...: the script exits 2 with MESSAGE as a line of its
# stderr, and writes nothing (the directory $tmp/none stays absent).
refuse() {
	local msg=$1 rc
	shift
	n=$((n + 1))
	bash "$script" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" -eq 2 ] && grep -qxF -- "webhook-cert.sh: $msg" "$tmp/err" &&
	   [ ! -e "$tmp/none" ]; then
		echo "ok $n - refused: $(printf '%q ' "$@")"
	else
		failed=$((failed + 1))
		echo "not ok $n - refused: $(printf '%q ' "$@")"
		echo "# want status 2 and the line: webhook-cert.sh: $msg"
		echo "# got status $rc, stderr:"
		sed 's/^/#   /' "$tmp/err" | head -5
		[ ! -e "$tmp/none" ] || echo "# and it wrote $tmp/none"
	fi
	rm -rf "$tmp/none"
}

certs() { grep -c 'BEGIN CERTIFICATE' "$1"; }
verify() {     # verify BUNDLE CERT: CERT chains to BUNDLE as a server cert
	openssl verify -CAfile "$1" -purpose sslserver \
		-verify_hostname kerf-webhook.kerf-system.svc "$2"
}
sans() { openssl x509 -in "$1" -noout -ext subjectAltName | tail -n +2 | tr -d ' '; }

# ---- a first certificate -------------------------------------------------
a=$tmp/a
ok "makes a CA and a serving certificate" \
	bash "$script" --out "$a" --ip 127.0.0.1 --dns extra.example \
	--days 30 --patch-out "$tmp/patch.yaml"
for f in tls.crt tls.key ca.crt ca.key ca-bundle.pem; do
	ok "writes $f" test -s "$a/$f"
done
ok "keys are readable by their owner only" \
	test "$(stat -c %a "$a/tls.key") $(stat -c %a "$a/ca.key")" = "600 600"
ok "SANs: the Service's four names, then --dns and --ip" test "$(sans "$a/tls.crt")" = \
	"DNS:kerf-webhook,DNS:kerf-webhook.kerf-system,DNS:kerf-webhook.kerf-system.svc,DNS:kerf-webhook.kerf-system.svc.cluster.local,DNS:extra.example,IPAddress:127.0.0.1"
ok "the serving key is ECDSA P-256" \
	bash -c "openssl pkey -in '$a/tls.key' -noout -text | grep -qx 'NIST CURVE: P-256'"
ok "the CA key is ECDSA P-256" \
	bash -c "openssl pkey -in '$a/ca.key' -noout -text | grep -qx 'NIST CURVE: P-256'"
ok "the certificate holds the key's public half" test \
	"$(openssl x509 -in "$a/tls.crt" -noout -pubkey)" = "$(openssl pkey -in "$a/tls.key" -pubout)"
ok "the serving certificate is no CA, for serverAuth" bash -c \
	"openssl x509 -in '$a/tls.crt' -noout -ext basicConstraints,extendedKeyUsage | tr -d '\n ' | grep -q 'CA:FALSE.*TLSWebServerAuthentication'"
ok "the serving certificate verifies against ca-bundle.pem" verify "$a/ca-bundle.pem" "$a/tls.crt"
no "... for its names only" openssl verify -CAfile "$a/ca-bundle.pem" \
	-verify_hostname kerf-webhook.other.svc "$a/tls.crt"
ok "... and for 127.0.0.1" openssl verify -CAfile "$a/ca-bundle.pem" -verify_ip 127.0.0.1 "$a/tls.crt"
ok "the bundle holds one CA" test "$(certs "$a/ca-bundle.pem")" -eq 1
ok "--days 30: valid for 29 days" openssl x509 -in "$a/tls.crt" -noout -checkend $((29 * 86400))
no "--days 30: not for 31" openssl x509 -in "$a/tls.crt" -noout -checkend $((31 * 86400))

# The patch: every webhook of deploy/webhook by name, the bundle in base64.
for f in "$src"/deploy/webhook/*.yaml; do
	for w in $(sed -n 's/^  - name: \([a-z.]*\.kerf\.io\)$/\1/p' "$f"); do
		ok "the patch names $w" grep -qx "  - name: $w" "$tmp/patch.yaml"
	done
done
ok "the patch sets 5 caBundles" test "$(grep -c '^      caBundle: ' "$tmp/patch.yaml")" -eq 5
ok "each is ca-bundle.pem in base64" bash -c \
	"grep '^      caBundle: ' '$tmp/patch.yaml' | sed 's/.*: //' | sort -u | openssl base64 -d -A | cmp - '$a/ca-bundle.pem'"
ok "the patch is one Mutating- and one ValidatingWebhookConfiguration kerf" test \
	"$(grep -E '^(kind|  name):' "$tmp/patch.yaml" | tr -d '\n')" = \
	"kind: MutatingWebhookConfiguration  name: kerfkind: ValidatingWebhookConfiguration  name: kerf"

ok "--print-kubectl prints the caBundle patch before the Secret" bash -c \
	"bash '$script' --out '$tmp/k' --print-kubectl | grep -E '^kubectl ' | cut -d' ' -f2-3 | tr '\n' ' ' | grep -qx 'patch mutatingwebhookconfiguration patch validatingwebhookconfiguration -n kerf-system '"

# ---- rotation -----------------------------------------------------------
cp "$a/tls.crt" "$tmp/old-tls.crt"
cp "$a/ca.crt" "$tmp/old-ca.crt"
refuse "--out '$a': holds a CA already (ca.crt): give --rotate to replace it, --ca-key and --ca-cert to sign with it, or another directory" \
	--out "$a"
ok "--rotate" bash "$script" --out "$a" --rotate --ip 127.0.0.1
no "a new CA" cmp -s "$a/ca.crt" "$tmp/old-ca.crt"
ok "the previous CA kept as ca-previous.crt" cmp "$a/ca-previous.crt" "$tmp/old-ca.crt"
ok "the bundle holds 2 CAs" test "$(certs "$a/ca-bundle.pem")" -eq 2
ok "the new serving certificate verifies against the bundle" verify "$a/ca-bundle.pem" "$a/tls.crt"
ok "the old one too" verify "$a/ca-bundle.pem" "$tmp/old-tls.crt"
no "the old one not against the new CA alone" verify "$a/ca.crt" "$tmp/old-tls.crt"
no "the new one not against the old CA" verify "$tmp/old-ca.crt" "$a/tls.crt"

ok "renewing with the current CA (--ca-key, --ca-cert)" bash "$script" --out "$a" \
	--ca-key "$a/ca.key" --ca-cert "$a/ca.crt"
ok "... drops the previous CA from the bundle" test "$(certs "$a/ca-bundle.pem")" -eq 1
ok "... and signs with the CA given" verify "$a/ca.crt" "$a/tls.crt"

# An expired previous CA (openssl ca can date a certificate in the past).
e=$tmp/e
mkdir -p "$e/old"
(
	cd "$e/old" &&
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca.key &&
	openssl req -new -key ca.key -subj /CN=expired-ca -out ca.csr &&
	: >index.txt && echo 01 >serial &&
	printf '%s\n' '[ca]' 'default_ca = c' '[c]' 'database = index.txt' \
		'new_certs_dir = .' 'serial = serial' 'default_md = sha256' \
		'policy = p' 'x509_extensions = v3' '[p]' 'commonName = supplied' \
		'[v3]' 'basicConstraints = critical,CA:TRUE' \
		'keyUsage = critical,keyCertSign' >ca.cnf &&
	openssl ca -batch -config ca.cnf -selfsign -keyfile ca.key -in ca.csr \
		-startdate 20200101000000Z -enddate 20200102000000Z -out ../ca.crt
) >"$tmp/expired.log" 2>&1
ok "an expired CA made" test -s "$e/ca.crt"
ok "--rotate over an expired CA" bash -c "bash '$script' --out '$e' --rotate 2>'$tmp/e.err'"
ok "... says it is left out" grep -q 'the previous CA expired (notAfter=Jan  2 00:00:00 2020 GMT): not in ca-bundle.pem' "$tmp/e.err"
ok "... and the bundle holds the new CA alone" test "$(certs "$e/ca-bundle.pem")" -eq 1
ok "... which verifies the new certificate" verify "$e/ca-bundle.pem" "$e/tls.crt"

# ---- bad options, refused before any work ----------------------------------
none=$tmp/none
refuse "--days '0': not a whole number of days from 1 to 36500" --out "$none" --days 0
refuse "--days 'abc': not a whole number of days from 1 to 36500" --out "$none" --days abc
refuse "--days '36501': not a whole number of days from 1 to 36500" --out "$none" --days 36501
refuse "--ca-days '-5': not a whole number of days from 1 to 36500" --out "$none" --ca-days -5
refuse "--days 400: longer than the new CA's --ca-days 100" --out "$none" --days 400 --ca-days 100
refuse "--days: needs a value" --out "$none" --days
refuse "--days is given twice" --out "$none" --days 1 --days 2
refuse "--ip '300.1.1.1': not an IPv4 or IPv6 address" --out "$none" --ip 300.1.1.1
refuse "--ip 'localhost': not an IPv4 or IPv6 address" --out "$none" --ip localhost
refuse "--dns 'Bad_Name': not a DNS name (lower-case labels of letters, digits and '-', a leading '*.' at most, 253 bytes at most)" \
	--out "$none" --dns Bad_Name
refuse "--dns 'a?b': not a DNS name (lower-case labels of letters, digits and '-', a leading '*.' at most, 253 bytes at most)" \
	--out "$none" --dns "$(printf 'a\nb')"
refuse "--dns: empty" --out "$none" --dns ''
refuse "--service '1svc': not a Service name (a DNS-1035 label: lower-case letters, digits and '-', starting with a letter, at most 63)" \
	--out "$none" --service 1svc
refuse "--namespace 'Kerf': not a namespace name (a DNS-1123 label: lower-case letters, digits and '-', at most 63)" \
	--out "$none" --namespace Kerf
refuse "--ca-key needs --ca-cert (the CA's certificate)" --out "$none" --ca-key "$a/ca.key"
refuse "--ca-cert needs --ca-key (the CA's private key)" --out "$none" --ca-cert "$a/ca.crt"
refuse "--ca-key '$tmp/missing': not a readable file" --out "$none" \
	--ca-key "$tmp/missing" --ca-cert "$a/ca.crt"
refuse "--ca-key '$tmp/old-ca.crt': not a private key openssl can read" --out "$none" \
	--ca-key "$tmp/old-ca.crt" --ca-cert "$a/ca.crt"
refuse "--ca-cert '$a/tls.crt': not a CA certificate (basicConstraints CA:TRUE)" --out "$none" \
	--ca-key "$a/tls.key" --ca-cert "$a/tls.crt"
refuse "--ca-key '$e/ca.key': not the key of --ca-cert '$tmp/old-ca.crt'" --out "$none" \
	--ca-key "$e/ca.key" --ca-cert "$tmp/old-ca.crt"
refuse "--ca-cert '$e/ca-previous.crt': expired (notAfter=Jan  2 00:00:00 2020 GMT)" --out "$none" \
	--ca-key "$e/old/ca.key" --ca-cert "$e/ca-previous.crt"
refuse "--days 36500: the serving certificate would outlive the CA in --ca-cert ($(openssl x509 -in "$a/ca.crt" -noout -enddate))" \
	--out "$none" --ca-key "$a/ca.key" --ca-cert "$a/ca.crt" --days 36500
refuse "--rotate makes a new CA, --ca-key and --ca-cert reuse one: give one or the other" \
	--out "$none" --rotate --ca-key "$a/ca.key" --ca-cert "$a/ca.crt"
refuse "--rotate: '$none'/ca.crt does not exist (nothing to rotate: run without --rotate first)" \
	--out "$none" --rotate
refuse "--out '$a/ca.crt': exists and is not a directory" --out "$a/ca.crt"
refuse "--out '$none/x': its parent directory does not exist" --out "$none/x"
refuse "--patch-out '$tmp': is a directory" --out "$none" --patch-out "$tmp"
refuse "--patch-out '$none/p.yaml': its directory does not exist" --out "$tmp/ok" --patch-out "$none/p.yaml"
refuse "unknown option '--bogus' (see --help)" --out "$none" --bogus
refuse "'--days=3': give the value as a separate argument (--days VALUE)" --out "$none" --days=3
ok "--help" bash -c "bash '$script' --help | grep -q '^usage: scripts/webhook-cert.sh'"
no "no output directory made by the refusals" test -e "$tmp/ok"

echo "1..$n"
[ "$failed" -eq 0 ]
