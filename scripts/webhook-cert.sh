#!/usr/bin/env bash
# The serving certificate of kerf's admission webhook, and the CA bundle the
# API server verifies it with (deploy/README.md, docs/admission.md).
# openssl only.  Every option is checked before anything is written.
set -euo pipefail

me=webhook-cert.sh

usage() {
	cat <<'EOF'
usage: scripts/webhook-cert.sh [options]

Makes an ECDSA P-256 CA (or uses one given) and a serving certificate for
the Service kerf-webhook.kerf-system.svc, in DIR:

  tls.crt, tls.key    the serving certificate and key (Secret kerf-webhook-tls)
  ca.crt, ca.key      the CA that signed it
  ca-bundle.pem       what the webhook configurations' caBundle must hold
  ca-previous.crt     after --rotate: the CA it replaced

Options:
  --out DIR          where to write (default: kerf-webhook-certs); made if absent.
                     Holding a CA already, DIR needs --rotate or --ca-key/--ca-cert
  --service NAME     the Service's name (default: kerf-webhook)
  --namespace NS     its namespace (default: kerf-system)
  --dns NAME         one more DNS name in the certificate (repeatable)
  --ip ADDR          an IP address in the certificate (repeatable), e.g.
                     127.0.0.1 for a webhook called by URL in tests
  --days N           validity of the serving certificate, days (default: 365)
  --ca-days N        validity of a new CA, days (default: 1825)
  --ca-key FILE      sign with this CA key instead of making a CA ...
  --ca-cert FILE     ... and this CA certificate (both or neither); the
                     bundle then holds this CA alone (after a rotation:
                     drops the previous CA)
  --rotate           make a NEW CA and sign with it; ca-bundle.pem holds the
                     new CA and the previous one (DIR/ca.crt) unless that
                     has expired, so the API server accepts the old and the
                     new serving certificate while the Secret is updated
  --patch-out FILE   write a kustomize patch that sets the caBundle of all
                     of kerf's webhooks (deploy/README.md)
  --print-kubectl    print the kubectl commands that install the bundle and
                     the Secret, in the order a rotation needs
  -h, --help         this text

The SANs: SERVICE, SERVICE.NS, SERVICE.NS.svc, SERVICE.NS.svc.cluster.local,
then each --dns and --ip.
EOF
}

die() {        # a bad option: status 2
	echo "$me: $*" >&2
	exit 2
}

fail() {       # the work failed: status 1
	echo "$me: $*" >&2
	exit 1
}

# A value as messages quote it: printable ASCII only, at most 64 bytes.
esc() {
	local s
	s=$(printf '%s' "$1" | LC_ALL=C tr -c '[:print:]' '?')
	if [ "${#s}" -gt 64 ]; then
		s="${s:0:64}..."
	fi
	printf "'%s'" "$s"
}

# ---- options ---------------------------------------------------------------
out="" service="" namespace="" days="" ca_days="" ca_key="" ca_cert=""
patch_out="" rotate=0 print_kubectl=0
dns=() ips=()

once() {       # once OPTION CURRENT: refuse an option given twice
	[ -z "$2" ] || die "$1 is given twice"
}

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	-h | --help)
		usage
		exit 0
		;;
	--rotate)
		[ "$rotate" -eq 0 ] || die "--rotate is given twice"
		rotate=1
		shift
		continue
		;;
	--print-kubectl)
		print_kubectl=1
		shift
		continue
		;;
	--out | --service | --namespace | --dns | --ip | --days | --ca-days | \
	--ca-key | --ca-cert | --patch-out)
		[ $# -ge 2 ] || die "$opt: needs a value"
		val=$2
		shift 2
		;;
	--*=*)
		die "$(esc "$opt"): give the value as a separate argument (${opt%%=*} VALUE)"
		;;
	*)
		die "unknown option $(esc "$opt") (see --help)"
		;;
	esac
	case $opt in
	--out) once "$opt" "$out"; out=$val ;;
	--service) once "$opt" "$service"; service=$val ;;
	--namespace) once "$opt" "$namespace"; namespace=$val ;;
	--days) once "$opt" "$days"; days=$val ;;
	--ca-days) once "$opt" "$ca_days"; ca_days=$val ;;
	--ca-key) once "$opt" "$ca_key"; ca_key=$val ;;
	--ca-cert) once "$opt" "$ca_cert"; ca_cert=$val ;;
	--patch-out) once "$opt" "$patch_out"; patch_out=$val ;;
	--dns) dns+=("$val") ;;
	--ip) ips+=("$val") ;;
	esac
	[ -n "$val" ] || die "$opt: empty"
