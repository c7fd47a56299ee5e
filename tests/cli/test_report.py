#!/usr/bin/env python3
"""
test_report: `--report` and the progress lines (issue 13, friction 7, and
the quickstart), as TAP.

- the commands of docs/quickstart.md ("The simulator in one minute") run
  as written, taken from the doc's code blocks so the doc cannot drift:
  its set-up block is the README's, its report command exits 0 and writes
  an HTML page that is well-formed XML and HTML, has every chart's <svg>
  with its <title> and <desc>, fetches nothing (no http: or https: src or
  href, no script), agrees with what the run printed, and is the same
  bytes when run again;
- `kerf sim run FILE --json --report` (HTML and Markdown): the report's
  figures equal the JSON document's; same bytes twice;
- a name that is neither .html nor .md, and a place that cannot be
  written, are usage errors (exit 2, naming --report) before the run,
  leaving no file; a run that fails leaves no FILE.tmp;
- progress: a run under two seconds prints nothing on stderr; a run past
  the delay (KERF_PROGRESS_AFTER_MS lowers it, for tests) prints plain
  lines when stderr is a file; -q prints none;
- with the openb trace (KERF_OPENB_DIR), `sim openb-replay` and `sim
  openb` write their reports (skipped without it).

Usage: test_report.py KERF SOURCE_ROOT
"""
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from taplib import check, finish, skip

KERF, ROOT = sys.argv[1], sys.argv[2]
SVG = '{http://www.w3.org/2000/svg}'
CHARTS = ('chart-alloc', 'chart-share', 'chart-waits', 'chart-preempt',
          'chart-gpumap')
PROGRESS = re.compile(r'^kerf sim( run| openb| openb-replay)?: \d{1,3}% '
                      r'\([^()]*\), [0-9dhms]+ elapsed$')


def ok(cond, what):
    return check(what, cond)


SANDBOXES = []


def sandbox():
    """A folder where `build/kerf` and `examples/` are this tree's."""
    d = tempfile.mkdtemp(prefix='kerf-report-')
    SANDBOXES.append(d)
    os.mkdir(os.path.join(d, 'build'))
    os.symlink(os.path.abspath(KERF), os.path.join(d, 'build', 'kerf'))
    os.symlink(os.path.join(ROOT, 'examples'), os.path.join(d, 'examples'))
    return d


def run(cmd, cwd, env=None, shell=False):
    e = dict(os.environ)
    e.pop('KERF_PROGRESS_AFTER_MS', None)
    e.update(env or {})
    return subprocess.run(cmd, cwd=cwd, env=e, shell=shell,
                          capture_output=True, text=True, timeout=900,
                          executable='/bin/bash' if shell else None)


def code_blocks(text):
    return [b.strip('\n') for b in
            re.findall(r'^```[^\n]*\n(.*?)^```', text, re.M | re.S)]


def section(text, title):
    m = re.search(r'^## ' + re.escape(title) + r'\n(.*?)(?=^## |\Z)', text,
                  re.M | re.S)
    return m.group(1) if m else ''


class Strict(html.parser.HTMLParser):
    """Every element closed in order (void elements aside)."""
    VOID = {'meta', 'br', 'hr', 'img', 'input', 'link'}

    def __init__(self):
        super().__init__()
        self.stack, self.bad = [], []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.bad.append(tag)


def check_page(path, name):
    """Well-formed, every chart titled, nothing fetched; the tree."""
    text = open(path, encoding='utf-8').read()
    try:
        tree = ET.fromstring(text)
    except ET.ParseError as e:
        ok(False, '%s: well-formed XML (%s)' % (name, e))
        return None
    ok(True, '%s: well-formed XML' % name)
    p = Strict()
    p.feed(text)
    p.close()
    ok(not p.bad and not p.stack, '%s: every HTML element closed in order' % name)
    svgs = {s.get('id'): s for s in tree.iter(SVG + 'svg')}
    for c in CHARTS:
        s = svgs.get(c)
        title = s.find(SVG + 'title') if s is not None else None
        desc = s.find(SVG + 'desc') if s is not None else None
        texts = [t for t in s.iter(SVG + 'text')] if s is not None else []
        ok(s is not None and title is not None and (title.text or '').strip()
           and desc is not None and len((desc.text or '').strip()) > 20
           and len(texts) >= 3,
           '%s: %s has its <svg>, <title>, <desc> and labels' % (name, c))
    fetch = []
    for el in tree.iter():
        for k, v in el.attrib.items():
            if k.split('}')[-1] in ('src', 'href') and re.match(r'\s*(https?:|//)', v):
                fetch.append(v)
        if el.tag.split('}')[-1] in ('script', 'link', 'iframe', 'img'):
            fetch.append(el.tag)
    ok(not fetch and 'https:' not in text and 'url(' not in text,
       '%s: nothing to fetch, no script (%s)' % (name, fetch[:3]))
    return tree


