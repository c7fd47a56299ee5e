"""A renderer for the subset of Go template syntax the kerf chart uses.

Only what deploy/helm/kerf/templates/ needs, and an error for the rest:
  {{ PIPELINE }}, {{- and -}} trimming, {{/* comments */}},
  if / else / end, range over a list (with . the item), define / include,
  values: . .Values.a.b .Chart.X .Release.X "string" integers true false,
  functions: include, toYaml, nindent, indent, quote, default, b64enc,
  required, and, not.
Helm itself is not used: this is what tests/cli/test_helm_chart.py renders
the chart with, to compare its objects with the kustomize manifests.
"""
import base64
import re

import yaml


class TemplateError(Exception):
    pass


_ACTION = re.compile(r'\{\{(-\s)?(.*?)(\s-)?\}\}', re.S)


def _lex(src, name):
    """Text and action tokens, with {{- and -}} trimming applied."""
    toks = []
    pos = 0
    trim_next = False
    for m in _ACTION.finditer(src):
        text = src[pos:m.start()]
        if trim_next:
            text = text.lstrip(' \t\r\n')
        if m.group(1):
            text = text.rstrip(' \t\r\n')
        toks.append(('text', text))
        body = m.group(2).strip()
        if not (body.startswith('/*') and body.endswith('*/')):
            toks.append(('action', body))
        trim_next = bool(m.group(3))
        pos = m.end()
    text = src[pos:]
    if trim_next:
        text = text.lstrip(' \t\r\n')
    toks.append(('text', text))
    for kind, t in toks:
        if kind == 'text' and ('{{' in t or '}}' in t):
            raise TemplateError('%s: unbalanced delimiters near %r' % (name, t[:40]))
    return toks


def _parse(toks, i, name, stop):
    """Nodes up to one of the words in stop; returns (nodes, i, word)."""
    nodes = []
    while i < len(toks):
        kind, t = toks[i]
        i += 1
        if kind == 'text':
            nodes.append(('text', t))
            continue
        word = t.split(None, 1)[0] if t else ''
        if word in stop:
            return nodes, i, word
        if word in ('if', 'range'):
            body, i, w = _parse(toks, i, name, ('else', 'end'))
            other = []
            if w == 'else':
                other, i, w = _parse(toks, i, name, ('end',))
            if w != 'end':
                raise TemplateError('%s: %s without end' % (name, word))
            nodes.append((word, t.split(None, 1)[1], body, other))
        elif word == 'define':
            body, i, w = _parse(toks, i, name, ('end',))
            if w != 'end':
                raise TemplateError('%s: define without end' % name)
            nodes.append(('define', _args(t)[1], body))
        elif word in ('else', 'end'):
            raise TemplateError('%s: %s without if or range' % (name, word))
        else:
            nodes.append(('action', t))
    if stop:
        raise TemplateError('%s: missing {{ end }}' % name)
    return nodes, i, None


def _args(cmd):
    out = []
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"|(\S+)', cmd):
        out.append(('"', m.group(1)) if m.group(1) is not None else m.group(2))
    return out


def _split_pipe(t):
    parts, cur, q = [], '', False
    for ch in t:
        if ch == '"':
            q = not q
        if ch == '|' and not q:
            parts.append(cur.strip())
            cur = ''
        else:
            cur += ch
    parts.append(cur.strip())
    return parts


def _truthy(v):
    return not (v is None or v is False or v == 0 or v == '' or v == [] or v == {})


def _text(v):
    if v is None:
        return ''
    if v is True:
        return 'true'
    if v is False:
        return 'false'
    if isinstance(v, (dict, list)):
        raise TemplateError('a map or list printed without toYaml: %r' % (v,))
    return str(v)


class Renderer:
    def __init__(self, root):
        self.root = root          # {'Values': ..., 'Chart': ..., 'Release': ...}
        self.defines = {}

    def load(self, name, src):
        nodes, _, _ = _parse(_lex(src, name), 0, name, ())
        for n in nodes:
            if n[0] == 'define':
                self.defines[n[1][1]] = n[2]
        return nodes

    def _value(self, a, dot):
        if isinstance(a, tuple):
            return a[1]
        if a == '.':
            return dot
        if a in ('true', 'false'):
            return a == 'true'
        if re.fullmatch(r'-?[0-9]+', a):
            return int(a)
        if a.startswith('.') or a.startswith('$.'):
            cur = self.root if a.startswith('$') or a.split('.')[1] in ('Values', 'Chart', 'Release') else dot
            for key in a.lstrip('$').split('.')[1:]:
                if not isinstance(cur, dict):
                    raise TemplateError('%s: %r is not a map' % (a, cur))
                cur = cur.get(key)      # a missing key is nil, as in Go
            return cur
        raise TemplateError('unknown argument %r' % a)

    def _call(self, fn, v):
        if fn == 'include':
            name = v[0]
            if name not in self.defines:
                raise TemplateError('include of undefined template %r' % name)
            return self._exec(self.defines[name], v[1])
        if fn == 'toYaml':
            return yaml.safe_dump(v[0], default_flow_style=False, sort_keys=True).rstrip('\n')
        if fn in ('nindent', 'indent'):
            pad = ' ' * v[0]
            s = '\n'.join(pad + line for line in _text(v[1]).split('\n'))
            return '\n' + s if fn == 'nindent' else s
        if fn == 'quote':
            return '"' + _text(v[0]).replace('\\', '\\\\').replace('"', '\\"') + '"'
        if fn == 'default':
            return v[1] if _truthy(v[1]) else v[0]
        if fn == 'b64enc':
            return base64.b64encode(_text(v[0]).encode()).decode()
        if fn == 'required':
            if not _truthy(v[1]):
                raise TemplateError('required: %s' % v[0])
            return v[1]
        if fn == 'and':
            for x in v:
                if not _truthy(x):
                    return x
            return v[-1]
        if fn == 'not':
            return not _truthy(v[0])
        raise TemplateError('function %r is not in the subset' % fn)

    def _pipeline(self, t, dot):
        """Each command's result is the last argument of the next."""
        val, first = None, True
        for cmd in _split_pipe(t):
            a = _args(cmd)
            if not a:
                raise TemplateError('empty command in %r' % t)
            head, rest = a[0], a[1:]
            if isinstance(head, str) and re.fullmatch(r'[a-zA-Z][a-zA-Z0-9]*', head) \
                    and head not in ('true', 'false'):
                vals = [self._value(x, dot) for x in rest]
                val = self._call(head, vals if first else vals + [val])
            elif first and not rest:
                val = self._value(head, dot)
            else:
                raise TemplateError('cannot call %r in %r' % (head, t))
            first = False
        return val

    def _exec(self, nodes, dot):
        out = []
        for n in nodes:
            kind = n[0]
            if kind == 'text':
                out.append(n[1])
            elif kind == 'action':
                out.append(_text(self._pipeline(n[1], dot)))
            elif kind == 'if':
                out.append(self._exec(n[2] if _truthy(self._pipeline(n[1], dot)) else n[3], dot))
            elif kind == 'range':
                items = self._pipeline(n[1], dot)
                if items is not None and not isinstance(items, list):
                    raise TemplateError('range over %r: only lists are in the subset' % (items,))
                if _truthy(items):
                    for it in items:
                        out.append(self._exec(n[2], it))
                else:
                    out.append(self._exec(n[3], dot))
        return ''.join(out)

    def render(self, nodes):
        return self._exec(nodes, self.root)
