#!/usr/bin/env python3
"""The container image recipe, Containerfile at the repository root,
checked without a container runtime (none is run here: the image build
itself is not tested):

  - two stages or more; the build stage is Debian 12, the runtime stage
    distroless base-debian12 or debian:12-slim;
  - the build stage installs the packages of scripts/install-deps.sh but
    the test-only ones, and builds with meson in release;
  - the runtime stage runs no command (no shell needed), installs no
    compiler, copies kerf into PATH and runs as USER 65532;
  - the OCI labels, the licence Apache-2.0 and the project's version;
  - every shared library `ldd KERF` lists (and `ldd nft`, where nft is
    installed) is glibc or libssl3, which the runtime image has, or is
    copied by the build stage by soname;
  - .dockerignore keeps build trees and .git out.

usage: test_containerfile.py SOURCE_ROOT KERF        prints TAP
"""
import os
import re
import shlex
import subprocess
import sys

from taplib import check, finish, read

SRC, KERF = sys.argv[1], sys.argv[2]

# Packages of install-deps.sh that only tests, fuzzers, benchmarks or the
# scripts need, not the build of kerf.
TEST_ONLY = {
    'clang', 'libclang-rt-14-dev', 'libcmocka-dev', 'openssl', 'iproute2',
    'nghttp2-proxy', 'nghttp2-client', 'python3-grpcio', 'python3-grpc-tools',
    'python3-protobuf', 'prometheus', 'python3-yaml', 'python3-jsonschema',
    'chromium', 'nodejs', 'npm', 'zsh', 'groff-base',
}
# What distroless base-debian12 holds (its README: glibc, libssl, CA
# certificates, tzdata): these sonames need no copy.
BASE_SONAMES = re.compile(r'^(linux-vdso\.so|ld-linux[-\w.]*\.so|libc\.so|libm\.so|libresolv\.so|'
                          r'libpthread\.so|libdl\.so|librt\.so|libssl\.so\.3|libcrypto\.so\.3)')
COMPILERS = re.compile(r'\b(gcc|g\+\+|cc|clang|build-essential|meson|ninja)\b')



def instructions(text):
    """(INSTRUCTION, argument) pairs: comments dropped, continuations joined."""
    out, cur = [], ''
    for line in text.split('\n'):
        s = line.strip()
        if s.startswith('#') and not cur:
            continue
        if s.startswith('#'):
            continue
        cur += ' ' + s if cur else s
        if cur.endswith('\\'):
            cur = cur[:-1].rstrip()
            continue
        if cur:
            word, _, rest = cur.partition(' ')
            out.append((word.upper(), rest.strip()))
        cur = ''
    return out


cf = read(os.path.join(SRC, 'Containerfile'))
stages = []
for ins, arg in instructions(cf):
    if ins == 'FROM':
        stages.append({'from': arg, 'ins': []})
    elif stages:
        stages[-1]['ins'].append((ins, arg))
check('Containerfile: two stages or more', len(stages) >= 2, [s['from'] for s in stages])
build, run = stages[0], stages[-1]
check('build stage: FROM debian:12 AS build', re.match(r'^debian:(12|bookworm)\S* AS build$', build['from'], re.I) is not None,
      build['from'])
check('runtime stage: distroless base-debian12 or debian:12-slim',
      re.match(r'^(gcr\.io/distroless/base-debian12(:nonroot)?|debian:12-slim)$', run['from']) is not None, run['from'])

# -- the build stage's packages are install-deps.sh's, less the test ones
deps = read(os.path.join(SRC, 'scripts', 'install-deps.sh'))
m = re.search(r'pkgs=\((.*?)\n\)', deps, re.S)
want = set()
for line in (m.group(1) if m else '').split('\n'):
    want.update(w for w in line.split('#')[0].split() if w)
want -= TEST_ONLY
got = set()
build_runs = [a for i, a in build['ins'] if i == 'RUN']
for a in build_runs:
    if 'apt-get' in a and 'install' in a:
        words = shlex.split(a.split('install', 1)[1].split('&&')[0])
        got.update(w for w in words if not w.startswith('-'))