done

# Defaults only now, so "given twice" is about the command line.
out=${out:-kerf-webhook-certs}
service=${service:-kerf-webhook}
namespace=${namespace:-kerf-system}
days=${days:-365}
ca_days=${ca_days:-1825}

# ---- checks, before any work -----------------------------------------------
command -v openssl >/dev/null 2>&1 ||
	fail "openssl is not installed (scripts/install-deps.sh installs it)"

check_days() { # check_days OPTION VALUE
	[[ $2 =~ ^[1-9][0-9]{0,4}$ ]] && [ "$2" -le 36500 ] ||
		die "$1 $(esc "$2"): not a whole number of days from 1 to 36500"
}
check_days --days "$days"
check_days --ca-days "$ca_days"

label='[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?'
[[ $service =~ ^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$ ]] ||
	die "--service $(esc "$service"): not a Service name (a DNS-1035 label: lower-case letters, digits and '-', starting with a letter, at most 63)"
[[ $namespace =~ ^$label$ ]] ||
	die "--namespace $(esc "$namespace"): not a namespace name (a DNS-1123 label: lower-case letters, digits and '-', at most 63)"
for d in "${dns[@]+"${dns[@]}"}"; do
	[[ $d =~ ^(\*\.)?$label(\.$label)*$ ]] && [ "${#d}" -le 253 ] ||
		die "--dns $(esc "$d"): not a DNS name (lower-case labels of letters, digits and '-', a leading '*.' at most, 253 bytes at most)"
done
octet='(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])'
for a in "${ips[@]+"${ips[@]}"}"; do
	if [[ $a =~ ^$octet(\.$octet){3}$ ]]; then
		continue
	fi
	# IPv6: hex groups and colons (an IPv4 tail allowed); openssl checks
	# the rest, and a bad one fails before anything is written.
	[[ $a == *:* && $a =~ ^[0-9a-fA-F:.]{2,45}$ ]] ||
		die "--ip $(esc "$a"): not an IPv4 or IPv6 address"
done

if [ -e "$out" ] && [ ! -d "$out" ]; then
	die "--out $(esc "$out"): exists and is not a directory"
fi
if [ ! -e "$out" ] && [ ! -d "$(dirname -- "$out")" ]; then
	die "--out $(esc "$out"): its parent directory does not exist"
fi
if [ -d "$out" ] && [ ! -w "$out" ]; then
	die "--out $(esc "$out"): not writable"
fi
if [ -n "$patch_out" ]; then
	[ ! -d "$patch_out" ] ||
		die "--patch-out $(esc "$patch_out"): is a directory"
	[ -d "$(dirname -- "$patch_out")" ] ||
		die "--patch-out $(esc "$patch_out"): its directory does not exist"
fi

