#!/usr/bin/env python3
"""Issue 13, frictions 3 and 9: every kerf command that prints data, in
every -o format, against golden files; prints TAP.

The cases are in tests/cli/output/*.cases (JSON: a list of objects):

  name     the golden files' stem: tests/cli/golden/NAME.{table,wide}.txt,
           NAME.json, NAME.yaml
  setup    kerf commands run first, each a list of arguments, or
           {"args": [...], "stdout": PATH} to keep its output (a snapshot
           to read)
  args     kerf's arguments; "{src}" is the source tree, "{build}" the
           folder of the kerf binary, "{tmp}" a scratch folder; -o FMT is
           appended for each format
  exit     the exit status expected (0, or 3 where something waits or an
           invariant is violated)
  kind     the kind of the JSON document; docs/schema/KIND.json validates it
  formats  the formats to run (default all four)
  alias    an option that must print exactly what -o json prints ("--json")
  env      environment variables for every run of the case ({"NAME":
           "value"}, with {src}, {build} and {tmp} expanded): the fake
           libnvidia-ml's script (KERF_FAKE_NVML_SCRIPT)
  mask     regular expressions whose matches (wall times) are replaced by
           "<masked>" before a golden comparison
  freeKeys object keys whose members are named by data (profile names),
           exempt from the camelCase check

For json: stdout is one JSON document (not one per line), apiVersion is
kerf.io/api/v1, kind as named, every key camelCase, and the schema holds.
For yaml: the same data as json.  tests/cli/output/errors.cases lists
option errors (and lookups that fail: exit 1): args, exit, and the golden
stderr NAME.stderr.txt (the source tree shown as {src}).
tests/cli/output/help lists the commands whose --help is golden
(NAME.help.txt).

KERF_GOLDEN_UPDATE=1 rewrites the golden files from what kerf prints.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

from taplib import check, finish, skip

try:
    import jsonschema
except ImportError:            # the schema checks are then reported skipped
    jsonschema = None

KERF, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
GOLDEN = os.path.join(SRC, 'tests', 'cli', 'golden')
UPDATE = os.environ.get('KERF_GOLDEN_UPDATE') == '1'
CAMEL = re.compile(r'^[a-z][a-zA-Z0-9]*$')
# Kubernetes' API conventions: an acronym inside a key is upper case
# (limitGPUHours, memoryMiB), as kerf serve's API writes them; NVML's own
# field names (pciBusId) keep NVML's spelling.
ACRONYM = re.compile(r'(?<=[a-z0-9])(Gpu|Slo|Cpu|Mib|Gib|Mig)(?![a-z])')
EXT = {'table': 'table.txt', 'wide': 'wide.txt', 'json': 'json', 'yaml': 'yaml'}

def ok(cond, what, detail=''):
    return check(what, cond, detail)


def run(args, tmp, extra=None):
    env = dict(os.environ, KERF_PROGRESS_AFTER_MS='600000', NO_COLOR='1')
    env.update(extra or {})
    env.pop('KERF_SERVER', None)
    return subprocess.run([KERF] + args, capture_output=True, text=True,
                          cwd=tmp, env=env, timeout=600)


def expand(args, tmp):
    return [a.replace('{src}', SRC).replace('{build}', os.path.dirname(KERF))
            .replace('{tmp}', tmp) for a in args]


def masked(text, masks):
    for m in masks:
        text = re.sub(m, '<masked>', text)
    return text


def golden(name, text, what):
    path = os.path.join(GOLDEN, name)
    if UPDATE:
        with open(path, 'w') as f:
            f.write(text)
    if not os.path.exists(path):
        ok(False, what + ': golden file ' + name + ' exists',
           'run with KERF_GOLDEN_UPDATE=1 to write it')
        return
    want = open(path).read()
    if text == want:
        ok(True, what + ' matches ' + name)
        return
    import difflib
    diff = ''.join(difflib.unified_diff(want.splitlines(True), text.splitlines(True),
                                        'golden/' + name, 'kerf', n=1))
    ok(False, what + ' matches ' + name, diff)


def bad_keys(v, free, path='$'):
    """Keys that are not camelCase, outside the objects named in free."""
    out = []
    if isinstance(v, dict):
        for k, x in v.items():
            if not CAMEL.match(k) or ACRONYM.search(k):
                out.append(path + '.' + k)
            if k not in free:
                out += bad_keys(x, free, path + '.' + k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += bad_keys(x, free, '%s[%d]' % (path, i))
    return out


schemas = {}


def schema(kind):
    if kind not in schemas:
        p = os.path.join(SRC, 'docs', 'schema', kind + '.json')
        schemas[kind] = json.load(open(p)) if os.path.exists(p) else None
    return schemas[kind]


def check_doc(case, doc, what):
    kind = case['kind']
    ok(isinstance(doc, dict) and doc.get('apiVersion') == 'kerf.io/api/v1' and
       doc.get('kind') == kind, what + ': apiVersion kerf.io/api/v1, kind ' + kind,
       repr({k: doc.get(k) for k in ('apiVersion', 'kind')} if isinstance(doc, dict) else doc)[:200])
    bad = bad_keys(doc, set(case.get('freeKeys', [])))
    ok(not bad, what + ': every key camelCase, acronyms upper case', ', '.join(bad[:10]))
    s = schema(kind)
    if s is None:
        ok(False, what + ': docs/schema/%s.json exists' % kind)
    elif jsonschema is None:
        skip(what + ': valid against docs/schema/%s.json' % kind, 'python3-jsonschema missing')
    else:
        try:
            jsonschema.validate(doc, s, cls=jsonschema.Draft202012Validator)
            ok(True, what + ': valid against docs/schema/%s.json' % kind)
        except jsonschema.ValidationError as e:
            ok(False, what + ': valid against docs/schema/%s.json' % kind,
               '%s at %s' % (e.message[:300], '/'.join(str(p) for p in e.absolute_path)))


def data_case(case, tmp):
    name, masks = case['name'], case.get('mask', [])
    fmts = case.get('formats', ['table', 'wide', 'json', 'yaml'])
    docs = {}
    extra = {k: expand([v], tmp)[0] for k, v in case.get('env', {}).items()}
    for step in case.get('setup', []):
        args = step['args'] if isinstance(step, dict) else step
        r = run(expand(args, tmp), tmp, extra)
        ok(r.returncode == 0, 'kerf %s: exit 0 (setup)' % ' '.join(args), r.stderr[-400:])
        if isinstance(step, dict) and 'stdout' in step:
            with open(expand([step['stdout']], tmp)[0], 'w') as f:
                f.write(r.stdout)
    for fmt in fmts:
        what = 'kerf %s -o %s' % (' '.join(case['args']), fmt)
        r = run(expand(case['args'], tmp) + ['-o', fmt], tmp, extra)
        ok(r.returncode == case['exit'], what + ': exit %d' % case['exit'],
           'exit %d; stderr: %s' % (r.returncode, r.stderr[-800:]))
        golden('%s.%s' % (name, EXT[fmt]), masked(r.stdout, masks), what)
        if fmt == 'json':
            try:
                docs['json'] = json.loads(r.stdout)
                ok(True, what + ': one JSON document')
            except ValueError as e:
                ok(False, what + ': one JSON document', e)
                continue
            check_doc(case, docs['json'], what)
        elif fmt == 'yaml':
            try:
                docs['yaml'] = yaml.safe_load(r.stdout)
                ok(True, what + ': one YAML document')
            except yaml.YAMLError as e:
                ok(False, what + ': one YAML document', e)
    if 'json' in docs and 'yaml' in docs:
        # masked fields (wall times) may differ between the two runs
        j = masked(json.dumps(docs['json'], sort_keys=True), case.get('jsonMask', []))
        y = masked(json.dumps(docs['yaml'], sort_keys=True), case.get('jsonMask', []))
        ok(j == y, 'kerf %s: -o yaml holds the same data as -o json' % ' '.join(case['args']))
    if case.get('alias'):
        what = 'kerf %s %s' % (' '.join(case['args']), case['alias'])
        r = run(expand(case['args'], tmp) + [case['alias']], tmp, extra)
        j = run(expand(case['args'], tmp) + ['-o', 'json'], tmp, extra)
        ok(r.returncode == case['exit'] and
           masked(r.stdout, masks) == masked(j.stdout, masks),
           what + ' prints what -o json prints')


def error_case(case, tmp):
    what = 'kerf %s' % ' '.join(case['args'])
    r = run(expand(case['args'], tmp), tmp)
    ok(r.returncode == case['exit'], what + ': exit %d' % case['exit'],
       'exit %d; stderr: %s' % (r.returncode, r.stderr[-400:]))
    ok(r.stdout == '', what + ': nothing on stdout', r.stdout[:400])
    golden(case['name'] + '.stderr.txt', r.stderr.replace(KERF, 'kerf').replace(SRC, '{src}'),
           what + ': stderr')


def help_cases():
    p = os.path.join(SRC, 'tests', 'cli', 'output', 'help')
    for line in open(p):
        line = line.split('#')[0].strip()
        if line:
            yield line


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(glob.glob(os.path.join(SRC, 'tests', 'cli', 'output', '*.cases'))):
            for case in json.load(open(path)):
                if os.path.basename(path) == 'errors.cases':
                    error_case(case, tmp)
                else:
                    data_case(case, tmp)
        for cmd in help_cases():
            r = run(cmd.split() + ['--help'], tmp)
            ok(r.returncode == 0 and r.stderr == '', 'kerf %s --help: exit 0, nothing on stderr' % cmd)
            golden(cmd.replace(' ', '-') + '.help.txt', r.stdout, 'kerf %s --help' % cmd)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