check('install-deps.sh lists packages', len(want) > 10, want)
check('build stage: the packages of install-deps.sh but the test-only ones',
      got == want, 'missing: %s\nextra: %s' % (sorted(want - got), sorted(got - want)))
check('build stage: meson release build of kerf, tests off',
      any('meson setup' in a and '--buildtype=release' in a and '-Dtests=false' in a for a in build_runs) and
      any('ninja -C' in a and 'kerf' in a for a in build_runs), build_runs)

# -- the runtime stage
run_ins = [i for i, _ in run['ins']]
check('runtime stage: no RUN (no shell needed, nothing installed)', 'RUN' not in run_ins, run_ins)
copies = [a for i, a in run['ins'] if i in ('COPY', 'ADD')]
check('runtime stage: copies no compiler', not [a for a in copies if COMPILERS.search(a.split()[-2] if len(a.split()) > 1 else a)],
      copies)
users = [a for i, a in run['ins'] if i == 'USER']
check('runtime stage: USER 65532, last', users and users[-1].split(':')[0] == '65532', users)
check('runtime stage: kerf copied into PATH', any(re.search(r'/build/kerf\s+/usr/local/bin/kerf$', a) for a in copies) and
      re.search(r'PATH=[^ ]*/usr/local/bin', cf) is not None, copies)
labels = ' '.join(a for i, a in run['ins'] if i == 'LABEL')
project = re.search(r"version\s*:\s*'([^']+)'", read(os.path.join(SRC, 'meson.build')))
for k, v in (('licenses', 'Apache-2.0'), ('version', project.group(1) if project else '?'),
             ('title', 'kerf')):
    check('label org.opencontainers.image.%s="%s"' % (k, v),
          'org.opencontainers.image.%s="%s"' % (k, v) in labels, labels)
check('label org.opencontainers.image.description', 'org.opencontainers.image.description="' in labels)

# -- every library kerf (and nft) needs is in the runtime image
copied = set()
for a in build_runs:
    copied.update(re.findall(r'\b(lib[\w.+-]+\.so(?:\.\d+)+)\b', a))
libdir_copied = any('/out/lib/' in a and '/usr/local/lib/kerf' in a for a in copies) and \
    'LD_LIBRARY_PATH=/usr/local/lib/kerf' in cf


def ldd(path):
    try:
        out = subprocess.run(['ldd', path], capture_output=True, text=True, timeout=60).stdout
    except OSError as e:
        return None, str(e)
    return [os.path.basename(ln.split()[0]) for ln in out.split('\n') if '.so' in ln], out


check('runtime stage: the copied libraries on LD_LIBRARY_PATH', libdir_copied, copies)
for binary, must in ((KERF, True), ('/usr/sbin/nft', False)):
    if not os.path.exists(binary):
        check('ldd %s: not installed here # SKIP' % binary, not must)
        continue
    libs, raw = ldd(binary)
    libs = set(libs or [])
    # A sanitizer build (scripts/test.sh) links the sanitizers' runtimes,
    # which pull in libstdc++ and libgcc_s: no part of the image's build.
    # The debug build's run of this test checks without them.
    san = {s for s in libs if re.match(r'^lib(a|ub|l|t|hwa)san\.so', s)}
    for s in san:
        path = re.search(r'\s%s => (\S+)' % re.escape(s), raw)
        more, _ = ldd(path.group(1)) if path else ([], '')
        libs -= set(more or []) | {s}
    if san:
        print('# %s: a sanitizer build; its runtimes left out: %s' % (binary, ' '.join(sorted(san))))
    libs = sorted(libs)
    check('ldd %s: lists libraries' % os.path.basename(binary), len(libs) > 3, raw)
    lacking = [s for s in libs if not BASE_SONAMES.match(s) and s not in copied]
    check('every library of %s is in the base image or copied by soname' % os.path.basename(binary),
          not lacking, 'not provided: %s' % ' '.join(lacking))
check('nft copied into the runtime stage', any(re.search(r'/usr/sbin/nft\s+/usr/sbin/nft$', a) for a in copies), copies)

# -- .dockerignore
ign = read(os.path.join(SRC, '.dockerignore')).split('\n')
for pat in ('.git', 'build*'):
    check('.dockerignore: %s' % pat, pat in [x.strip() for x in ign])

sys.exit(finish())
