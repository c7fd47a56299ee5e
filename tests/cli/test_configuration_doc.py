#!/usr/bin/env python3
"""docs/configuration.md against the code: everything configurable that
the code reads is documented, and nothing documented is missing from the
code.

  - command-line options: every getopt_long table of src/cmd/*.c and
    src/cmd/*.h; each file is named in the heading of the section that
    documents its options (`src/cmd/serve.c`), and that section documents
    exactly those options (as `--name` in the first column of its table);
  - kerf.io/ names: every `kerf.io/...` in a C string literal under src/
    is documented in the section "Labels, annotations, taints and
    conditions"; each one documented there is in src/ or in deploy/;
  - CRD fields: every field of spec and status of each CRD in deploy/crds/
    is documented (as `spec.a.b`, `status.c[].d`) in the section of its
    kind; each documented one exists;
  - scenario keys: each key table of src/sim/scenario_parse.c
    (`tenant_keys`, ...) is named in the heading of the section that
    documents its keys, exactly those.

usage: test_configuration_doc.py SOURCE_ROOT        prints TAP
"""
import glob
import os
import re
import sys

from taplib import check, finish, read

SRC = sys.argv[1] if len(sys.argv) > 1 else '.'
DOC = os.path.join(SRC, 'docs', 'configuration.md')



def strip_c_comments(s):
    return re.sub(r'/\*.*?\*/|//[^\n]*', ' ', s, flags=re.S)


doc = read(DOC)


def sections(text):
    """(heading, body) for every heading of the document, at any level;
    a body runs to the next heading of the same or a higher level."""
    heads = [(m.start(), len(m.group(1)), m.group(2)) for m in
             re.finditer(r'^(#{1,6}) (.*)$', text, re.M)]
    out = []
    for i, (pos, level, title) in enumerate(heads):
        end = len(text)
        for pos2, level2, _ in heads[i + 1:]:
            if level2 <= level:
                end = pos2
                break
        out.append((title, text[pos:end]))
    return out


SECTIONS = sections(doc)


def first_cells(body):
    """The backquoted names of the first column of the body's tables."""
    names = set()
    for line in body.split('\n'):
        if line.startswith('|') and not re.match(r'^\|\s*-', line):
            cell = line.split('|')[1]
            names.update(re.findall(r'`([^`]+)`', cell))
    return names


# ---- command-line options -----------------------------------------------
OPT = re.compile(r'\{\s*"([a-z0-9][a-z0-9-]*)"\s*,\s*(?:no|required|optional)_argument')
files = sorted(glob.glob(os.path.join(SRC, 'src', 'cmd', '*.c')) +
               glob.glob(os.path.join(SRC, 'src', 'cmd', '*.h')))
tables = {}
for f in files:
    opts = set(OPT.findall(strip_c_comments(read(f)))) - {'help'}
    if opts:
        tables['src/cmd/' + os.path.basename(f)] = opts
check('getopt tables found in src/cmd', len(tables) >= 10, sorted(tables))
for rel, opts in sorted(tables.items()):
    secs = [b for t, b in SECTIONS if '`%s`' % rel in t]
    if not secs:
        check('%s: a section of configuration.md names it in its heading' % rel, False,
              'options: ' + ' '.join('--' + o for o in sorted(opts)))
        continue
    body = secs[0]
    documented = {c[2:].split()[0].split('=')[0] for c in first_cells(body) if c.startswith('--')}
    # a section may name several files: it documents their union
    union = set()
    for other, o in tables.items():
        if any('`%s`' % other in t for t, b in SECTIONS if b == body):
            union |= o
    check('%s: every option documented' % rel, opts <= documented,
          'missing: ' + ' '.join('--' + o for o in sorted(opts - documented)))
    check('%s: its section documents no option the code lacks' % rel, documented <= union,
          'not in the code: ' + ' '.join('--' + o for o in sorted(documented - union)))

