#!/usr/bin/env python3
"""
test_doc_links: a clone of the repository can follow its docs (issue 13,
friction 8).  For README.md and docs/*.md, prints TAP:

- every relative Markdown link ([text](path), [text](path#anchor) and
  reference definitions) resolves to a file or folder inside the
  repository, and an anchor names a heading of the target;
- no text names a path that leaves the repository (../ past its root),
  a build-exp/ folder, or an absolute path under the checkout's parent
  folder or the user's home;
- every `src/...`, `tests/...`, `docs/...` (and the other top-level
  folders) written in backticks exists (globs allowed);
- the repository has LICENSE, Apache-2.0 (README.md and meson.build say so).

Usage: test_doc_links.py SOURCE_ROOT [FILE.md ...]
(files default to README.md and docs/*.md).
"""
import glob
import os
import re
import sys

TOP_DIRS = ('src', 'tests', 'docs', 'scripts', 'bench', 'deploy',
            'examples', 'fuzz', 'proto')

LINK = re.compile(r'(?<!!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
IMAGE = re.compile(r'!\[[^\]]*\]\(\s*<?([^)\s>]+)>?[^)]*\)')
REFDEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$', re.M)
CODE = re.compile(r'`([^`]+)`')
FENCE = re.compile(r'^\s*```.*?^\s*```[^\n]*$', re.M | re.S)
DOTDOT = re.compile(r'(?<![\w./])((?:\.\./)+[\w.-][\w./-]*)')
ABSPATH = re.compile(r'(?<![\w.:/~-])(/[\w.-]+(?:/[\w.*-]+)*/?)')


def slug(heading):
    """GitHub's anchor for a heading."""
    h = re.sub(r'[^\w\- ]', '', heading.strip().lower())
    return h.replace(' ', '-')


def anchors(path):
    seen = {}
    out = set()
    in_fence = False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.lstrip().startswith('```'):
                in_fence = not in_fence
                continue
            m = None if in_fence else re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else '%s-%d' % (s, n))
    return out


def inside(root, path):
    r = os.path.realpath(root)
    p = os.path.realpath(path)
    return p == r or p.startswith(r + os.sep)


def check_file(root, rel, foreign):
    """The problems of one Markdown file, as strings."""
    path = os.path.join(root, rel)
    base = os.path.dirname(path)
    with open(path, encoding='utf-8') as f:
        text = f.read()
    bad = []
    lineno = lambda pos: text.count('\n', 0, pos) + 1

    targets = [(m.group(1), m.start()) for m in LINK.finditer(text)]
    targets += [(m.group(1), m.start()) for m in IMAGE.finditer(text)]
    targets += [(m.group(1), m.start()) for m in REFDEF.finditer(text)]
    for target, pos in targets:
        if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I):
            continue  # https:, mailto: ...
        where = '%s:%d' % (rel, lineno(pos))
        file_part, _, anchor = target.partition('#')
        dest = os.path.normpath(os.path.join(base, file_part)) if file_part else path
        if file_part.startswith('/'):
            bad.append('%s: link %s: an absolute path; link relative to the file' % (where, target))
        elif not inside(root, dest):
            bad.append('%s: link %s: leaves the repository' % (where, target))
        elif not os.path.exists(dest):
            bad.append('%s: link %s: no such file in the repository' % (where, target))
        elif anchor and dest.endswith('.md') and anchor not in anchors(dest):
            bad.append('%s: link %s: no heading #%s in %s' % (where, target, anchor, os.path.relpath(dest, root)))

    for m in DOTDOT.finditer(text):
        dest = os.path.normpath(os.path.join(base, m.group(1)))
        if not inside(root, dest):
            bad.append('%s:%d: path %s: outside the repository' % (rel, lineno(m.start()), m.group(1)))
        elif not os.path.exists(dest):
            bad.append('%s:%d: path %s: no such file in the repository' % (rel, lineno(m.start()), m.group(1)))
    for m in re.finditer(r'build-exp/', text):
        bad.append('%s:%d: names build-exp/, a folder a clone does not have' % (rel, lineno(m.start())))
    for m in ABSPATH.finditer(text):
        p = m.group(1)
        for f in foreign:
            if p == f or p.startswith(f + '/'):
                bad.append('%s:%d: path %s: a folder of the machine the doc was written on' % (rel, lineno(m.start()), p))
                break

    # inline code (which may run over a line end) outside fenced blocks,
    # the blocks blanked with their line ends kept
    prose = FENCE.sub(lambda f: re.sub(r'[^\n]', ' ', f.group(0)), text)
    for m in CODE.finditer(prose):
        for word in m.group(1).split():
            word = word.rstrip('.,;:)')
            if not word.startswith(tuple(d + '/' for d in TOP_DIRS)):
                continue
            if re.search(r'[{}<>$=|]|\.\.\.|NAME|XX', word):
                continue  # a pattern, not a file
            # a program named by its source (bench/bench_place: .c)
            hits = glob.glob(os.path.join(root, word)) or \
                glob.glob(os.path.join(root, word + '.*'))
            if not hits:
                bad.append('%s:%d: `%s`: no such file in the repository' % (rel, lineno(m.start()), word))
    return bad