def facts(tree):
    return {td.get('data-key'): td.text for td in tree.iter('td')
            if td.get('data-key') and td.get('data-key') != ''
            and tree.find(".//table[@id='summary']") is not None
            and td in list(tree.find(".//table[@id='summary']").iter('td'))}


def rows(tree, table, attr):
    out = {}
    t = tree.find(".//table[@id='%s']" % table)
    for tr in (t.iter('tr') if t is not None else []):
        if tr.get(attr):
            out[tr.get(attr)] = {td.get('data-key'): td.text
                                 for td in tr.iter('td') if td.get('data-key')}
    return out


readme = open(os.path.join(ROOT, 'README.md'), encoding='utf-8').read()
quick = open(os.path.join(ROOT, 'docs', 'quickstart.md'), encoding='utf-8').read()
blocks = code_blocks(section(quick, 'The simulator in one minute'))

# ---- the quickstart, as written ------------------------------------------
ok(len(blocks) >= 2 and blocks[0] == code_blocks(readme)[0],
   'quickstart: its set-up block is the README\'s')
reports = [b for b in blocks if '--report' in b]
ok(len(reports) == 1 and reports[0].count('\n') == 0,
   'quickstart: one report command: %r' % reports[:1])
cmd = reports[0] if reports else 'false'
out_name = re.search(r'--report\s+(\S+)', cmd).group(1) if reports else 'x'
d1, d2 = sandbox(), sandbox()
r1 = run(cmd, d1, {'KERF_PROGRESS_AFTER_MS': '100'}, shell=True)
r2 = run(cmd, d2, shell=True)
page = os.path.join(d1, out_name)
ok(r1.returncode == 0 and os.path.isfile(page),
   'quickstart: %s exits 0 and writes %s (rc %d, %s)'
   % (cmd, out_name, r1.returncode, r1.stderr[-300:]))
ok(not os.path.exists(page + '.tmp'), 'quickstart: no %s.tmp left' % out_name)
lines = r1.stderr.splitlines()
ok(lines and all(PROGRESS.match(l) for l in lines) and '\r' not in r1.stderr
   and '\033' not in r1.stderr,
   'progress: past the delay, plain lines on stderr (%d, first %r)'
   % (len(lines), lines[:1]))
tree = check_page(page, out_name) if os.path.isfile(page) else None
if tree is not None:
    f = facts(tree)
    m_ev = re.search(r'held after each of (\d+) events', r1.stdout)
    m_pre = re.search(r'(\d+) preemptions .* lost ([\d.]+) GPU-h of work', r1.stdout)
    m_prod = re.search(r'production: (\d+) of (\d+) started', r1.stdout)
    ok(m_ev and f.get('events') == m_ev.group(1),
       'day: events in the page (%s) = printed (%s)'
       % (f.get('events'), m_ev and m_ev.group(1)))
    ok(m_pre and f.get('preempted') == m_pre.group(1)
       and abs(float(f.get('lost_gpu_hours', '-1')) - float(m_pre.group(2))) <= 0.051,
       'day: preemptions and lost GPU-hours in the page (%s, %s) = printed (%s)'
       % (f.get('preempted'), f.get('lost_gpu_hours'), m_pre and m_pre.groups()))
    cls = rows(tree, 'classes', 'data-class').get('production', {})
    ok(m_prod and cls.get('started') == m_prod.group(1)
       and cls.get('submitted') == m_prod.group(2),
       'day: production started/submitted in the page = printed')
    peak = float(f.get('peak_alloc_pct', '-1'))
    ok(0 < peak <= 100 and f.get('pending') is not None,
       'day: a peak allocation (%s %%) and a pending count' % peak)
p2 = os.path.join(d2, out_name)
ok(os.path.isfile(p2) and os.path.isfile(page)
   and open(page, 'rb').read() == open(p2, 'rb').read(),
   'quickstart: the same bytes when run again')

