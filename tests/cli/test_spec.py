#!/usr/bin/env python3
"""kerf's command registry (src/cmd/spec.c) against what the commands do.

- every getopt table in src/cmd is in the registry (a new table cannot be
  forgotten), and every option of every table is described there, with a
  value exactly when getopt takes one;
- each command's --help names exactly the options of its table (help and
  getopt cannot drift);
- -h/--help anywhere on the line shows that command's help, but not as an
  option's value nor after "--";
- kerf man renders without a warning and lists every option of every
  command;
- run as kubectl-kerf, kerf's usage lines say "kubectl kerf".

usage: test_spec.py KERF SOURCE_ROOT       (prints TAP)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

kerf, root = sys.argv[1], sys.argv[2]
n = failed = 0


def ok(cond, what, detail=""):
    global n, failed
    n += 1
    if cond:
        print(f"ok {n} - {what}")
    else:
        failed += 1
        print(f"not ok {n} - {what}")
        for line in str(detail).splitlines():
            print(f"# {line}")


def run(*args, exe=None):
    p = subprocess.run([exe or kerf, *args], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr


# ---- the registry as kerf prints it ------------------------------------
rc, out, err = run("completion", "spec")
ok(rc == 0 and out, "kerf completion spec: the registry", err)
commands = {}     # path -> has a table
docs = {}         # path -> {option: (short, kind)}
getopts = {}      # path -> {option: flag|value}
table_of = {}     # path -> the first path with the same table
for line in out.splitlines():
    f = line.split("\t")
    if f[0] == "command":
        commands[f[1]] = f[2] == "table"
        docs[f[1]] = {}
        getopts[f[1]] = {}
    elif f[0] == "option":
        docs[f[1]][f[2]] = (f[3], f[4])
    elif f[0] == "getopt":
        table_of[f[1]] = f[2]
        getopts[f[1]][f[3]] = f[4]

# every option described is the table's, with a value exactly when getopt
# wants one; every option of a table described by some command using it
for path, has_table in commands.items():
    if not has_table:
        continue
    bad = [o for o, (_, kind) in docs[path].items()
           if o not in getopts[path] or
           (getopts[path][o] == "value") != (kind != "none")]
    ok(not bad and "--help" in getopts[path],
       f"kerf {path}: its options are its getopt table's, values alike", bad)
by_table = {}
for path, first in table_of.items():
    by_table.setdefault(first, set()).update(docs[path])
for first, described in sorted(by_table.items()):
    missing = sorted(set(getopts[first]) - described)
    ok(not missing, f"the getopt table of kerf {first}: every option described",
       f"not in the registry: {missing}")

# ---- every getopt table in src/cmd is the registry's ------------------
spec_src = open(os.path.join(root, "src/cmd/spec.c")).read()
registered = set(re.findall(r"\b(kerf_\w+_longopts)\b", spec_src))
cmd_dir = os.path.join(root, "src/cmd")
tables = 0
for name in sorted(os.listdir(cmd_dir)):
    if not name.endswith(".c") or name.startswith("spec"):
        continue
    text = open(os.path.join(cmd_dir, name)).read()
    for m in re.finditer(r"(const\s+)?struct option\s+(\w+)\s*\[", text):
        tables += 1
        table = m.group(2)
        if table in registered:
            ok(True, f"src/cmd/{name}: {table} is in the registry")
            continue
        # a table put together at run time from registered ones
        sources = re.findall(r"memcpy\(\s*(?:&)?" + table + r"\b[^,]*,\s*(\w+)", text)
        good = not m.group(1) and sources and all(s in registered for s in sources)
        ok(good, f"src/cmd/{name}: {table} is in the registry"
           + (f" (built from {', '.join(sources)})" if good else ""),
           "every getopt table of a command is referenced in src/cmd/spec.c")
ok(tables >= 14, f"the scan found the getopt tables ({tables})")

# ---- each --help names exactly its table's options ---------------------
usage_re = re.compile(r"^\s*(?:usage:\s*)?kerf ((?:[a-z][a-z0-9-]*)(?: [a-z][a-z0-9-]*)*)")


def named_command(words):
    """The longest registry path the words start with."""
    w = words.split()
    for k in range(len(w), 0, -1):
        if " ".join(w[:k]) in commands:
            return " ".join(w[:k])
    return None


def help_options(path, text):
    """The options the help of path names, lines about other commands left out."""
    found, skip = set(), False
    for line in text.splitlines():
        m = usage_re.match(line)
        if m:
            skip = named_command(m.group(1)) != path
        elif not line.strip():
            skip = False
        if skip:
            continue
        for long_name in re.findall(r"(?<![\w-])--([a-z][a-z0-9-]+)", line):
            found.add("--" + long_name)
        for short in re.findall(r"(?<![\w-])-([a-zA-Z])\b", line):
            long_of = [o for o, (s, _) in docs[path].items() if s == "-" + short]
            found.add(long_of[0] if long_of else "-" + short)
    return found


for path in commands:
    if not commands[path]:
        continue  # no options: a parent's help may show its subcommands'
    rc, text, err = run(*path.split(), "--help")
    shown = help_options(path, text) - {"--help"}
    described = set(docs[path]) - {"--help"}
    ok(rc == 0 and shown == described,
       f"kerf {path} --help names the options of its table",
       f"in the help only: {sorted(shown - described)}\n"
       f"in the table only: {sorted(described - shown)}")

# ---- -h and --help anywhere ----------------------------------------------
cases = [
    (["sim", "openb", "--nodes", "x", "-h"], 0, "usage: kerf sim openb"),
    (["sim", "openb", "--nodes=x", "--pol", "kerf", "--help"], 0, "usage: kerf sim openb"),
    (["sim", "check", "--runs", "5", "--help"], 0, "usage: kerf sim check"),
    (["sim", "run", "no-such-file.yaml", "-h"], 0, "usage: kerf sim run"),
    (["serve", "--kubeconfig", "/nonexistent", "--help"], 0, "usage: kerf serve"),
    (["agent", "run", "--node-name", "n1", "-h"], 0, "usage: kerf agent run"),
    (["admission", "review", "a.yaml", "--objects", "o.yaml", "-h"], 0,
     "usage: kerf admission review"),
    (["get", "tenants", "-o", "json", "-h"], 0, "usage: kerf get"),
    (["get", "tenants", "-ojson", "-h"], 0, "usage: kerf get"),
    (["help", "sim", "openb"], 0, "usage: kerf sim openb"),
    (["sim", "mig", "--he"], 0, "usage: kerf sim mig"),
]
for args, want, text in cases:
    rc, out, err = run(*args)
    ok(rc == want and out.startswith(text),
       f"kerf {' '.join(args)}: exit {want}, its help", f"rc {rc}\n{out[:200]}{err}")
# not help: the value of an option, or after --
for args in (["get", "tenants", "-o", "-h"], ["get", "-o", "--help"],
             ["get", "--", "-h"], ["sim", "check", "--seed", "-h"],
             ["sim", "mig", "--h"]):
    rc, out, err = run(*args)
    ok(rc == 2 and "usage:" not in out,
       f"kerf {' '.join(args)}: not a help option there (exit 2)", f"rc {rc}\n{out}{err}")
rc, out, err = run("help", "sim", "nope")
ok(rc == 2 and "unknown command 'sim nope'" in err,
   "kerf help sim nope: exit 2, named", err)

# ---- the manual page ----------------------------------------------------
rc, man, err = run("man")
ok(rc == 0 and man.startswith(".TH KERF 1"), "kerf man: roff of kerf(1)", err)
groff = shutil.which("groff")
if groff:
    p = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z"], input=man,
                       capture_output=True, text=True)
    ok(p.returncode == 0 and not p.stderr, "groff renders kerf(1) without a warning",
       p.stderr)
else:
    ok(True, "groff renders kerf(1) # SKIP groff not installed")
for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS",
                "ENVIRONMENT", "FILES", "SEE ALSO"):
    ok(f".SH {section}\n" in man, f"kerf(1) has the section {section}")
sections = dict(re.findall(r'^\.SS "kerf ([^"]+)"\n(.*?)(?=^\.SS |^\.SH )', man,
                           re.M | re.S))
for path in commands:
    body = sections.get(path.replace("-", "\\-"), "")
    missing = [o for o in docs[path] if o.replace("-", "\\-") not in body]
    ok(body and not missing, f"kerf(1) lists kerf {path} and its options",
       f"missing: {missing}")
ok("KERF_SERVER" in man and "NO_COLOR" in man, "kerf(1): the environment")
ok(all(f"\n{c}\n" in man for c in "0123"), "kerf(1): exit status 0, 1, 2, 3")

# ---- the kubectl plugin -------------------------------------------------
with tempfile.TemporaryDirectory() as d:
    plugin = os.path.join(d, "kubectl-kerf")
    os.symlink(os.path.abspath(kerf), plugin)
    rc, out, err = run("--help", exe=plugin)
    ok(rc == 0 and out.startswith("usage: kubectl kerf <command>"),
       "kubectl-kerf --help: usage: kubectl kerf", out[:200])
    rc, out, err = run("sim", "run", "--help", exe=plugin)
    ok(rc == 0 and out.startswith("usage: kubectl kerf sim run FILE"),
       "kubectl-kerf sim run --help: usage: kubectl kerf sim run", out[:200])
    rc, out, err = run("help", "agent", exe=plugin)
    ok(rc == 0 and "\n       kubectl kerf agent metrics" in out,
       "kubectl-kerf help agent: every usage line says kubectl kerf", out[:400])
    rc, out, err = run("version", exe=plugin)
    ok(rc == 0 and out.startswith("kerf "), "kubectl-kerf version", out + err)

print(f"1..{n}")
print(f"# {n - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
