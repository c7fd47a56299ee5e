#!/usr/bin/env python3
"""Issue 13, friction 9: no command writes a duration or a percentage by
hand.  Every printf-style format in the sources of the CLI, the simulator's
printers, the reports and the views is scanned for the ad-hoc forms the
friction found ("p99 wait %.0f s", "%8.0fs" giving "85543s", "%" PRId64
"s", "213 % used"); each must go through src/base/units.c instead
(docs/output.md, "Units in tables").  Prints TAP: one line per file.
"""
import glob
import os
import re
import sys

from taplib import check, finish, read

SRC = sys.argv[1]
FLAGS = r'%[-+ #0-9.*]*'
RULES = [
    (re.compile(FLAGS + r'(?:l|ll|z|j|h)?[diufg] ?s\b'), 'a number followed by "s" or " s" (use kerf_units_duration / kerf_units_elapsed)'),
    (re.compile(r'PRI[diu](?:64|32)\s*" ?s\b'), 'a number followed by "s" (use kerf_units_duration)'),
    (re.compile(r' %%'), 'a space before "%" (use kerf_units_percent: "33.0%")'),
    (re.compile(r'"[^"]*%% used'), '"% used" for a budget (it is "spent")'),
]
FILES = sorted(glob.glob(os.path.join(SRC, 'src', 'cmd', '*.c')) +
               glob.glob(os.path.join(SRC, 'src', 'sim', '*.c')) +
               glob.glob(os.path.join(SRC, 'src', 'report', '*.c')) +
               glob.glob(os.path.join(SRC, 'src', 'view', '*.c')) +
               glob.glob(os.path.join(SRC, 'src', 'serve', 'api_*.c')))

for path in FILES:
    bad = []
    for i, line in enumerate(read(path).split('\n'), 1):
        code = line.split('//')[0]
        if code.lstrip().startswith('*') or code.lstrip().startswith('/*'):
            continue            # a comment
        for rule, why in RULES:
            if rule.search(code):
                bad.append('%d: %s: %s' % (i, why, line.strip()[:100]))
    check('%s writes units through base/units' % os.path.relpath(path, SRC),
          not bad, '\n'.join(bad))
# the rules catch what they were written for
probes = ['"p99 wait %.0f s"', '"%8.0fs"', '"%" PRId64 "s"', '"%.1f %%"', '"budget %d%% used"']
for p in probes:
    check('the rules refuse %s' % p, any(r.search(p) for r, _ in RULES))
for p in ['"%.1f%%"', '"%u GPUs"', '"%zu seeds"', '"%s elapsed"']:
    check('the rules let %s be' % p, not any(r.search(p) for r, _ in RULES))
sys.exit(finish())
