#!/usr/bin/env python3
"""
test_explain_snapshot: `kerf explain --snapshot` on every pending workload
of the scenario files (issue 13).  For each scenario under tests/sim/,
examples/scenario/ and tests/cli/sim_run/ and tests/cli/explain/, prints
TAP:

- `kerf sim snapshot FILE --at end` writes a snapshot whose "explanations"
  holds exactly the workloads `kerf sim run FILE --json` lists pending;
- for each, its explanation (what `kerf explain TENANT/NAME --snapshot
  -o json` prints: the CLI is run on up to SAMPLE of them per scenario,
  spread over the queue, and must print exactly the snapshot's entry;
  fair_share leaves thousands pending) has the code
  and the sentence `kerf sim run` prints for it, at least one blocking
  layer, each blocking layer with a specific message (not empty, not
  "unknown") and what would unblock it, and the layer the code names
  among the blocking ones (BudgetExhausted: budget, QuotaExceeded: quota,
  ClassNotAllowed: class, WaitingForPreemption: preemption,
  InsufficientCapacity and NeverFits: capacity, and topology when the
  sentence names the topology, isolation when it names sharing);
- where the core's sentence lists why nodes cannot take the pod, the
  capacity layer lists the same;
- hand-checked cases: the budget-blocked jobs of demo-day show the budget
  layer and when it resets, nvlink-split shows topology, quota-blocked the
  GPUs missing in quota, mig-geometry the MIG instances in the way;
- the table output of kerf explain shows the same layers;
- every snapshot is valid against docs/schema/Snapshot.json (skipped
  without python3-jsonschema).

Usage: test_explain_snapshot.py KERF SOURCE_ROOT
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

from taplib import check, finish

try:
    import jsonschema
except ImportError:            # the schema checks are then left out
    jsonschema = None

KERF, ROOT = sys.argv[1], sys.argv[2]
SAMPLE = 12


def ok(cond, what):
    return check(what, cond)


def run(*args):
    p = subprocess.run([KERF] + list(args), capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


CODE_LAYER = {
    'BudgetExhausted': 'budget',
    'QuotaExceeded': 'quota',
    'ClassNotAllowed': 'class',
    'WaitingForPreemption': 'preemption',
    'InsufficientCapacity': 'capacity',
    'NeverFits': 'capacity',
}


def check_one(name, pend, ex):
    """The explanation ex of the pending workload pend (from sim run)."""
    code, sentence = pend['code'], pend['reason']
    good = ex.get('kind') == 'Explanation' and ex.get('reason') == code
    good &= (ex.get('message') or code) == sentence
    blocking = [l for l in ex.get('layers', []) if l.get('blocking')]
    good &= len(blocking) >= 1
    for l in blocking:
        msg = (l.get('message') or '').strip()
        good &= bool(msg) and 'unknown' not in msg.lower()
        good &= bool((l.get('unblock') or '').strip())
    names = {l['layer'] for l in blocking}
    want = {CODE_LAYER.get(code, '?')}
    # a constraint the sentence names has its layer: blocking when it is
    # what holds the workload, else shown (a gang that needs one NVLink
    # domain but finds no free capacity anywhere is held by capacity)
    shown = {l['layer'] for l in ex.get('layers', [])}
    named = set()
    if 'NVLink domain' in sentence or 'on one node' in sentence and 'no node has room' in sentence:
        named.add('topology')
    if 'shared again' in sentence or 'shared against' in sentence:
        named.add('isolation')
    if 'nodes are available: 0/' not in sentence and 'not enough free now' not in sentence:
        want |= named
    good &= want <= names and named <= shown
    if 'nodes are available: ' in sentence:
        why = sentence.split('nodes are available: ', 1)[1].split(';')[0]
        cap = [l for l in blocking if l['layer'] == 'capacity']
        # the core's "N reason" items appear in the layer's own count
        items = [w.strip() for w in why.split(',') if w.strip()]
        good &= bool(cap) and all(
            i.split(' ', 1)[1].split(' again')[0] in cap[0]['message'] for i in items)
    if not good:
        print('# %s %s: %s / %s' % (name, pend['tenant'] + '/' + pend['name'],
                                    json.dumps(ex.get('message')), json.dumps(blocking)[:600]))
    return good


scenarios = sorted(glob.glob(os.path.join(ROOT, 'tests/sim/*.yaml')) +
                   glob.glob(os.path.join(ROOT, 'examples/scenario/*.yaml')) +
                   glob.glob(os.path.join(ROOT, 'tests/cli/sim_run/*.yaml')) +
                   glob.glob(os.path.join(ROOT, 'tests/cli/explain/*.yaml')))
ok(len(scenarios) >= 10, 'found %d scenarios' % len(scenarios))
total = 0
tmpdir = tempfile.TemporaryDirectory()
tmp = tmpdir.name
snaps = {}
with open(os.path.join(ROOT, 'docs', 'schema', 'Snapshot.json')) as fh:
    SCHEMA = json.load(fh)
for f in scenarios:
    name = os.path.relpath(f, ROOT)
    snap = os.path.join(tmp, os.path.basename(f) + '.json')
    snaps[name] = snap
    rc, out, err = run('sim', 'run', f, '--json')
    pending = json.loads(out).get('pending', []) if rc in (0, 3) else None
    rc2, _, err2 = run('sim', 'snapshot', f, '--at', 'end', '--out', snap)
    if not ok(pending is not None and rc2 == 0, '%s: sim run and sim snapshot --at end' % name):
        print('# ' + (err + err2).replace('\n', '\n# '))
        continue
    with open(snap) as fh:
        s = json.load(fh)
    if jsonschema:
        try:
            jsonschema.validate(s, SCHEMA, cls=jsonschema.Draft202012Validator)
            ok(True, '%s: the snapshot is valid against docs/schema/Snapshot.json' % name)
        except jsonschema.ValidationError as e:
            ok(False, '%s: the snapshot is valid against docs/schema/Snapshot.json' % name)
            print('# %s at %s' % (e.message[:300], '/'.join(str(x) for x in e.absolute_path)))
    # an array named by each workload.key (TENANT/NAME), not keyed by data
    explained = {e['workload']['key']: e for e in s['explanations']}
    keys = sorted(p['tenant'] + '/' + p['name'] for p in pending)
    ok(sorted(explained) == keys and len(s['explanations']) == len(keys) and len(s['queue']['items']) == len(keys),
       '%s: the snapshot explains exactly the %d pending workloads' % (name, len(keys)))
    good = True
    for p in pending:
        key = p['tenant'] + '/' + p['name']
        good &= key in explained and check_one(name, p, explained[key])
        total += 1
    ok(good, '%s: each of %d pending workloads has a specific blocking layer that agrees with sim run' % (name, len(pending)))
    step = max(1, len(pending) // SAMPLE)
    same = True
    for p in pending[::step][:SAMPLE] + pending[-1:]:
        key = p['tenant'] + '/' + p['name']
        rc, out, err = run('explain', key, '--snapshot', snap, '-o', 'json')
        same &= rc == 0 and json.loads(out) == explained.get(key)
        if rc:
            print('# %s: %s' % (key, err.strip()))
    if pending:
        ok(same, '%s: kerf explain --snapshot prints the snapshot\'s explanation (%d of them run)' %
           (name, len(pending[::step][:SAMPLE] + pending[-1:])))
ok(total >= 50, '%d pending workloads explained in all' % total)


def explain(scenario, key, *more):
    return run('explain', key, '--snapshot', snaps[scenario], *more)


def layer(scenario, key, name):
    rc, out, _ = explain(scenario, key, '-o', 'json')
    if rc:
        return {}
    return next((l for l in json.loads(out)['layers'] if l['layer'] == name), {})


b = layer('examples/scenario/demo-day.yaml', 'team-a/train-12', 'budget')
ok(b.get('blocking') and "tenant 'research' spent its GPU-hour budget" in b['message'] and
   'resets at' in b.get('unblock', ''), 'demo-day: team-a/train-12 is held by the budget of research, resetting at a time')
t = layer('tests/cli/sim_run/nvlink-split.yaml', 'lab/gang-0', 'topology')
ok(t.get('blocking') and 'NVLink domain' in t['message'] and 'one NVLink domain' in t.get('unblock', ''),
   'nvlink-split: lab/gang-0 is blocked by topology (one NVLink domain)')
q = layer('tests/cli/explain/quota-blocked.yaml', 'lab/more-0', 'quota')
ok(q.get('blocking') and q.get('unblock', '').startswith('needs 2 more GPUs of flavor H100-80GB in quota') and
   "may use up to 4 (nominal 2, borrowing up to 2 more) and uses 4" in q['unblock'],
   'quota-blocked: lab/more-0 needs 2 more GPUs of flavor H100-80GB in quota')
c = layer('tests/cli/explain/mig-geometry.yaml', 'lab/big-0', 'capacity')
ok(c.get('blocking') and 'MIG instances in use leave no room' in c['message'],
   'mig-geometry: lab/big-0 is blocked by capacity (MIG instances in use leave no room)')
rc, out, _ = explain('tests/cli/explain/quota-blocked.yaml', 'lab/more-0')
ok(rc == 0 and 'QuotaExceeded' in out and 'WOULD UNBLOCK IT' in out and
   'quota   needs 2 more GPUs' in out, 'kerf explain --snapshot prints the layers and what would unblock them as tables')
rc, out, err = explain('tests/cli/explain/quota-blocked.yaml', 'lab/run-0')
ok(rc == 1 and "'lab/run-0' is not pending in snapshot" in err and not out,
   'a workload not pending in the snapshot is refused, naming it')
tmpdir.cleanup()
sys.exit(finish())
