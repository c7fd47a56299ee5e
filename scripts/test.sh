#!/usr/bin/env bash
# The whole test suite, under AddressSanitizer + UndefinedBehaviorSanitizer:
# unit tests, property tests, golden tests on the openb trace (skipped when
# ../shared/data/openb is absent) and the fuzz corpus replay.  The last line
# is "N passed, N failed"; the exit status is non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=build-asan
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" --buildtype=debugoptimized \
		-Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fno-sanitize-recover=all >/dev/null
fi
ninja -C "$dir"

status=0
meson test -C "$dir" --print-errorlogs --num-processes 2 \
	--timeout-multiplier 4 || status=$?

python3 - "$dir/meson-logs/testlog.json" "$status" <<'PY'
import json, re, sys

passed = failed = skipped = 0
for line in open(sys.argv[1]):
    t = json.loads(line)
    result = t.get("result", "")
    cases = re.findall(r"^(not ok|ok)\b(.*)$", t.get("stdout", ""), re.M)
    if result == "SKIP":
        skipped += 1
        continue
    if cases:
        for verdict, rest in cases:
            if "# SKIP" in rest:
                skipped += 1
            elif verdict == "ok":
                passed += 1
            else:
                failed += 1
        # a crash after some cases passed still fails the binary
        if result not in ("OK", "EXPECTEDFAIL") and all(v == "ok" for v, _ in cases):
            failed += 1
    elif result in ("OK", "EXPECTEDFAIL"):
        passed += 1
    else:
        failed += 1
if skipped:
    print("%d skipped" % skipped)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed or int(sys.argv[2]) else 0)
PY
