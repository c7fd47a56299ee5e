"""taplib: what the Python tests of tests/cli share: TAP lines, a summary
and the exit status, and reading a file as UTF-8.

    from taplib import check, finish, read
    check('the thing holds', cond, 'what was seen')
    sys.exit(finish())
"""

_count = {'n': 0, 'failed': 0}


def check(name, ok, detail=''):
    """One TAP line; on a failure, detail's first 20 lines as comments."""
    _count['n'] += 1
    print(('ok %d - %s' if ok else 'not ok %d - %s') % (_count['n'], name), flush=True)
    if not ok:
        _count['failed'] += 1
        for line in str(detail).splitlines()[:20]:
            print('#   ' + line)
    return ok


def skip(name, why):
    """A TAP line for a check that cannot run here."""
    _count['n'] += 1
    print('ok %d - %s # SKIP %s' % (_count['n'], name, why), flush=True)


def finish():
    """The plan and the summary line; the exit status (1 on a failure)."""
    n, failed = _count['n'], _count['failed']
    print('1..%d' % n)
    print('# %d passed, %d failed' % (n - failed, failed))
    return 1 if failed else 0


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()
