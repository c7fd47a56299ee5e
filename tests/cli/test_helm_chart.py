#!/usr/bin/env python3
"""The Helm chart deploy/helm/kerf/, checked the way `helm lint` would and
against the kustomize manifests of deploy/.  Helm is not a Debian package,
so it is not run: templates are rendered by tests/cli/helm_render.py, a
renderer for the subset of Go template syntax the chart uses.

  - Chart.yaml: apiVersion v2, name, semver version, appVersion, type;
  - values.yaml: every key documented by a comment line above it; every
    .Values path a template uses is in it; every value is used;
  - values.schema.json validates values.yaml and refuses a wrong type or
    an unknown key;
  - every template's delimiters balance and each if/range/define ends;
  - with the default values the rendered objects are the objects of
    `kubectl apply -k deploy/` (kustomize's labels and image tag applied),
    field for field (name, kind, namespace, RBAC rules, images, args, ...),
    except Helm's own two labels;
  - crds/ holds the CRDs of deploy/crds/, byte for byte;
  - other values switch what they should (agent off, webhook off, the
    Secret made from values, extra args, another image).

usage: test_helm_chart.py SOURCE_ROOT        prints TAP
"""
import copy
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import yaml
    import jsonschema
except ImportError as e:  # install-deps.sh installs both
    print('1..0 # SKIP python3-yaml or python3-jsonschema missing (%s)' % e)
    sys.exit(0)

import helm_render  # noqa: E402

SRC = sys.argv[1] if len(sys.argv) > 1 else '.'
CHART = os.path.join(SRC, 'deploy', 'helm', 'kerf')
DEPLOY = os.path.join(SRC, 'deploy')
HELM_LABELS = ('app.kubernetes.io/managed-by', 'helm.sh/chart')

n = 0
failed = 0


def check(name, ok, detail=''):
    global n, failed
    n += 1
    if ok:
        print('ok %d - %s' % (n, name))
    else:
        failed += 1
        print('not ok %d - %s' % (n, name))
        for line in str(detail).splitlines()[:30]:
            print('#   ' + line)


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


# ---- Chart.yaml ---------------------------------------------------------
SEMVER = re.compile(r'^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)'
                    r'(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$')
chart = yaml.safe_load(read(os.path.join(CHART, 'Chart.yaml')))
check('Chart.yaml: apiVersion v2', chart.get('apiVersion') == 'v2', chart.get('apiVersion'))
check('Chart.yaml: name kerf, the directory name', chart.get('name') == 'kerf' and
      os.path.basename(CHART) == 'kerf', chart.get('name'))
check('Chart.yaml: version is semver 2', isinstance(chart.get('version'), str) and
      bool(SEMVER.match(chart['version'])), chart.get('version'))
check('Chart.yaml: appVersion is a string', isinstance(chart.get('appVersion'), str) and
      chart['appVersion'] != '', chart.get('appVersion'))
check('Chart.yaml: type application, a description', chart.get('type') == 'application' and
      bool(chart.get('description')))
project = re.search(r"version\s*:\s*'([^']+)'", read(os.path.join(SRC, 'meson.build')))
check('Chart.yaml: appVersion is the project version of meson.build',
      project is not None and chart.get('appVersion') == project.group(1),
      '%s vs %s' % (chart.get('appVersion'), project and project.group(1)))

# ---- values.yaml and its comments ---------------------------------------
values_text = read(os.path.join(CHART, 'values.yaml'))
values = yaml.safe_load(values_text)
undocumented = []
lines = values_text.split('\n')
stack = []         # (indent, key) of the keys above this line
for i, line in enumerate(lines):
    m = re.match(r'^(\s*)([A-Za-z][A-Za-z0-9_./-]*):', line)
    if not m:
        continue
    while stack and stack[-1][0] >= len(m.group(1)):
        stack.pop()
    inside_data = any(k in ('resources', 'nodeSelector') for _, k in stack)
    stack.append((len(m.group(1)), m.group(2)))
    if inside_data:    # the keys of a map given whole to toYaml are data
        continue
    above = lines[i - 1].strip() if i > 0 else ''
    if not above.startswith('#') and '#' not in line.split(':', 1)[1]:
        undocumented.append('%d: %s' % (i + 1, line.strip()))
check('values.yaml: every key has a comment above it', not undocumented, '\n'.join(undocumented))


def leaves(v, path=''):
    """Paths of values a template may read whole: scalars, lists, and the
    maps given to toYaml (resources, nodeSelector)."""
    if isinstance(v, dict) and v and path.rsplit('.', 1)[-1] not in ('resources', 'nodeSelector'):
        for k, x in v.items():
            yield from leaves(x, path + '.' + k)
    else:
        yield path


def lookup(v, path):
    for k in path.strip('.').split('.'):
        if not isinstance(v, dict) or k not in v:
            return False, None
        v = v[k]
    return True, v