# ---- sim run: the report against --json -------------------------------------
scn = os.path.join(ROOT, 'examples', 'scenario', 'demo-day.yaml')
d = sandbox()
for ext in ('html', 'md'):
    outs = []
    for i in range(2):
        r = run([KERF, 'sim', 'run', scn, '--json', '--report', 'r%d.%s' % (i, ext)], d)
        outs.append(r)
    r = outs[0]
    ok(r.returncode == 3 and r.stderr == '',
       'sim run --json --report r.%s: exit 3 (pending), nothing on stderr (%r)'
       % (ext, r.stderr[-200:]))
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = {'tenants': [], 'classes': [], 'pending': []}
    started = sum(t['started'] for t in doc['tenants'])
    submitted = sum(t['submitted'] for t in doc['tenants'])
    pending = len(doc['pending'])
    a = open(os.path.join(d, 'r0.' + ext), 'rb').read()
    b = open(os.path.join(d, 'r1.' + ext), 'rb').read()
    ok(a == b, 'sim run --report r.%s: the same bytes twice' % ext)
    if ext == 'html':
        tree = check_page(os.path.join(d, 'r0.html'), 'r.html')
        f = facts(tree) if tree is not None else {}
        ok(f.get('started') == str(started) and f.get('pending') == str(pending)
           and f.get('submitted') == str(submitted) and pending > 0,
           'sim run: started %s, pending %s, submitted %s as in the JSON (%d, %d, %d)'
           % (f.get('started'), f.get('pending'), f.get('submitted'),
              started, pending, submitted))
        tr = rows(tree, 'tenants', 'data-tenant') if tree is not None else {}
        good = bool(doc['tenants'])
        for t in doc['tenants']:
            row = [v for k, v in tr.items()
                   if k == t['name'] or k.endswith('/' + t['name'])]
            good = good and len(row) == 1 and \
                row[0].get('started') == str(t['started']) and \
                row[0].get('submitted') == str(t['submitted']) and \
                row[0].get('preempted') == str(t['preempted'])
        ok(good, 'sim run: every tenant row as in the JSON')
        cr = rows(tree, 'classes', 'data-class') if tree is not None else {}
        ok(doc['classes'] and all(cr.get(c['name'], {}).get('started') == str(c['started'])
                                  for c in doc['classes']),
           'sim run: every class row as in the JSON')
    else:
        md = a.decode()
        ok(('| workloads started | %d |' % started) in md
           and ('| workloads still pending at the end | %d |' % pending) in md
           and ('| workloads submitted | %d |' % submitted) in md,
           'sim run --report r.md: started, pending, submitted as in the JSON')
        ok(all(h in md for h in ('## GPU allocation over time', '## Tenants',
                                 '## Share of the GPUs in use against entitlement',
                                 '## Wait before start, per priority class',
                                 '## Preemptions and the work they lost',
                                 '## GPUs at peak allocation'))
           and 'http' not in md,
           'sim run --report r.md: a section for every chart, no link out')

# ---- errors before the run -------------------------------------------------
d = sandbox()
bad = [
    (['sim', 'run', scn, '--report', 'day.pdf'], 'kerf sim run', 'day.pdf'),
    (['sim', '--report', 'day.txt'], 'kerf sim', 'day.txt'),
    (['sim', 'run', scn, '--report', '.html'], 'kerf sim run', '.html'),
    # before the trace is read: the files named do not exist
    (['sim', 'openb-replay', '--nodes', 'no.csv', '--pods', 'no.csv',
      '--report', 'r.htm'], 'kerf sim openb-replay', 'r.htm'),
    (['sim', 'openb', '--nodes', 'no.csv', '--pods', 'no.csv',
      '--report', 'r'], 'kerf sim openb', 'r'),
]
for args, prog, name in bad:
    r = run([KERF] + args, d)
    ok(r.returncode == 2 and r.stdout == '' and
       r.stderr == "%s: --report '%s': the format follows the file name, which must end in .html or .md\n" % (prog, name),
       '%s --report %s: exit 2, the reason (%d, %r)' % (prog, name, r.returncode, r.stderr))