# ---- kerf.io/ names ------------------------------------------------------
LIT = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
NAME = re.compile(r'(?<![/\w.])kerf\.io/[A-Za-z][A-Za-z0-9._/-]*[A-Za-z0-9]')
in_src = set()
for f in glob.glob(os.path.join(SRC, 'src', '**', '*.[ch]'), recursive=True):
    for lit in LIT.findall(strip_c_comments(read(f))):
        in_src.update(NAME.findall(lit))
in_deploy = set()
for f in glob.glob(os.path.join(SRC, 'deploy', '**', '*.yaml'), recursive=True):
    in_deploy.update(NAME.findall(read(f)))
check('kerf.io/ names found in src', len(in_src) >= 20, sorted(in_src))
secs = [b for t, b in SECTIONS if t.startswith('Labels, annotations, taints and conditions')]
check('configuration.md: the section "Labels, annotations, taints and conditions"', bool(secs))
documented = set()
for c in first_cells(secs[0] if secs else ''):
    documented.update(NAME.findall(c))
missing = sorted(in_src - documented)
check('every kerf.io/ name in src/ is documented', not missing, '\n'.join(missing))
extra = sorted(documented - in_src - in_deploy)
check('every kerf.io/ name documented is in src/ or deploy/', not extra, '\n'.join(extra))

# ---- CRD fields ----------------------------------------------------------
try:
    import yaml
except ImportError:
    yaml = None
if yaml is None:
    check('CRD fields # SKIP python3-yaml missing', True)
else:
    def fields(node, path, out):
        if not isinstance(node, dict):
            return
        for k, c in (node.get('properties') or {}).items():
            p = path + ('.' if path else '') + k
            out.add(p)
            fields(c, p, out)
        if isinstance(node.get('items'), dict):
            items = node['items']
            if items.get('properties'):
                fields(items, path + '[]', out)
    for f in sorted(glob.glob(os.path.join(SRC, 'deploy', 'crds', '*.yaml'))):
        crd = yaml.safe_load(read(f))
        kind = crd['spec']['names']['kind']
        want = set()
        for v in crd['spec']['versions']:
            s = v['schema']['openAPIV3Schema']['properties']
            for top in ('spec', 'status'):
                fields(s.get(top, {}), top, want)
        secs = [b for t, b in SECTIONS if t.startswith('%s (' % kind)]
        check('configuration.md: a section for the %s CRD' % kind, bool(secs))
        got = {c for c in first_cells(secs[0] if secs else '') if re.match(r'^(spec|status)\b', c)}
        check('%s: every field of spec and status documented' % kind, want <= got,
              'missing: ' + ' '.join(sorted(want - got)))
        check('%s: no field documented that the CRD lacks' % kind, got <= want,
              'not in the CRD: ' + ' '.join(sorted(got - want)))

# ---- scenario keys -------------------------------------------------------
parse = strip_c_comments(read(os.path.join(SRC, 'src', 'sim', 'scenario_parse.c')))
key_tables = {}
for m in re.finditer(r'static const char \*const (\w+_keys)\[\w*\] = \{(.*?)\};', parse, re.S):
    key_tables[m.group(1)] = set(re.findall(r'"([a-z_0-9]+)"', m.group(2)))
for m in re.finditer(r'static const char \*const (keys)\[\] = \{(.*?)\};', parse, re.S):
    key_tables['cluster_keys'] = set(re.findall(r'"([a-z_0-9]+)"', m.group(2)))
check('scenario key tables found', len(key_tables) >= 8, sorted(key_tables))
for name, keys in sorted(key_tables.items()):
    secs = [b for t, b in SECTIONS if '`%s`' % name in t]
    got = first_cells(secs[0]) if secs else set()
    got = {g.split()[0] for g in got}
    check('scenario %s: a section names it' % name, bool(secs))
    check('scenario %s: every key documented' % name, keys <= got,
          'missing: ' + ' '.join(sorted(keys - got)))
    check('scenario %s: no key documented that the reader lacks' % name, got <= keys,
          'not read: ' + ' '.join(sorted(got - keys)))

sys.exit(finish())