# ---- values.schema.json -------------------------------------------------
schema = json.loads(read(os.path.join(CHART, 'values.schema.json')))
try:
    jsonschema.validate(values, schema)
    err = None
except jsonschema.ValidationError as e:
    err = e.message
check('values.schema.json validates values.yaml', err is None, err)
for what, change in (
        ('serve.replicas "two"', lambda v: v['serve'].__setitem__('replicas', 'two')),
        ('an unknown key serve.replica', lambda v: v['serve'].__setitem__('replica', 2)),
        ('serve.policy bogus', lambda v: v['serve'].__setitem__('policy', 'bogus')),
        ('webhook.caBundle not base64', lambda v: v['webhook'].__setitem__('caBundle', 'not base64!')),
        ('agent.nvidiaLibDir relative', lambda v: v['agent'].__setitem__('nvidiaLibDir', 'lib'))):
    bad = copy.deepcopy(values)
    change(bad)
    try:
        jsonschema.validate(bad, schema)
        refused = False
    except jsonschema.ValidationError:
        refused = True
    check('values.schema.json refuses %s' % what, refused)

# ---- templates: delimiters, structure, .Values paths --------------------
tdir = os.path.join(CHART, 'templates')
tfiles = sorted(f for f in os.listdir(tdir) if not f.startswith('.'))
sources = {f: read(os.path.join(tdir, f)) for f in tfiles}
used = set()
for f, s in sources.items():
    try:
        helm_render.Renderer({}).load(f, s)
        perr = None
    except helm_render.TemplateError as e:
        perr = str(e)
    check('templates/%s: delimiters balance, every block ends' % f,
          perr is None and s.count('{{') == s.count('}}'), perr)
    used.update(re.findall(r'\.Values((?:\.[A-Za-z0-9_]+)+)', s))
missing = sorted(p for p in used if not lookup(values, p)[0])
check('every .Values path of the templates is in values.yaml', not missing, '\n'.join(missing))
unused = sorted(p for p in leaves(values) if not any(p == u or p.startswith(u + '.') for u in used))
check('every value of values.yaml is used by a template', not unused, '\n'.join(unused))


def render(vals):
    r = helm_render.Renderer({
        'Values': vals,
        'Chart': {'Name': chart['name'], 'Version': chart['version'],
                  'AppVersion': chart['appVersion']},
        'Release': {'Name': 'kerf', 'Namespace': 'default', 'Service': 'Helm'},
    })
    trees = {f: r.load(f, s) for f, s in sources.items()}
    objs, notes = [], None
    for f, t in trees.items():
        text = r.render(t)
        if f == 'NOTES.txt':
            notes = text
            continue
        if not f.endswith('.yaml'):
            continue
        for doc in yaml.safe_load_all(text):
            if doc is not None:
                objs.append((f, doc))
    return objs, notes


def key(o):
    md = o.get('metadata', {})
    return (o.get('kind'), md.get('namespace', ''), md.get('name'))


# ---- kustomize, as `kubectl apply -k deploy/` would build it ------------
def kustomize(d):
    k = yaml.safe_load(read(os.path.join(d, 'kustomization.yaml')))
    out = []
    for res in k.get('resources', []):
        p = os.path.join(d, res)
        if os.path.isdir(p):
            out.extend(kustomize(p))
        else:
            out.extend(x for x in yaml.safe_load_all(read(p)) if x is not None)
    for lab in k.get('labels', []):
        for o in out:
            o.setdefault('metadata', {}).setdefault('labels', {}).update(lab['pairs'])
    for img in k.get('images', []):
        for o in out:
            spec = o.get('spec', {}).get('template', {}).get('spec', {})
            for c in spec.get('containers', []) + spec.get('initContainers', []):
                if c.get('image') == img['name']:
                    c['image'] = img.get('newName', img['name']) + ':' + img['newTag']
    return out


want = {key(o): o for o in kustomize(DEPLOY) if o.get('kind') != 'CustomResourceDefinition'}
try:
    got_list, notes = render(copy.deepcopy(values))
    rerr = None
except helm_render.TemplateError as e:
    got_list, notes, rerr = [], None, str(e)
check('the chart renders with the default values', rerr is None, rerr)
got = {}
for f, o in got_list:
    labels = o.get('metadata', {}).get('labels', {})
    check('%s: Helm labels on %s/%s' % (f, o.get('kind'), o['metadata'].get('name')),
          labels.get('app.kubernetes.io/managed-by') == 'Helm' and
          labels.get('helm.sh/chart') == 'kerf-' + chart['version'], labels)
    for h in HELM_LABELS:
        labels.pop(h, None)
    got[key(o)] = o


def diff(a, b, path=''):
    if type(a) is not type(b):
        return ['%s: %r != %r' % (path or '.', a, b)]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append('%s.%s: only in %s' % (path, k, 'chart' if k in a else 'deploy/'))
            else:
                out.extend(diff(a[k], b[k], '%s.%s' % (path, k)))
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return ['%s: %d items != %d' % (path, len(a), len(b))]
        return [d for i in range(len(a)) for d in diff(a[i], b[i], '%s[%d]' % (path, i))]
    return [] if a == b else ['%s: %r != %r' % (path, a, b)]