for args, prog in ((['sim', 'run', scn], 'kerf sim run'), (['sim'], 'kerf sim')):
    where = os.path.join(d, 'no-such-dir', 'day.html')
    r = run([KERF] + args + ['--report', where], d)
    ok(r.returncode == 2 and r.stdout == '' and
       r.stderr.startswith("%s: --report '%s': cannot write '%s.tmp': " % (prog, where, where)),
       '%s --report in a missing folder: exit 2 before the run (%d, %r)'
       % (prog, r.returncode, r.stderr))
ro = os.path.join(d, 'ro')
os.mkdir(ro, 0o555)
if os.access(ro, os.W_OK):
    skip('an unwritable folder refused', 'running as a user who can write anywhere')
else:
    r = run([KERF, 'sim', 'run', scn, '--report', os.path.join(ro, 'x.md')], d)
    ok(r.returncode == 2 and 'cannot write' in r.stderr,
       'sim run --report in an unwritable folder: exit 2 (%r)' % r.stderr)
r = run([KERF, 'sim', 'run', 'missing.yaml', '--report', 'm.html'], d)
ok(r.returncode == 1 and not os.path.exists(os.path.join(d, 'm.html'))
   and not os.path.exists(os.path.join(d, 'm.html.tmp')),
   'a run that fails leaves neither m.html nor m.html.tmp')
ok(sorted(os.listdir(d)) == ['build', 'examples', 'no-such-dir', 'ro']
   if os.path.isdir(os.path.join(d, 'no-such-dir')) else
   sorted(os.listdir(d)) == ['build', 'examples', 'ro'],
   'no report file left by any refused run (%s)' % sorted(os.listdir(d)))

# ---- progress ---------------------------------------------------------------
r = run([KERF, 'sim', 'run', scn], d)
ok(r.returncode == 3 and r.stderr == '',
   'progress: a run under two seconds says nothing on stderr (%r)' % r.stderr[:200])
r = run([KERF, 'sim', 'run', scn], d, {'KERF_PROGRESS_AFTER_MS': '0'})
lines = r.stderr.splitlines()
ok(lines and all(PROGRESS.match(l) for l in lines),
   'progress: the same run with no delay prints lines (%d, %r)' % (len(lines), lines[:1]))
r = run([KERF, 'sim', 'run', scn, '-q'], d, {'KERF_PROGRESS_AFTER_MS': '0'})
ok(r.returncode == 3 and r.stderr == '', 'progress: -q prints none (%r)' % r.stderr[:200])
r = run([KERF, 'sim', 'run', scn, '--quiet'], d, {'KERF_PROGRESS_AFTER_MS': '0'})
ok(r.returncode == 3 and r.stderr == '', 'progress: --quiet prints none')

# ---- the openb trace, where it is ---------------------------------------------
ob = os.environ.get('KERF_OPENB_DIR', '')
nodes = os.path.join(ob, 'openb_node_list_gpu_node.csv')
pods = os.path.join(ob, 'openb_pod_list_default.csv')
if not (ob and os.path.isfile(nodes) and os.path.isfile(pods)):
    skip('openb-replay --report', 'no openb trace (KERF_OPENB_DIR)')
    skip('openb --report', 'no openb trace (KERF_OPENB_DIR)')
else:
    r = run([KERF, 'sim', 'openb-replay', '--nodes', nodes, '--pods', pods,
             '--days', '1', '--report', 'replay.html'], d,
            {'KERF_PROGRESS_AFTER_MS': '0'})
    lines = r.stderr.splitlines()
    ok(r.returncode == 0 and check_page(os.path.join(d, 'replay.html'), 'replay.html') is not None
       and lines and all(PROGRESS.match(l) for l in lines),
       'openb-replay --report: a page, and progress lines (%d, %r)'
       % (r.returncode, r.stderr[-200:]))
    r = run([KERF, 'sim', 'openb', '--nodes', nodes, '--pods', pods, '--seeds',
             '42-43', '--policy', 'fgd,best-fit', '--report', 'openb.md'], d)
    md = open(os.path.join(d, 'openb.md')).read() if r.returncode == 0 else ''
    ok(r.returncode == 0 and md.count('| fgd |') == 10
       and md.count('| best-fit |') == 10,
       'openb --report openb.md: the curve of each policy (%d, %r)'
       % (r.returncode, r.stderr[-200:]))

for d in SANDBOXES:
    for root, dirs, _ in os.walk(d):
        for x in dirs:
            os.chmod(os.path.join(root, x), 0o755)
    shutil.rmtree(d, ignore_errors=True)
sys.exit(finish())
