#!/usr/bin/env bash
# Load benchmark of the admission webhook's HTTPS server (docs/admission.md,
# "Server"): h2load (Debian's nghttp2-client) over TLS with HTTP/1.1 and
# keep-alive, 200 connections, POSTing a real pod-create AdmissionReview
# (bench/admission_pod_create.json, the body a kube-apiserver 1.34.9 sent)
# to bench_webhook_server, which answers with kerf's rules
# (admission/decide.h) under the policy of bench/admission_objects.yaml,
# as kerf serve does: /mutate/pods (the pod patched) and /validate/pods.
#
#   1. fixed rate: 2,000 reviews/s (--rps 10 per connection, the
#      connections' timers spread over the period) for DURATION seconds
#      after 2 s of start; every request's latency from h2load's
#      --log-file gives p50, p99, p99.9 and the errors;
#   2. saturation: the same connections as fast as they go, for
#      SAT_DURATION seconds: the throughput.
#
# One summary line per run.  Usage:
#   bash bench/webhook_load.sh [BUILD_DIR]   (default build)
# Environment: DURATION (30), SAT_DURATION (15), CONNS (200), RPS (10,
# per connection), THREADS (the server's, 2), PORT (18443), ROUTES
# ("/mutate/pods /validate/pods"; "/validate" is the policy-free handler:
# decode and encode only).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
duration=${DURATION:-30}
sat_duration=${SAT_DURATION:-15}
conns=${CONNS:-200}
rps=${RPS:-10}
threads=${THREADS:-2}
port=${PORT:-18443}
routes=${ROUTES:-/mutate/pods /validate/pods}
objects=$root/bench/admission_objects.yaml
server=$build/bench/bench_webhook_server
body=$root/bench/admission_pod_create.json

command -v h2load >/dev/null || {
	echo "webhook_load: h2load is missing (apt-get install nghttp2-client)" >&2
	exit 1
}
[ -x "$server" ] || {
	echo "webhook_load: $server is not built (ninja -C $build)" >&2
	exit 1
}
tmp=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
sh "$root/tests/unit/webhook_certs.sh" "$tmp"
ulimit -n 4096 2>/dev/null || true
"$server" --cert "$tmp/a.crt" --key "$tmp/a.key" --addr "127.0.0.1:$port" \
	--threads "$threads" --objects "$objects" > "$tmp/metrics.txt" 2> "$tmp/server.log" &
pid=$!
for _ in $(seq 100); do
	grep -q listening "$tmp/server.log" 2>/dev/null && break
	sleep 0.1
done

# One line from h2load's --log-file (start in microseconds since the epoch,
# status, microseconds to the end of the response), skipping the requests
# that started in the first WARM seconds (connections and handshakes), and
# the failures h2load counted ("requests: N total, ..., N failed, N errored").
summary() { # NAME LOGFILE H2LOAD_OUTPUT WARM
	local name=$1 log=$2 out=$3 warm=$4 fails
	fails=$(awk '/^requests:/ { print $10 + $12 }' "$out")
	sort -n -k1,1 "$log" | awk -F'\t' -v warm="$warm" '
		NR == 1 { t0 = $1 }
		$1 >= t0 + warm * 1e6 { print }' > "$tmp/kept"
	cut -f3 "$tmp/kept" | sort -n > "$tmp/lat"
	awk -F'\t' -v name="$name" -v fails="$fails" -v conns="$conns" \
		-v lat="$tmp/lat" '
		NR == 1 { first = $1 }
		{ n++; last = $1; if ($2 != 200) bad++ }
		END {
			while ((getline v < lat) > 0) l[++k] = v
			if (!k) { print "webhook_load " name ": no requests"; exit 1 }
			p50 = l[int(k * 0.50) > 0 ? int(k * 0.50) : 1]
			p99 = l[int(k * 0.99) > 0 ? int(k * 0.99) : 1]
			p999 = l[int(k * 0.999) > 0 ? int(k * 0.999) : 1]
			secs = (last - first) / 1e6
			printf "webhook_load %s: %d requests over %d TLS keep-alive connections, %.0f req/s, p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms, errors %d\n", \
				name, n, conns, (secs > 0 ? n / secs : 0), p50 / 1000, \
				p99 / 1000, p999 / 1000, l[k] / 1000, bad + fails
		}' "$tmp/kept"
}

for route in $routes; do
url="https://127.0.0.1:$port$route?timeout=10s"
rm -f "$tmp/fixed.tsv" "$tmp/sat.tsv"

# 1. Fixed rate.  Each connection sends rps requests a second; the
# connections open 2 per millisecond (-r 2 --rate-period 1ms), so their
# timers are spread over the period instead of firing together (with -D
# they all start at once, and 2,000/s arrives as 10 bursts of 200).  -r
# excludes -D, so the run is -n requests: DURATION seconds measured after
# 2 s of start.
h2load --h1 -c "$conns" --rps "$rps" -r 2 --rate-period 1ms \
	-n $((conns * rps * (duration + 2))) -d "$body" \
	-H 'Content-Type: application/json' --log-file "$tmp/fixed.tsv" \
	"$url" > "$tmp/fixed.out" 2>&1 || { cat "$tmp/fixed.out" >&2; exit 1; }
summary "$route fixed $((conns * rps))/s" "$tmp/fixed.tsv" "$tmp/fixed.out" 2

# 2. Saturation: as fast as the connections go.
h2load --h1 -c "$conns" -D "$sat_duration" --warm-up-time 2 -d "$body" \
	-H 'Content-Type: application/json' --log-file "$tmp/sat.tsv" \
	"$url" > "$tmp/sat.out" 2>&1 || { cat "$tmp/sat.out" >&2; exit 1; }
summary "$route saturation" "$tmp/sat.tsv" "$tmp/sat.out" 0
done

kill "$pid"
wait "$pid" || true
pid=
grep -E '^kerf_webhook_(http_errors_total|late_total)' "$tmp/metrics.txt" || true