check('defaults: the same objects as deploy/ (kind, namespace, name)',
      sorted(got, key=str) == sorted(want, key=str),
      'only in the chart: %s\nonly in deploy/: %s' % (
          sorted(set(got) - set(want), key=str), sorted(set(want) - set(got), key=str)))
for k in sorted(set(got) & set(want), key=str):
    d = diff(got[k], want[k])
    check('defaults: %s %s/%s is the object of deploy/' % (k[0], k[1] or '-', k[2]), not d, '\n'.join(d))

# the parts the brief names, said once more so a failure reads plainly
dep = got.get(('Deployment', 'kerf-system', 'kerf-serve'), {})
c0 = (dep.get('spec', {}).get('template', {}).get('spec', {}).get('containers') or [{}])[0]
check('defaults: kerf serve runs image kerf:%s' % chart['appVersion'],
      c0.get('image') == 'kerf:' + chart['appVersion'], c0.get('image'))
check('defaults: kerf serve has the 15 args of deploy/deployment.yaml', len(c0.get('args', [])) == 15,
      c0.get('args'))
check('NOTES.txt renders and names the Secret to create', notes is not None and
      'kerf-webhook-tls' in notes, notes)

# ---- crds/ --------------------------------------------------------------
for f in sorted(os.listdir(os.path.join(DEPLOY, 'crds'))):
    p = os.path.join(CHART, 'crds', f)
    check('crds/%s: the bytes of deploy/crds/%s' % (f, f),
          os.path.exists(p) and read(p) == read(os.path.join(DEPLOY, 'crds', f)))
check('crds/ holds nothing else', sorted(os.listdir(os.path.join(CHART, 'crds'))) ==
      sorted(os.listdir(os.path.join(DEPLOY, 'crds'))))

# ---- other values --------------------------------------------------------
v = copy.deepcopy(values)
v['agent']['enabled'] = False
objs, _ = render(v)
check('agent.enabled false: no object in kerf-agent, no agent policy',
      not [o for _, o in objs if 'agent' in o['metadata']['name']] and len(objs) == len(got_list) - 9,
      [key(o) for _, o in objs])

v = copy.deepcopy(values)
v['webhook']['enabled'] = False
objs, notes = render(v)
names = [key(o) for _, o in objs]
dep = [o for _, o in objs if o['kind'] == 'Deployment'][0]
c0 = dep['spec']['template']['spec']['containers'][0]
check('webhook.enabled false: no webhook configuration or Service',
      not [k for k in names if 'Webhook' in k[0] or k[2] == 'kerf-webhook'], names)
check('webhook.enabled false: no --webhook flag, no certificate volume',
      not [a for a in c0['args'] if a.startswith('--webhook')] and
      not [x for x in dep['spec']['template']['spec']['volumes'] if x['name'] == 'webhook-tls'],
      c0['args'])

v = copy.deepcopy(values)
v['webhook']['tls'].update(create=True, cert='CERT PEM', key='KEY PEM')
v['webhook']['caBundle'] = 'Q0E='
v['image'].update(repository='registry.example/kerf', tag='9.9.9')
v['serve']['extraArgs'] = ['--log-level=debug']
objs, _ = render(v)
sec = [o for _, o in objs if o['kind'] == 'Secret']
check('webhook.tls.create: the Secret kerf-webhook-tls of type kubernetes.io/tls',
      len(sec) == 1 and sec[0]['metadata']['name'] == 'kerf-webhook-tls' and
      sec[0]['type'] == 'kubernetes.io/tls' and sec[0]['data'] ==
      {'tls.crt': 'Q0VSVCBQRU0=', 'tls.key': 'S0VZIFBFTQ=='}, sec)
bundles = [w['clientConfig']['caBundle'] for _, o in objs if 'webhooks' in o for w in o['webhooks']]
check('webhook.caBundle: in all five webhooks', bundles == ['Q0E='] * 5, bundles)
images = [c['image'] for _, o in objs if o['kind'] in ('Deployment', 'DaemonSet')
          for c in o['spec']['template']['spec']['containers']]
check('image.repository and image.tag: both workloads', images == ['registry.example/kerf:9.9.9'] * 2, images)
dep = [o for _, o in objs if o['kind'] == 'Deployment'][0]
check('serve.extraArgs: appended to the args',
      dep['spec']['template']['spec']['containers'][0]['args'][-1] == '--log-level=debug')
v['webhook']['tls']['cert'] = ''
try:
    render(v)
    refused = None
except helm_render.TemplateError as e:
    refused = str(e)
check('webhook.tls.create without a cert: refused naming webhook.tls.cert',
      refused is not None and 'webhook.tls.cert' in refused, refused)

print('1..%d' % n)
sys.exit(1 if failed else 0)