if [ -n "$ca_key" ] || [ -n "$ca_cert" ]; then
	[ "$rotate" -eq 0 ] ||
		die "--rotate makes a new CA, --ca-key and --ca-cert reuse one: give one or the other"
	[ -n "$ca_key" ] || die "--ca-cert needs --ca-key (the CA's private key)"
	[ -n "$ca_cert" ] || die "--ca-key needs --ca-cert (the CA's certificate)"
	for pair in "--ca-key:$ca_key" "--ca-cert:$ca_cert"; do
		o=${pair%%:*} f=${pair#*:}
		[ -f "$f" ] && [ -r "$f" ] ||
			die "$o $(esc "$f"): not a readable file"
	done
	openssl pkey -in "$ca_key" -noout 2>/dev/null ||
		die "--ca-key $(esc "$ca_key"): not a private key openssl can read"
	openssl x509 -in "$ca_cert" -noout 2>/dev/null ||
		die "--ca-cert $(esc "$ca_cert"): not a PEM certificate"
	openssl x509 -in "$ca_cert" -noout -ext basicConstraints 2>/dev/null |
		grep -q 'CA:TRUE' ||
		die "--ca-cert $(esc "$ca_cert"): not a CA certificate (basicConstraints CA:TRUE)"
	[ "$(openssl x509 -in "$ca_cert" -noout -pubkey)" = \
	  "$(openssl pkey -in "$ca_key" -pubout)" ] ||
		die "--ca-key $(esc "$ca_key"): not the key of --ca-cert $(esc "$ca_cert")"
	openssl x509 -in "$ca_cert" -noout -checkend 0 >/dev/null ||
		die "--ca-cert $(esc "$ca_cert"): expired ($(openssl x509 -in "$ca_cert" -noout -enddate))"
	openssl x509 -in "$ca_cert" -noout -checkend $((days * 86400)) >/dev/null ||
		die "--days $days: the serving certificate would outlive the CA in --ca-cert ($(openssl x509 -in "$ca_cert" -noout -enddate))"
else
	[ "$days" -le "$ca_days" ] ||
		die "--days $days: longer than the new CA's --ca-days $ca_days"
	if [ "$rotate" -eq 1 ]; then
		[ -f "$out/ca.crt" ] ||
			die "--rotate: $(esc "$out")/ca.crt does not exist (nothing to rotate: run without --rotate first)"
		openssl x509 -in "$out/ca.crt" -noout 2>/dev/null ||
			die "--rotate: $(esc "$out")/ca.crt is not a PEM certificate"
	elif [ -e "$out/ca.crt" ]; then
		die "--out $(esc "$out"): holds a CA already (ca.crt): give --rotate to replace it, --ca-key and --ca-cert to sign with it, or another directory"
	fi
fi

# ---- the work ----------------------------------------------------------------
umask 077
mkdir -p -- "$out"
tmp=$(mktemp -d "$out/.webhook-cert.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

ossl() {       # openssl, its messages shown only when it fails
	if ! openssl "$@" >"$tmp/ossl.log" 2>&1; then
		cat "$tmp/ossl.log" >&2
		fail "openssl $1 failed"
	fi
}

newkey() {     # newkey FILE: an ECDSA P-256 key, PKCS#8 PEM
	ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
		-pkeyopt ec_param_enc:named_curve -out "$1"
}

serial() {     # a random positive 128-bit serial number
	printf '0x01%s' "$(openssl rand -hex 15)"
}

now=$(date -u +%Y%m%dT%H%M%SZ)
if [ -n "$ca_key" ]; then
	cp -- "$ca_key" "$tmp/ca.key"
	cp -- "$ca_cert" "$tmp/ca.crt"
else
	# A name of its own, so two CAs in one bundle are told apart.
	newkey "$tmp/ca.key"
	ossl req -x509 -new -key "$tmp/ca.key" -sha256 -days "$ca_days" \
		-set_serial "$(serial)" \
		-subj "/O=kerf/CN=kerf-webhook-ca $now $(openssl rand -hex 4)" \
		-addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" \
		-addext "subjectKeyIdentifier=hash" \
		-out "$tmp/ca.crt"
fi

san="DNS:$service,DNS:$service.$namespace,DNS:$service.$namespace.svc"
san="$san,DNS:$service.$namespace.svc.cluster.local"
for d in "${dns[@]+"${dns[@]}"}"; do san="$san,DNS:$d"; done
for a in "${ips[@]+"${ips[@]}"}"; do san="$san,IP:$a"; done
cat >"$tmp/ext.cnf" <<EOF
[serving]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = $san
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
newkey "$tmp/tls.key"
ossl req -new -key "$tmp/tls.key" -subj "/O=kerf/CN=$service.$namespace.svc" \
	-out "$tmp/tls.csr"
ossl x509 -req -in "$tmp/tls.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" \
	-set_serial "$(serial)" -sha256 -days "$days" \
	-extfile "$tmp/ext.cnf" -extensions serving -out "$tmp/tls.crt"
ossl verify -CAfile "$tmp/ca.crt" -purpose sslserver "$tmp/tls.crt"

# The bundle: the CA that signed tls.crt, then, on --rotate, the previous
# CA while it has not expired.
cp -- "$tmp/ca.crt" "$tmp/ca-bundle.pem"
if [ "$rotate" -eq 1 ]; then
	cp -- "$out/ca.crt" "$tmp/ca-previous.crt"
	if openssl x509 -in "$out/ca.crt" -noout -checkend 0 >/dev/null; then
		cat "$out/ca.crt" >>"$tmp/ca-bundle.pem"
	else
		echo "$me: the previous CA expired ($(openssl x509 -in "$out/ca.crt" -noout -enddate)): not in ca-bundle.pem" >&2
	fi
fi
bundle_b64=$(openssl base64 -A -in "$tmp/ca-bundle.pem")

if [ -n "$patch_out" ]; then
	cat >"$tmp/patch.yaml" <<EOF
# The caBundle of kerf's admission webhooks, written by
# scripts/webhook-cert.sh on $now: a kustomize patch (strategic merge,
# each webhook by name) for an overlay of deploy/ (deploy/README.md).
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: kerf
webhooks:
  - name: pods.mutate.kerf.io
    clientConfig:
      caBundle: $bundle_b64
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: kerf
webhooks:
  - name: pods.validate.kerf.io
    clientConfig:
      caBundle: $bundle_b64
  - name: namespaces.validate.kerf.io
    clientConfig:
      caBundle: $bundle_b64
  - name: tenants.validate.kerf.io
    clientConfig:
      caBundle: $bundle_b64
  - name: resourceclaims.validate.kerf.io
    clientConfig:
      caBundle: $bundle_b64
EOF
fi

# In place, each file by rename; the CA last, so an interrupted run leaves
# the previous CA where --rotate looks for it.
files="tls.key tls.crt ca-bundle.pem"
[ "$rotate" -eq 0 ] || files="ca-previous.crt $files"
for f in $files ca.key ca.crt; do
	mv -f -- "$tmp/$f" "$out/$f"
done
if [ -n "$patch_out" ]; then
	chmod 644 "$tmp/patch.yaml"
	mv -f -- "$tmp/patch.yaml" "$patch_out"
fi
chmod 644 "$out/tls.crt" "$out/ca.crt" "$out/ca-bundle.pem"

nr_ca=$(grep -c 'BEGIN CERTIFICATE' "$out/ca-bundle.pem")
echo "$me: $out/tls.crt for $service.$namespace.svc, $days days; ca-bundle.pem holds $nr_ca CA(s)"

if [ "$print_kubectl" -eq 1 ]; then
	p() { printf '%s\n' "$*"; }
	one() { printf '{"name":"%s","clientConfig":{"caBundle":"%s"}}' "$1" "$bundle_b64"; }
	p "# 1. The CA bundle first: the API server then trusts the old and the new certificate."
	p "kubectl patch mutatingwebhookconfiguration kerf --type=strategic -p '{\"webhooks\":[$(one pods.mutate.kerf.io)]}'"
	p "kubectl patch validatingwebhookconfiguration kerf --type=strategic -p '{\"webhooks\":[$(one pods.validate.kerf.io),$(one namespaces.validate.kerf.io),$(one tenants.validate.kerf.io),$(one resourceclaims.validate.kerf.io)]}'"
	p "# 2. Then the serving certificate: kubelet updates the files, kerf serve reloads them."
	p "kubectl -n $namespace create secret tls kerf-webhook-tls --cert=$out/tls.crt --key=$out/tls.key --dry-run=client -o yaml | kubectl apply -f -"
fi