# A doc with one fault of each kind, and what the check must say of it.
BROKEN = {
    'see [x](missing.md)': 'link missing.md: no such file',
    'see [x](docs/a.md#nowhere)': 'no heading #nowhere',
    'see [x](../outside.md)': 'link ../outside.md: leaves the repository',
    'see [x](/abs.md)': 'an absolute path',
    'data in `../shared/data/openb`': 'outside the repository',
    'run `build-exp/bench/x`': 'names build-exp/',
    'the header `src/nothing.h`': '`src/nothing.h`: no such file',
    'see [y]: docs/gone.md': 'no such file',
}


def self_checks(foreign):
    """The checker itself: each fault of BROKEN found, a clean doc passes."""
    import tempfile
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, 'repo')
        os.makedirs(os.path.join(root, 'docs'))
        os.makedirs(os.path.join(root, 'src'))
        with open(os.path.join(root, 'docs', 'a.md'), 'w') as f:
            f.write('# A\n\n## Second part (`src/`)\n')
        with open(os.path.join(root, 'src', 'x.c'), 'w') as f:
            f.write('')
        with open(os.path.join(root, 'good.md'), 'w') as f:
            f.write('[a](docs/a.md#second-part-src) [w](https://example.org/x) '
                    '`src/x.c` `src/x` [r][r]\n\n[r]: docs/a.md\n'
                    '```\n`src/not-code-span`\n```\n')
        bad = check_file(root, 'good.md', foreign | {tmp})
        out.append(('self-test: a doc with good links passes', bad))
        for text, want in sorted(BROKEN.items()):
            doc = text.replace('see [y]: ', '[y]: ')
            with open(os.path.join(root, 'bad.md'), 'w') as f:
                f.write(doc + '\n')
            got = check_file(root, 'bad.md', foreign)
            miss = [] if any(want in g for g in got) else \
                ['expected "%s", got %r' % (want, got)]
            out.append(('self-test: %s is refused' % text, miss))
        with open(os.path.join(root, 'bad.md'), 'w') as f:
            f.write('the trace in %s/data/openb\n' % tmp)
        got = check_file(root, 'bad.md', foreign | {tmp})
        miss = [] if any('a folder of the machine' in g for g in got) else \
            ['expected the checkout\'s parent folder refused, got %r' % got]
        out.append(("self-test: a path under the checkout's parent is refused", miss))
    return out


def main():
    root = os.path.abspath(sys.argv[1])
    files = sys.argv[2:] or (['README.md'] + sorted(
        os.path.relpath(p, root) for p in glob.glob(os.path.join(root, 'docs', '*.md'))))
    # Paths of the machine: the folder holding the checkout, and home.
    foreign = set()
    parent = os.path.dirname(os.path.realpath(root))
    if parent not in ('/', '/tmp', '/var/tmp'):  # docs may use /tmp/x
        foreign.add(parent)
    home = os.path.expanduser('~')
    if home not in ('', '/', '~'):
        foreign.add(home)
    foreign.update(('/home', '/Users'))

    checks = []
    for rel in files:
        checks.append((rel + ': links and paths resolve inside the repository',
                       check_file(root, rel, foreign)))

    lic = []
    lic_path = os.path.join(root, 'LICENSE')
    if not os.path.isfile(lic_path):
        lic.append('LICENSE: missing')
    else:
        with open(lic_path, encoding='utf-8') as f:
            body = f.read()
        if 'Apache License' not in body or 'Version 2.0, January 2004' not in body:
            lic.append('LICENSE: not the Apache License 2.0 text')
    with open(os.path.join(root, 'meson.build'), encoding='utf-8') as f:
        if not re.search(r"license\s*:\s*'Apache-2.0'", f.read()):
            lic.append("meson.build: project() lacks license : 'Apache-2.0'")
    with open(os.path.join(root, 'README.md'), encoding='utf-8') as f:
        if 'Apache-2.0' not in f.read():
            lic.append('README.md: does not say Apache-2.0')
    checks.append(('LICENSE is Apache-2.0 and README.md, meson.build say so', lic))

    checks += self_checks(foreign)

    print('1..%d' % len(checks))
    failed = 0
    for i, (name, bad) in enumerate(checks, 1):
        if bad:
            failed += 1
            print('not ok %d - %s' % (i, name))
            for b in bad:
                print('# ' + b)
        else:
            print('ok %d - %s' % (i, name))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
