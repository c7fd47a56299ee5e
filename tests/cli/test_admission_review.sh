#!/usr/bin/env bash
# Golden tests of the admission rules through `kerf admission review`: each
# tests/cli/admission/NAME.review.json (an AdmissionReview in) against
# objects.yaml gives exactly NAME.expected.json (the responses out, a Pod's
# mutation then its validation), with exit status 3 when one is denied and
# 0 otherwise; and the command's own errors.  Prints TAP.
#
# KERF_GOLDEN_UPDATE=1 writes the outputs instead (review every diff).
#
# usage: test_admission_review.sh KERF SOURCE_ROOT
set -u

kerf=$1
dir=$2/tests/cli/admission
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() {
	n=$((n + 1)); failed=$((failed + 1))
	echo "not ok $n - $1"
	sed 's/^/#   /' "$2" | head -30
}

for review in "$dir"/*.review.json; do
	name=$(basename "$review" .review.json)
	want=$dir/$name.expected.json
	"$kerf" admission review "$review" --objects "$dir/objects.yaml" \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "${KERF_GOLDEN_UPDATE:-}" = 1 ]; then
		cp "$tmp/out" "$want"
	fi
	status=0
	grep -q '"allowed": false' "$want" && status=3
	if [ "$rc" -ne "$status" ]; then
		echo "# exit $rc, want $status" >>"$tmp/err"
		bad "$name: exit status" "$tmp/err"
	elif ! diff -u "$want" "$tmp/out" >"$tmp/diff"; then
		bad "$name: the responses differ from $name.expected.json" "$tmp/diff"
	else
		ok "$name"
	fi
done

# expect STATUS LINE ARGS...: exit status and one exact line of stderr
expect() {
	local want=$1 msg=$2 rc
	shift 2
	"$kerf" admission "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	if [ "$rc" -eq "$want" ] && grep -qxF -- "$msg" "$tmp/err"; then
		ok "kerf admission $*"
	else
		echo "# want $want and: $msg; got $rc" >>"$tmp/err"
		bad "kerf admission $*" "$tmp/err"
	fi
}

r=$dir/allowed-gang-member.review.json
printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: Bad_Name}\n' >"$tmp/badns.yaml"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n' >"$tmp/cm.yaml"
printf 'kind: [\n' >"$tmp/broken.yaml"
printf '{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}' >"$tmp/v1beta1.json"
expect 2 "kerf admission review: --objects OBJECTS.yaml is required (the Namespaces, Tenants, PriorityClasses and GPUPools)" review "$r"
expect 2 "kerf admission review: no AdmissionReview FILE given" review --objects "$dir/objects.yaml"
expect 2 "kerf admission review: --webhook '/validate/nodes': not one of /validate/pods, /mutate/pods, /validate/namespaces, /validate/tenants, /validate/resourceclaims" review "$r" --objects "$dir/objects.yaml" --webhook /validate/nodes
expect 2 "kerf admission review: --gpu-taint 'nvidia.com/gpu': KEY:EFFECT, the effect NoSchedule, PreferNoSchedule or NoExecute" review "$r" --objects "$dir/objects.yaml" --gpu-taint nvidia.com/gpu
expect 2 "kerf admission review: --allow-host-path 'data': an absolute path" review "$r" --objects "$dir/objects.yaml" --allow-host-path data
expect 2 "kerf admission: expected the verb 'review'" check "$r"
expect 1 "kerf admission review: $tmp/badns.yaml: document 2: metadata.name: must be lower-case letters, digits and '-', starting and ending with a letter or digit, not 'Bad_Name'" review "$r" --objects "$tmp/badns.yaml"
expect 1 "kerf admission review: $tmp/cm.yaml: document 1: kind: 'ConfigMap' is not one of v1 Namespace and Pod, kerf.io/v1alpha1 Tenant and GPUPool, scheduling.k8s.io/v1 PriorityClass" review "$r" --objects "$tmp/cm.yaml"
expect 1 "kerf admission review: $tmp/v1beta1.json: /mutate/pods: {\"code\":400,\"reason\":\"BadRequest\",\"message\":\"apiVersion: 'admission.k8s.io/v1beta1' is not served, only admission.k8s.io/v1 (admissionReviewVersions: [v1])\"}" review "$tmp/v1beta1.json" --objects "$dir/objects.yaml"

# a rule the settings change: with --interposer LD_LIBRARY_PATH is refused
sed 's/"resources": {/"env": [{"name": "LD_LIBRARY_PATH", "value": "\/opt\/lib"}], "resources": {/' "$r" >"$tmp/ldlib.json"
"$kerf" admission review "$tmp/ldlib.json" --objects "$dir/objects.yaml" >/dev/null 2>&1
rc1=$?
"$kerf" admission review "$tmp/ldlib.json" --objects "$dir/objects.yaml" --interposer >/dev/null 2>"$tmp/err"
rc2=$?
if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 3 ] && grep -q 'rule preload-env' "$tmp/err"; then
	ok "--interposer refuses LD_LIBRARY_PATH"
else
	echo "# exit $rc1 and $rc2" >>"$tmp/err"
	bad "--interposer refuses LD_LIBRARY_PATH" "$tmp/err"
fi

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
