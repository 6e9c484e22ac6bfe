#!/usr/bin/env python3
"""Generate the NCCL / PyTorch message catalogue used by `fabricdoctor triage`.

Python 3 standard library only.  Nothing from the upstream projects is copied
into the output except the message strings themselves (format strings and
message literals); each is paired with a regex that matches the rendered text.

NCCL
    Reads a bare git mirror of NVIDIA/nccl (``git --git-dir=... show`` /
    ``ls-tree`` / ``cat-file --batch``), walks ``src/**`` C/C++ sources of every
    requested release tag and extracts the format string of each
    ``WARN(fmt, ...)`` and ``INFO(FLAGS, fmt, ...)`` call (multi-line calls,
    adjacent string-literal concatenation, escaped quotes, ``PRIu64``-style
    macros and ``#define NAME "literal"`` pieces are handled).

    Output: playbooks/catalogue/nccl-messages.tsv
        level  subsystem  file  first_tag  last_tag  format  regex

PyTorch
    Reads c10d sources from a directory laid out like a pytorch checkout
    (``--pytorch-src``; a full checkout or a partial copy of the files listed
    in PYTORCH_FILES) and extracts error / warning message literals:
    C10_THROW_ERROR, TORCH_CHECK*/TORCH_INTERNAL_ASSERT messages, TORCH_WARN*,
    LOG(ERROR|WARNING|INFO)/VLOG/C10D_* streams, c10::str(...) / fmt::format
    message builders and ``throw std::runtime_error(...)``; streamed or
    concatenated messages keep their literal pieces joined with ``{}``.  For
    the flight-recorder analyser (python) the printed / logged / raised strings
    and verdict constants are extracted.

    Output: playbooks/catalogue/pytorch-messages.tsv
        source  file  kind  message  regex

Regexes are restricted to syntax common to Python ``re`` and the Rust
``regex`` crate: literal text escaped with backslashes only in front of
``\\ . + * ? ( ) | [ ] { } ^ $ #``, groups ``( )`` / ``(?: )``, classes of
plain ranges, ``\\d \\s \\w \\t \\n``, counted repetition ``{0,N}``.  No
lookaround, no backreferences, no named groups, no inline flags.

Usage (regenerate everything):
    python3 scripts/gen-catalogue.py \\
        --nccl-git /work/.mirror/NVIDIA+nccl/repo --nccl-tags auto:v2.18 \\
        --pytorch-src /tmp/pytorch-src --pytorch-ref "<ref description>" \\
        --out playbooks/catalogue
"""

import argparse
import ast
import os
import re
import subprocess
import sys
from collections import OrderedDict, defaultdict

# --------------------------------------------------------------------------
# C/C++ lexer (enough for extracting call arguments)
# --------------------------------------------------------------------------

IDENT_RE = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
NUM_RE = re.compile(r"\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.']|)*")
STR_PREFIX_RE = re.compile(r'(?:u8|u|U|L)?R?"')
PUNCT3 = ('<<=', '>>=', '...', '->*')
PUNCT2 = ('::', '->', '++', '--', '<<', '>>', '<=', '>=', '==', '!=', '&&',
          '||', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '##', '.*')


class Tok:
    __slots__ = ('kind', 'val', 'line')

    def __init__(self, kind, val, line):
        self.kind = kind  # 'id', 'str', 'chr', 'num', 'p'
        self.val = val    # for 'str': raw body between the quotes (escapes kept)
        self.line = line

    def __repr__(self):
        return '%s:%r' % (self.kind, self.val)


def lex_c(text):
    """Tokenise C/C++ text. Comments dropped, backslash-newlines joined.
    String tokens keep their raw (still escaped) body; raw strings R"d(...)d"
    are converted to an escaped body."""
    # Join line continuations but keep line numbering approximately right.
    text = text.replace('\\\r\n', '').replace('\\\n', '')
    toks = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == '\n':
            line += 1
            i += 1
            continue
        if c in ' \t\r\f\v':
            i += 1
            continue
        if c == '#' and (not toks or toks[-1].line != line):
            m = re.match(r'#\s*(\w+)', text[i:i + 64])
            if m and m.group(1) in ('if', 'ifdef', 'ifndef', 'elif', 'else', 'endif',
                                     'include', 'pragma', 'undef', 'error', 'warning', 'line'):
                j = text.find('\n', i)
                i = n if j < 0 else j
                continue
        if c == '/' and i + 1 < n and text[i + 1] == '/':
            j = text.find('\n', i)
            i = n if j < 0 else j
            continue
        if c == '/' and i + 1 < n and text[i + 1] == '*':
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            line += text.count('\n', i, j)
            i = j
            continue
        m = STR_PREFIX_RE.match(text, i)
        if m and (m.end() - i == 1 or not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == '_'))):
            pre = m.group(0)
            j = m.end()
            if pre.endswith('R"'):
                k = text.find('(', j)
                delim = text[j:k]
                end = text.find(')' + delim + '"', k + 1)
                if end < 0:
                    end = n
                body = text[k + 1:end]
                line += body.count('\n')
                esc = body.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n').replace('\t', '\\t')
                toks.append(Tok('str', esc, line))
                i = end + len(delim) + 2
                continue
            k = j
            while k < n and text[k] != '"':
                if text[k] == '\\':
                    k += 2
                    continue
                if text[k] == '\n':  # unterminated; bail out of this literal
                    break
                k += 1
            toks.append(Tok('str', text[j:k], line))
            i = k + 1
            continue
        if c == "'":
            k = i + 1
            while k < n and text[k] != "'":
                if text[k] == '\\':
                    k += 2
                    continue
                if text[k] == '\n':
                    break
                k += 1
            toks.append(Tok('chr', text[i + 1:k], line))
            i = k + 1
            continue
        if c.isalpha() or c == '_':
            m = IDENT_RE.match(text, i)
            toks.append(Tok('id', m.group(0), line))
            i = m.end()
            continue
        if c.isdigit() or (c == '.' and i + 1 < n and text[i + 1].isdigit()):
            m = NUM_RE.match(text, i)
            toks.append(Tok('num', m.group(0), line))
            i = m.end()
            continue
        if text.startswith(PUNCT3, i):
            toks.append(Tok('p', text[i:i + 3], line))
            i += 3
            continue
        if text[i:i + 2] in PUNCT2:
            toks.append(Tok('p', text[i:i + 2], line))
            i += 2
            continue
        toks.append(Tok('p', c, line))
        i += 1
    return toks


OPEN = {'(': ')', '[': ']', '{': '}'}


def call_args(toks, k):
    """toks[k] is '(' ; return (list of argument token lists, index after ')')."""
    depth = 0
    args, cur = [], []
    i = k
    while i < len(toks):
        t = toks[i]
        if t.kind == 'p' and t.val in OPEN:
            depth += 1
            if depth > 1:
                cur.append(t)
        elif t.kind == 'p' and t.val in (')', ']', '}'):
            depth -= 1
            if depth == 0:
                args.append(cur)
                return args, i + 1
            cur.append(t)
        elif t.kind == 'p' and t.val == ',' and depth == 1:
            args.append(cur)
            cur = []
        elif t.kind == 'p' and t.val == ';' and depth >= 1:
            # Unbalanced (probably a preprocessor-split call); give up.
            return None, i
        else:
            if depth >= 1:
                cur.append(t)
        i += 1
    return None, i


def decode_c_escapes(s):
    """Decode the C escapes of a string-literal body into a python string."""
    out = []
    i, n = 0, len(s)
    simple = {'n': '\n', 't': '\t', 'r': '\r', 'a': '\a', 'b': '\b', 'f': '\f',
              'v': '\v', '\\': '\\', '"': '"', "'": "'", '?': '?', 'e': '\x1b'}
    while i < n:
        c = s[i]
        if c != '\\' or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = s[i + 1]
        if d in simple:
            out.append(simple[d])
            i += 2
        elif d in '01234567':
            m = re.match(r'[0-7]{1,3}', s[i + 1:])
            out.append(chr(int(m.group(0), 8)))
            i += 1 + len(m.group(0))
        elif d == 'x':
            m = re.match(r'[0-9a-fA-F]+', s[i + 2:])
            if m:
                out.append(chr(int(m.group(0), 16) & 0xff))
                i += 2 + len(m.group(0))
            else:
                out.append('x')
                i += 2
        else:
            out.append(d)
            i += 2
    return ''.join(out)


def show(s):
    """Render a decoded message for a TSV cell: backslash and control
    characters are written as C escapes, everything else as is."""
    out = []
    for ch in s:
        if ch == '\\':
            out.append('\\\\')
        elif ch == '\n':
            out.append('\\n')
        elif ch == '\t':
            out.append('\\t')
        elif ch == '\r':
            out.append('\\r')
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append('\\x%02x' % ord(ch))
        else:
            out.append(ch)
    return ''.join(out)


# --------------------------------------------------------------------------
# Regex building (common subset of Python re and Rust regex)
# --------------------------------------------------------------------------

RX_META = set('\\.+*?()|[]{}^$#')


def rx_lit(s):
    out = []
    for ch in s:
        if ch in RX_META:
            out.append('\\' + ch)
        elif ch == '\n':
            out.append('\\n')
        elif ch == '\t':
            out.append('\\t')
        elif ch == '\r':
            out.append('\\r')
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append('\\x%02x' % ord(ch))  # \xNN works in both engines
        else:
            out.append(ch)
    return ''.join(out)


# Segments: ('lit', text) | ('conv', spec-dict) | ('hole', name, regex)
PRINTF_RE = re.compile(
    r"%(?P<flags>[-+ #0']*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?"
    r"(?P<len>hh|h|ll|l|L|q|j|z|Z|t)?(?P<conv>[diouxXeEfFgGaAcspnm%])")

FLOAT_RX = r'[-+]?(?:[0-9]+\.?[0-9]*(?:[eE][-+]?[0-9]+)?|\.[0-9]+|inf|nan|INF|NAN)'


def conv_regex(m):
    conv = m.group('conv')
    flags = m.group('flags') or ''
    width = m.group('width')
    prec = m.group('prec')
    pad = ' *' if (width and '-' not in flags and '0' not in flags) or ' ' in flags else ''
    tail = ' *' if (width and '-' in flags) else ''
    if conv == '%':
        return '%'
    if conv in 'di':
        sign = '[-+]?' if '+' in flags else '-?'
        body = sign + '[0-9]+'
    elif conv == 'u':
        body = '[0-9]+'
    elif conv == 'o':
        body = '0?[0-7]+' if '#' in flags else '[0-7]+'
    elif conv == 'x':
        body = '(?:0x)?[0-9a-f]+' if '#' in flags else '[0-9a-f]+'
    elif conv == 'X':
        body = '(?:0X)?[0-9A-F]+' if '#' in flags else '[0-9A-F]+'
    elif conv in 'eEfFgGaA':
        body = FLOAT_RX
    elif conv == 'c':
        return '(.)'
    elif conv == 'p':
        body = '0x[0-9a-fA-F]+|\\(nil\\)|\\(null\\)|0'
    elif conv == 'n':
        return ''
    else:  # s, m
        if prec and prec.isdigit():
            return '(%s.{0,%s}%s)' % (pad, prec, tail)
        return None  # decided by caller (lazy / greedy)
    return '(%s(?:%s)%s)' % (pad, body, tail) if (pad or tail or '|' in body) else '(%s)' % body


def segments_to_regex(segs):
    """Build the regex for a list of segments; %s-like holes are lazy `.*?`
    except when last (then greedy `.*`)."""
    parts = []
    last_idx = len(segs) - 1
    while last_idx >= 0 and segs[last_idx][0] == 'lit' and segs[last_idx][1] == '':
        last_idx -= 1
    for idx, seg in enumerate(segs):
        if seg[0] == 'lit':
            parts.append(rx_lit(seg[1]))
        elif seg[0] == 'conv':
            r = conv_regex(seg[1])
            if r is None:
                r = '(.*)' if idx == last_idx else '(.*?)'
            parts.append(r)
        else:  # hole
            r = seg[2]
            if r is None:
                r = '(.*)' if idx == last_idx else '(.*?)'
            parts.append(r)
    rx = ''.join(parts)
    # Trailing newlines are emitted by the logger anyway: drop them.
    while rx.endswith('\\n'):
        rx = rx[:-2]
    return rx


def printf_segments(s, holes=None):
    """Split a decoded printf format into segments. `holes` maps the
    placeholder markers inserted for macro pieces to (name, regex)."""
    segs = []
    pos = 0
    marker_re = re.compile('\x00(\\d+)\x00')
    tokens = []
    for m in PRINTF_RE.finditer(s):
        tokens.append((m.start(), m.end(), 'conv', m))
    for m in marker_re.finditer(s):
        tokens.append((m.start(), m.end(), 'hole', m))
    tokens.sort(key=lambda t: t[0])
    for st, en, kind, m in tokens:
        if st < pos:
            continue
        if st > pos:
            segs.append(('lit', s[pos:st]))
        if kind == 'conv':
            if m.group('conv') == '%':
                segs.append(('lit', '%'))
            else:
                segs.append(('conv', m))
        else:
            name, rx = holes[int(m.group(1))]
            segs.append(('hole', name, rx))
        pos = en
    if pos < len(s):
        segs.append(('lit', s[pos:]))
    # merge adjacent literals
    merged = []
    for seg in segs:
        if seg[0] == 'lit' and merged and merged[-1][0] == 'lit':
            merged[-1] = ('lit', merged[-1][1] + seg[1])
        else:
            merged.append(seg)
    return merged


def render_format(s, holes):
    """Format column text: decoded string, control chars escaped, macro holes
    shown as {NAME} / {#arg}."""
    parts = re.split('\x00(\\d+)\x00', s)
    out = []
    for i, part in enumerate(parts):
        out.append(show(part) if i % 2 == 0 else '{%s}' % holes[int(part)][0])
    return ''.join(out)


# --------------------------------------------------------------------------
# NCCL
# --------------------------------------------------------------------------

# <inttypes.h> on LP64 glibc.
PRI_MACROS = {}
for _w, _l in (('8', 'hh'), ('16', 'h'), ('32', ''), ('64', 'l'), ('PTR', 'l'), ('MAX', 'l')):
    for _c in 'diouxX':
        PRI_MACROS['PRI%s%s' % (_c, _w)] = _l + _c
        PRI_MACROS['PRI%sLEAST%s' % (_c, _w)] = _l + _c
        PRI_MACROS['PRI%sFAST%s' % (_c, _w)] = ('l' if _w not in ('8',) else 'hh') + _c

NCCL_SRC_EXT = ('.cc', '.h', '.cpp', '.hpp', '.cu', '.cuh')
DEFINE_STR_RE = re.compile(r'^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+((?:"(?:[^"\\\n]|\\.)*"[ \t]*)+)(?://.*)?$', re.M)
STR_LIT_RE = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


class GitBlobs:
    def __init__(self, git_dir):
        self.git_dir = git_dir
        self.proc = subprocess.Popen(['git', '--git-dir', git_dir, 'cat-file', '--batch'],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read(self, sha):
        self.proc.stdin.write((sha + '\n').encode())
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().decode().split()
        size = int(header[2])
        data = self.proc.stdout.read(size)
        self.proc.stdout.read(1)
        return data.decode('utf-8', 'replace')

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def git(git_dir, *args):
    return subprocess.run(['git', '--git-dir', git_dir] + list(args), check=True,
                          stdout=subprocess.PIPE).stdout.decode()


def vkey(tag):
    return tuple(int(x) for x in re.findall(r'\d+', tag))


def resolve_tags(git_dir, spec):
    tags = [t for t in git(git_dir, 'tag').split() if re.match(r'^v\d+\.\d+\.\d+-\d+$', t)]
    tags.sort(key=vkey)
    if spec.startswith('auto:'):
        floor = vkey(spec[5:])
        return [t for t in tags if vkey(t)[:len(floor)] >= floor]
    if spec.startswith('latest-patch:'):
        floor = vkey(spec[len('latest-patch:'):])
        best = OrderedDict()
        for t in tags:
            if vkey(t)[:len(floor)] >= floor:
                best[vkey(t)[:2]] = t
        return list(best.values())
    want = [t.strip() for t in spec.split(',') if t.strip()]
    missing = [t for t in want if t not in tags]
    if missing:
        sys.exit('unknown tags: %s' % ', '.join(missing))
    return sorted(want, key=vkey)


def fmt_from_tokens(toks, defines_local, defines_global, stats):
    """Turn the tokens of a format argument into (decoded string, holes) or
    None when the argument is not made of literals/macros."""
    if not toks:
        return None
    parts = []
    holes = []
    i = 0
    saw_str = False
    while i < len(toks):
        t = toks[i]
        if t.kind == 'str':
            parts.append(decode_c_escapes(t.val))
            saw_str = True
        elif t.kind == 'id' and t.val in PRI_MACROS:
            parts.append(PRI_MACROS[t.val])
        elif t.kind == 'id':
            vals = defines_local.get(t.val) or defines_global.get(t.val)
            if vals and len(vals) == 1:
                parts.append(decode_c_escapes(next(iter(vals))))
            else:
                holes.append((t.val, None))
                parts.append('\x00%d\x00' % (len(holes) - 1))
                stats['macro_holes'] += 1
        elif t.kind == 'p' and t.val == '#' and i + 1 < len(toks) and toks[i + 1].kind == 'id':
            holes.append(('#' + toks[i + 1].val, r'(\w+)'))
            parts.append('\x00%d\x00' % (len(holes) - 1))
            i += 1
        else:
            return None
        i += 1
    if not saw_str:
        return None
    return ''.join(parts), holes


def defines_of(text):
    d = defaultdict(set)
    for m in DEFINE_STR_RE.finditer(text):
        body = ''.join(STR_LIT_RE.findall(m.group(2)))
        d[m.group(1)].add(body)
    return d


def extract_nccl_calls(text, defines_local, defines_global, stats):
    """Yield (level, subsystem, decoded_format, holes) for one file."""
    toks = lex_c(text)
    out = []
    for k, t in enumerate(toks):
        if t.kind != 'id' or t.val not in ('WARN', 'INFO'):
            continue
        if k + 1 >= len(toks) or toks[k + 1].val != '(':
            continue
        prev = toks[k - 1] if k else None
        if prev is not None and (prev.val in ('define', '.', '->', '::') or prev.kind == 'id' and prev.val in ('void', 'int', 'static')):
            continue
        args, _ = call_args(toks, k + 1)
        if args is None:
            stats['unbalanced'] += 1
            continue
        if t.val == 'WARN':
            level, sub, fmt_toks = 'WARN', '', args[0]
        else:
            if len(args) < 2:
                continue
            level = 'INFO'
            sub = ''.join(x.val if x.kind != 'str' else '"%s"' % x.val for x in args[0])
            if sub in ('FLAGS', '(FLAGS)'):
                continue  # the macro definition itself
            fmt_toks = args[1]
        r = fmt_from_tokens(fmt_toks, defines_local, defines_global, stats)
        if r is None:
            # conditional format `c ? "a" : "b"` -> both alternatives
            alts = split_ternary(fmt_toks)
            if alts:
                for a in alts:
                    ra = fmt_from_tokens(a, defines_local, defines_global, stats)
                    if ra is not None:
                        out.append((level, sub, ra[0], ra[1]))
                        stats['ternary_alternatives'] += 1
                continue
            stats['non_literal_format'] += 1
            continue
        out.append((level, sub, r[0], r[1]))
    return out


def split_ternary(toks):
    depth = 0
    q = c = None
    for i, t in enumerate(toks):
        if t.kind == 'p' and t.val in OPEN:
            depth += 1
        elif t.kind == 'p' and t.val in (')', ']', '}'):
            depth -= 1
        elif depth == 0 and t.kind == 'p' and t.val == '?' and q is None:
            q = i
        elif depth == 0 and t.kind == 'p' and t.val == ':' and q is not None and c is None:
            c = i
    if q is None or c is None:
        return None
    a, b = toks[q + 1:c], toks[c + 1:]
    # strip one level of parentheses
    res = []
    for x in (a, b):
        if len(x) >= 2 and x[0].val == '(' and x[-1].val == ')':
            x = x[1:-1]
        res.append(x)
    return res


def norm_sub(sub):
    if not sub:
        return ''
    if re.fullmatch(r'\(?[A-Z_| ]+\)?', sub):
        parts = [p for p in re.split(r'[|()\s]+', sub) if p]
        return '|'.join(parts)
    return sub


def build_nccl(git_dir, tags, stats):
    blobs = GitBlobs(git_dir)
    parsed_cache = {}     # (sha, defines-key) -> calls
    define_cache = {}     # sha -> defines
    text_cache = {}
    rows = {}             # (level, rendered_format) -> info
    per_tag_counts = OrderedDict()
    tag_index = {t: i for i, t in enumerate(tags)}
    for tag in tags:
        listing = git(git_dir, 'ls-tree', '-r', tag, '--', 'src')
        files = []
        for line in listing.splitlines():
            meta, path = line.split('\t', 1)
            _, typ, sha = meta.split()
            if typ == 'blob' and path.endswith(NCCL_SRC_EXT):
                files.append((path, sha))
        defines_global = defaultdict(set)
        for path, sha in files:
            if sha not in define_cache:
                if sha not in text_cache:
                    text_cache[sha] = blobs.read(sha)
                define_cache[sha] = defines_of(text_cache[sha])
            for k, v in define_cache[sha].items():
                defines_global[k] |= v
        dg_key = tuple(sorted((k, tuple(sorted(v))) for k, v in defines_global.items()))
        n_tag = 0
        for path, sha in files:
            key = (sha, hash(dg_key))
            if key not in parsed_cache:
                if sha not in text_cache:
                    text_cache[sha] = blobs.read(sha)
                local_stats = defaultdict(int)
                calls = extract_nccl_calls(text_cache[sha], define_cache[sha], defines_global, local_stats)
                parsed_cache[key] = (calls, local_stats)
            calls, local_stats = parsed_cache[key]
            if tag == tags[-1]:
                for k2, v2 in local_stats.items():
                    stats['nccl_' + k2 + '@' + tags[-1]] += v2
            rel = path[len('src/'):]
            for level, sub, fmt, holes in calls:
                rendered = render_format(fmt, holes)
                key2 = (level, rendered)
                info = rows.get(key2)
                if info is None:
                    info = rows[key2] = {'subs': set(), 'files': set(), 'tags': set(),
                                         'fmt': fmt, 'holes': holes}
                if sub:
                    info['subs'].add(norm_sub(sub))
                info['files'].add(rel)
                info['tags'].add(tag)
                n_tag += 1
        per_tag_counts[tag] = n_tag
    blobs.close()
    out = []
    skipped_bare = []
    for (level, rendered), info in rows.items():
        segs = printf_segments(info['fmt'], info['holes'])
        if not any(s[0] == 'lit' and re.search(r'[A-Za-z]|->', s[1]) for s in segs):
            skipped_bare.append((level, rendered))
            continue
        ts = sorted(info['tags'], key=lambda t: tag_index[t])
        out.append({
            'level': level,
            'subsystem': ','.join(sorted(info['subs'])),
            'file': ','.join(sorted(info['files'])),
            'first_tag': ts[0],
            'last_tag': ts[-1],
            'format': rendered,
            'regex': segments_to_regex(segs),
            '_segs': segs,
        })
    out.sort(key=lambda r: (r['file'], r['format'], r['level']))
    stats['nccl_skipped_no_literal_text'] = len(skipped_bare)
    return out, per_tag_counts, skipped_bare


# --------------------------------------------------------------------------
# PyTorch c10d
# --------------------------------------------------------------------------

PYTORCH_FILES = [
    'torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp',
    'torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp',
    'torch/csrc/distributed/c10d/NCCLUtils.cpp',
    'torch/csrc/distributed/c10d/NCCLUtils.hpp',
    'torch/csrc/distributed/c10d/Utils.hpp',
    'torch/csrc/distributed/c10d/TCPStore.cpp',
    'torch/csrc/distributed/c10d/TCPStoreBackend.cpp',
    'torch/csrc/distributed/c10d/TCPStoreLibUvBackend.cpp',
    'torch/csrc/distributed/c10d/FlightRecorder.cpp',
    'torch/csrc/distributed/c10d/FlightRecorderDetail.hpp',
    'torch/csrc/distributed/c10d/socket.cpp',
]
PYTORCH_PY_DIRS = ['torch/distributed/flight_recorder/components']

CHECK_MACROS = {
    # name -> (kind, index of first message argument)
    'TORCH_CHECK': ('TORCH_CHECK', 1),
    'TORCH_CHECK_WITH': ('TORCH_CHECK', 2),
    'TORCH_CHECK_VALUE': ('TORCH_CHECK', 1),
    'TORCH_CHECK_TYPE': ('TORCH_CHECK', 1),
    'TORCH_CHECK_INDEX': ('TORCH_CHECK', 1),
    'TORCH_CHECK_NOT_IMPLEMENTED': ('TORCH_CHECK', 1),
    'TORCH_CHECK_LINALG': ('TORCH_CHECK', 1),
    'TORCH_INTERNAL_ASSERT': ('TORCH_INTERNAL_ASSERT', 1),
    'TORCH_INTERNAL_ASSERT_DEBUG_ONLY': ('TORCH_INTERNAL_ASSERT', 1),
    'C10_THROW_ERROR': ('C10_THROW_ERROR', 1),
    'TORCH_WARN': ('TORCH_WARN', 0),
    'TORCH_WARN_ONCE': ('TORCH_WARN', 0),
    'TORCH_WARN_DEPRECATION': ('TORCH_WARN', 0),
    'C10D_NCCL_CHECK': ('C10D_NCCL_CHECK', 1),
    'C10D_NCCL_CHECK_NONBLOCKING': ('C10D_NCCL_CHECK', 1),
    'C10D_NCCL_CHECK_TIMEOUT': ('C10D_NCCL_CHECK', 2),
    'C10D_CHECK_WITH': ('TORCH_CHECK', 2),
    'C10D_THROW_ERROR': ('C10D_THROW_ERROR', 1),
    'C10_BUILD_ERROR': ('C10_BUILD_ERROR', 1),
    # fmt-style ("{}" holes) logging helpers of c10d/logging.h and socket.cpp
    'C10D_ERROR': ('C10D_ERROR', 0),
    'C10D_WARNING': ('C10D_WARNING', 0),
    'C10D_INFO': ('C10D_INFO', 0),
    'C10D_DEBUG': ('C10D_DEBUG', 0),
    'C10D_TRACE': ('C10D_TRACE', 0),
    'recordError': ('recordError', 0),
    'invalidArgument': ('invalidArgument', 0),
}
FMT_STYLE = {'C10D_ERROR', 'C10D_WARNING', 'C10D_INFO', 'C10D_DEBUG', 'C10D_TRACE', 'recordError'}
MSG_VAR_RE = re.compile(r'(?i)err|msg|message|reason|interpret|desc|str$|^versionString$')
BUILDERS = {'c10::str', 'fmt::format', 'std::runtime_error', 'std::logic_error',
            'std::invalid_argument', 'c10::Error', 'c10::DistError',
            'c10::DistNetworkError', 'c10::DistStoreError', 'c10::DistBackendError',
            'DistNetworkError', 'DistStoreError', 'DistBackendError'}
THROW_TYPES = {'std::runtime_error', 'std::logic_error', 'std::invalid_argument',
               'std::out_of_range', 'c10::Error', 'c10::DistError', 'c10::DistNetworkError',
               'c10::DistStoreError', 'c10::DistBackendError', 'DistNetworkError',
               'DistStoreError', 'DistBackendError', 'SocketError', 'TimeoutError'}
PH = '\x00H\x00'  # placeholder marker for non-literal pieces ({} in output)


def qual_name(toks, k):
    """Qualified identifier ending at toks[k] (e.g. c10::str)."""
    parts = [toks[k].val]
    j = k - 1
    while j >= 1 and toks[j].val == '::' and toks[j - 1].kind == 'id':
        parts.insert(0, toks[j - 1].val)
        j -= 2
    return '::'.join(parts), j + 1


CONSTANTS = {}  # per-file `constexpr const char* NAME = "..."` values (set by extract_cpp_messages)


def pieces_from_expr(toks, fmt_style=False):
    """Flatten a message expression into literal pieces and placeholders.
    Adjacent string literals are concatenated; anything else becomes {}.
    Nested c10::str(...)/fmt::format(...)/std::string("...") are flattened;
    identifiers naming a string constant of the same file are resolved."""
    out = []
    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        if t.kind == 'id' and t.val in CONSTANTS and (i + 1 >= n or toks[i + 1].val in ('<<', '+', ',')):
            out.append(('lit', CONSTANTS[t.val]))
            i += 1
            continue
        if t.kind == 'str':
            out.append(('lit', decode_c_escapes(t.val)))
            i += 1
            continue
        if t.kind == 'p' and t.val in ('+', '<<'):
            i += 1
            continue
        if t.kind == 'id':
            # qualified name followed by '(' ?
            j = i
            name = [t.val]
            while j + 2 < n and toks[j + 1].val == '::' and toks[j + 2].kind == 'id':
                name.append(toks[j + 2].val)
                j += 2
            q = '::'.join(name)
            if j + 1 < n and toks[j + 1].val == '(' and q in ('c10::str', 'fmt::format', 'std::string', 'std::string_view'):
                args, end = call_args(toks, j + 1)
                if args is not None:
                    if q == 'fmt::format':
                        out.extend(fmt_pieces(args))
                    else:
                        for a in args:
                            out.extend(pieces_from_expr(a))
                    i = end
                    continue
            # generic expression: swallow until the next top-level '<<' or '+'
        # non-literal operand: skip a whole operand
        depth = 0
        while i < n:
            u = toks[i]
            if u.kind == 'p' and u.val in OPEN:
                depth += 1
            elif u.kind == 'p' and u.val in (')', ']', '}'):
                depth -= 1
            elif depth == 0 and u.kind == 'p' and u.val in ('<<', '+'):
                break
            elif depth == 0 and u.kind == 'str':
                break
            i += 1
        out.append(('ph', None))
    return out


def fmt_pieces(args):
    """fmt::format("... {} ...", a, b): the format string with {} holes."""
    if not args:
        return []
    first = args[0]
    if first and all(t.kind == 'str' for t in first):
        s = ''.join(decode_c_escapes(t.val) for t in first)
        res = []
        pos = 0
        for m in re.finditer(r'\{\{|\}\}|\{[^{}]*\}', s):
            if m.group(0) in ('{{', '}}'):
                continue
            res.append(('lit', s[pos:m.start()]))
            res.append(('ph', None))
            pos = m.end()
        res.append(('lit', s[pos:]))
        return [(k, v.replace('{{', '{').replace('}}', '}') if v else v) for k, v in res]
    return [('ph', None)]


def normalise_pieces(pieces):
    """Merge literals, collapse consecutive placeholders."""
    res = []
    for k, v in pieces:
        if k == 'lit':
            if not v:
                continue
            if res and res[-1][0] == 'lit':
                res[-1] = ('lit', res[-1][1] + v)
            else:
                res.append(('lit', v))
        else:
            if res and res[-1][0] == 'ph':
                continue
            res.append(('ph', None))
    return res


def pieces_text(pieces):
    return ''.join(show(v) if k == 'lit' else '{}' for k, v in pieces)


def pieces_regex(pieces):
    segs = [('lit', v) if k == 'lit' else ('hole', '{}', None) for k, v in pieces]
    return segments_to_regex(segs)


def has_text(pieces):
    return any(k == 'lit' and re.search(r'[A-Za-z]{2}', v) for k, v in pieces)


CONST_RE = re.compile(r'(?:constexpr|const)\s+(?:const\s+)?(?:char|auto)\s*\*\s*(?:const\s+)?(\w+)\s*=\s*((?:"(?:[^"\\\n]|\\.)*"\s*)+);')


def statement_end(toks, j):
    """Index of the ';' ending the statement that contains toks[j] (depth-aware)."""
    depth = 0
    n = len(toks)
    while j < n:
        u = toks[j]
        if u.kind == 'p' and u.val in OPEN:
            depth += 1
        elif u.kind == 'p' and u.val in (')', ']', '}'):
            depth -= 1
            if depth < 0:
                return j
        elif depth == 0 and u.val == ';':
            return j
        j += 1
    return n


def extract_cpp_messages(text):
    """Return list of (kind, pieces, line) from C++ source text."""
    CONSTANTS.clear()
    res = []
    for m in CONST_RE.finditer(text):
        val = ''.join(decode_c_escapes(x) for x in STR_LIT_RE.findall(m.group(2)))
        CONSTANTS[m.group(1)] = val
        res.append(('constant', [('lit', val)], text.count('\n', 0, m.start()) + 1))
    toks = lex_c(text)
    n = len(toks)
    consumed = set()
    for k in range(n):
        t = toks[k]
        # fprintf(stream, "printf format", ...)
        if t.kind == 'id' and t.val in ('fprintf', 'printf', 'snprintf') and k + 1 < n and toks[k + 1].val == '(':
            args, end = call_args(toks, k + 1)
            idx = {'fprintf': 1, 'printf': 0, 'snprintf': 2}[t.val]
            if args and len(args) > idx and args[idx] and all(x.kind == 'str' for x in args[idx]):
                fmt = ''.join(decode_c_escapes(x.val) for x in args[idx])
                pieces = []
                for seg in printf_segments(fmt):
                    pieces.append(('lit', seg[1]) if seg[0] == 'lit' else ('ph', None))
                res.append((t.val, normalise_pieces(pieces), t.line))
                consumed.update(range(k, end))
            continue
    for k in range(n):
        t = toks[k]
        if t.kind != 'id':
            continue
        # macro-style checks / throws / warnings
        if t.val in CHECK_MACROS and k + 1 < n and toks[k + 1].val == '(':
            if k and toks[k - 1].val == 'define':
                continue
            kind, first = CHECK_MACROS[t.val]
            args, end = call_args(toks, k + 1)
            if not args or len(args) <= first:
                continue
            if t.val in FMT_STYLE:
                pieces = normalise_pieces(fmt_pieces(args[first:]))
            else:
                msg_toks = []
                for a in args[first:]:
                    msg_toks.extend(a)
                    msg_toks.append(Tok('p', '<<', a[-1].line if a else 0))
                pieces = normalise_pieces(pieces_from_expr(msg_toks))
            res.append((kind, pieces, t.line))
            for x in range(k, end):
                consumed.add(x)
            continue
        # LOG(ERROR) << ... ;  LOG(WARNING) / LOG(INFO) / VLOG(n) / LOG_FIRST_N
        if t.val in ('LOG', 'VLOG', 'LOG_EVERY_N', 'LOG_FIRST_N', 'LOG_IF') and k + 1 < n and toks[k + 1].val == '(':
            args, end = call_args(toks, k + 1)
            if args is None:
                continue
            sev = ''.join(x.val for x in args[0]) if args and args[0] else ''
            kind = '%s(%s)' % (t.val, sev) if t.val != 'VLOG' else 'VLOG'
            if t.val in ('LOG_EVERY_N', 'LOG_FIRST_N', 'LOG_IF'):
                kind = 'LOG(%s)' % sev
            if end < n and toks[end].val == '<<':
                j = end + 1
                depth = 0
                stmt = []
                while j < n:
                    u = toks[j]
                    if u.kind == 'p' and u.val in OPEN:
                        depth += 1
                    elif u.kind == 'p' and u.val in (')', ']', '}'):
                        depth -= 1
                        if depth < 0:
                            break
                    elif depth == 0 and u.val == ';':
                        break
                    stmt.append(u)
                    j += 1
                pieces = normalise_pieces(pieces_from_expr(stmt))
                res.append((kind, pieces, t.line))
                for x in range(k, j):
                    consumed.add(x)
            continue
    # builders: c10::str(...), fmt::format(...), throw X("...")  not already
    # inside a check/log statement
    for k in range(n):
        if k in consumed:
            continue
        t = toks[k]
        if t.kind != 'id' or k + 1 >= n or toks[k + 1].val != '(':
            continue
        q, start = qual_name(toks, k)
        if q not in BUILDERS and q not in THROW_TYPES:
            continue
        if any(x in consumed for x in range(start, k)):
            continue
        args, end = call_args(toks, k + 1)
        if args is None:
            continue
        is_throw = start > 0 and toks[start - 1].val == 'throw'
        if q == 'fmt::format':
            pieces = normalise_pieces(fmt_pieces(args))
        else:
            msg_toks = []
            for a in args:
                msg_toks.extend(a)
                msg_toks.append(Tok('p', '<<', 0))
            pieces = normalise_pieces(pieces_from_expr(msg_toks))
        if is_throw:
            kind = 'throw ' + q
        elif q in THROW_TYPES:
            kind = q
        else:
            kind = q
        res.append((kind, pieces, t.line))
        for x in range(k, end):
            consumed.add(x)
    # message variables: `[type] NAME = "..." + x + "...";`, `NAME += "...";`,
    # `return "..." + x;` and std::stringstream `ss << "..." << x;`
    for k in range(n):
        if k in consumed:
            continue
        t = toks[k]
        start = None
        kind = None
        if t.kind == 'p' and t.val in ('=', '+=') and k > 0 and toks[k - 1].kind == 'id' \
                and MSG_VAR_RE.search(toks[k - 1].val):
            start, kind = k + 1, 'message-variable'
        elif t.kind == 'id' and t.val == 'return':
            start, kind = k + 1, 'return'
        elif t.kind == 'id' and t.val in ('ss', 'oss', 'os', 'msg') and k + 1 < n and toks[k + 1].val == '<<' \
                and (k == 0 or toks[k - 1].val in (';', '{', '}')):
            start, kind = k + 2, 'stringstream'
        if start is None:
            continue
        end = statement_end(toks, start)
        expr = toks[start:end]
        if not expr or any(x in consumed for x in range(start, end)):
            continue
        if not any(x.kind == 'str' for x in expr):
            continue
        # only literal-led or '+'/'<<' concatenations (skip function calls with literal args)
        top = [x for x in expr if x.kind == 'p' and x.val in ('+', '<<', '?', ':')]
        if expr[0].kind != 'str' and not top:
            continue
        alts = split_ternary(expr) if any(x.val == '?' for x in expr) else None
        for part in (alts or [expr]):
            pieces = normalise_pieces(pieces_from_expr(part))
            res.append((kind, pieces, t.line))
        consumed.update(range(start, end))
    return res


# ---- python (flight recorder analyser) ----

PY_LOG_FUNCS = {'print': 'print', 'info': 'logger.info', 'warning': 'logger.warning',
                'error': 'logger.error', 'debug': 'logger.debug', 'critical': 'logger.critical',
                'warn': 'warnings.warn', 'exception': 'logger.exception'}


def py_pieces(node):
    """Literal pieces of a python string expression (f-strings, %, +, .format)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [('lit', node.value)]
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                out.append(('lit', v.value))
            else:
                out.append(('ph', None))
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return py_pieces(node.left) + py_pieces(node.right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and \
            isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
        s = node.left.value
        out, pos = [], 0
        for m in PRINTF_RE.finditer(s):
            out.append(('lit', s[pos:m.start()]))
            out.append(('lit', '%') if m.group('conv') == '%' else ('ph', None))
            pos = m.end()
        out.append(('lit', s[pos:]))
        return out
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == 'format' and isinstance(node.func.value, ast.Constant) and \
            isinstance(node.func.value.value, str):
        s = node.func.value.value
        out, pos = [], 0
        for m in re.finditer(r'\{\{|\}\}|\{[^{}]*\}', s):
            if m.group(0) in ('{{', '}}'):
                continue
            out.append(('lit', s[pos:m.start()]))
            out.append(('ph', None))
            pos = m.end()
        out.append(('lit', s[pos:]))
        return out
    return [('ph', None)]


def py_kind(call):
    f = call.func
    if isinstance(f, ast.Name):
        if f.id == 'print':
            return 'print'
        if f.id[:1].isupper() and (f.id.endswith('Error') or f.id.endswith('Exception') or f.id.endswith('Warning')):
            return 'exception:' + f.id
        return None
    if isinstance(f, ast.Attribute):
        if f.attr in PY_LOG_FUNCS and isinstance(f.value, ast.Name) and \
                f.value.id in ('logger', 'log', 'logging', 'warnings', 'fr_logger', 'self'):
            return PY_LOG_FUNCS[f.attr] if f.value.id != 'warnings' else 'warnings.warn'
        if f.attr in PY_LOG_FUNCS and isinstance(f.value, ast.Attribute) and f.value.attr in ('logger', 'log'):
            return PY_LOG_FUNCS[f.attr]
    return None


def py_printf_pieces(node):
    """Pieces of a logging-style format (`logger.info("x %s", v)`)."""
    out = []
    for k, v in py_pieces(node):
        if k != 'lit':
            out.append((k, v))
            continue
        pos = 0
        for m in PRINTF_RE.finditer(v):
            out.append(('lit', v[pos:m.start()]))
            out.append(('lit', '%') if m.group('conv') == '%' else ('ph', None))
            pos = m.end()
        out.append(('lit', v[pos:]))
    return out


def extract_py_messages(text):
    tree = ast.parse(text)
    res = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and node.msg is not None:
            res.append(('assert', normalise_pieces(py_pieces(node.msg)), node.lineno))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == 'MatchInfo' \
                and len(node.args) >= 2:
            state = node.args[0]
            label = state.attr if isinstance(state, ast.Attribute) else 'MatchInfo'
            res.append(('MatchInfo:' + label, normalise_pieces(py_pieces(node.args[1])), node.lineno))
            continue
        if isinstance(node, ast.Call):
            kind = py_kind(node)
            if kind and node.args:
                if kind.startswith('logger.') and (len(node.args) > 1 or isinstance(node.args[0], ast.Constant)):
                    pieces = py_printf_pieces(node.args[0]) if len(node.args) > 1 else py_pieces(node.args[0])
                else:
                    pieces = py_pieces(node.args[0])
                res.append((kind, normalise_pieces(pieces), node.lineno))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            # verdict constants, e.g. MatchState enum members / message tables
            pass
        elif isinstance(node, ast.ClassDef):
            # Enum-like verdict classes: NAME = "text" / NAME = auto() ...
            bases = [getattr(b, 'id', getattr(b, 'attr', '')) for b in node.bases]
            if any(b in ('Enum', 'IntEnum', 'StrEnum') for b in bases):
                for st in node.body:
                    if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                        res.append(('enum:%s' % node.name, [('lit', st.targets[0].id)], st.lineno))
    # Explicit verdict/mismatch strings kept in data structures: string
    # constants passed as keyword `culprit=`/`reason=`/`description=` or
    # returned/assigned in branches that mention mismatch.
    for node in ast.walk(tree):
        if isinstance(node, (ast.Return, ast.Assign)) and node.value is not None:
            v = node.value
            if isinstance(v, (ast.JoinedStr,)) or (isinstance(v, ast.Constant) and isinstance(v.value, str)):
                p = normalise_pieces(py_pieces(v))
                txt = pieces_text(p)
                target = node.targets[0].id if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) else ''
                if target.endswith('_msg'):
                    p = normalise_pieces(py_printf_pieces(v))
                    res.append(('assign:' + target, p, node.lineno))
                elif has_text(p) and re.search(r'(?i)mismatch|not match|missing|timeout|error|fail|hang|desync|verdict|culprit|unknown|invalid|expected', txt) and ' ' in txt:
                    res.append(('return' if isinstance(node, ast.Return) else 'assign', p, node.lineno))
    return res


def build_pytorch(src_dir, stats):
    rows = OrderedDict()
    files = [f for f in PYTORCH_FILES if os.path.exists(os.path.join(src_dir, f))]
    missing = [f for f in PYTORCH_FILES if f not in files]
    for d in PYTORCH_PY_DIRS:
        full = os.path.join(src_dir, d)
        if os.path.isdir(full):
            for name in sorted(os.listdir(full)):
                if name.endswith('.py'):
                    files.append(os.path.join(d, name))
        else:
            missing.append(d + '/*.py')
    for rel in files:
        with open(os.path.join(src_dir, rel), encoding='utf-8', errors='replace') as fh:
            text = fh.read()
        if rel.endswith('.py'):
            source = 'flight_recorder'
            msgs = extract_py_messages(text)
        else:
            source = 'c10d'
            msgs = extract_cpp_messages(text)
        for kind, pieces, _line in msgs:
            if not has_text(pieces):
                stats['pytorch_skipped_no_literal_text'] += 1
                continue
            msg = pieces_text(pieces)
            key = (source, rel, kind, msg)
            if key in rows:
                continue
            rows[key] = {'source': source, 'file': rel,
                         'kind': kind, 'message': msg, 'regex': pieces_regex(pieces),
                         '_sample': ''.join(v if k == 'lit' else 'some text' for k, v in pieces).rstrip('\n')}
    out = list(rows.values())
    # a `constexpr const char* X_MSG = "..."` declaration is seen both as a
    # constant and as a message variable: keep one row per (file, message)
    seen = {(r['file'], r['message']) for r in out if r['kind'] != 'message-variable'}
    out = [r for r in out if r['kind'] != 'message-variable' or (r['file'], r['message']) not in seen]
    out.sort(key=lambda r: (r['file'], r['kind'], r['message']))
    return out, missing


SAMPLE_CONV = {'d': '-12', 'i': '7', 'u': '42', 'o': '17', 'x': '1f', 'X': '1F', 'e': '1.5e+03',
               'E': '1.5E+03', 'f': '3.500000', 'F': '3.5', 'g': '0.25', 'G': '0.25', 'a': '1',
               'A': '1', 'c': 'Z', 'p': '0x7f3a00001000', 's': 'mlx5_0:1 (x)', 'm': 'Connection refused'}


def sample_from_segments(segs):
    out = []
    for seg in segs:
        if seg[0] == 'lit':
            out.append(seg[1])
        elif seg[0] == 'conv':
            m = seg[1]
            v = SAMPLE_CONV.get(m.group('conv'), '')
            if m.group('conv') == 'x' and '#' in (m.group('flags') or ''):
                v = '0x1f'
            w = m.group('width')
            if w and w.isdigit():
                fl = m.group('flags') or ''
                if '-' in fl:
                    v = v.ljust(int(w))
                else:
                    v = v.rjust(int(w), '0' if '0' in fl and m.group('conv') not in 'sc' else ' ')
            prec = m.group('prec')
            if m.group('conv') == 's' and prec and prec.isdigit():
                v = v[:int(prec)]
            out.append(v)
        else:
            out.append('ibv_reg_mr' if seg[2] == r'(\w+)' else 'some text')
    return ''.join(out).rstrip('\n')


# --------------------------------------------------------------------------
# Output / checks
# --------------------------------------------------------------------------

FORBIDDEN_RX = [r'\(\?[=!<]', r'\(\?P', r'\\[1-9]', r'\(\?[a-zA-Z]']


def check_regex(rx):
    for f in FORBIDDEN_RX:
        if re.search(f, rx):
            return 'uses unsupported construct %s' % f
    try:
        re.compile(rx)
    except re.error as e:
        return str(e)
    return None


def write_tsv(path, header, rows):
    with open(path, 'w', encoding='utf-8', newline='\n') as fh:
        fh.write('\t'.join(header) + '\n')
        for r in rows:
            cells = [r[h] for h in header]
            for c in cells:
                assert '\t' not in c and '\n' not in c, (path, c)
            fh.write('\t'.join(cells) + '\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--nccl-git', help='bare git dir of NVIDIA/nccl')
    ap.add_argument('--nccl-tags', default='auto:v2.18',
                    help='comma list of tags, "auto:vX.Y" (every release tag >= vX.Y) '
                         'or "latest-patch:vX.Y" (newest patch of each minor >= vX.Y)')
    ap.add_argument('--pytorch-src', help='directory laid out like a pytorch checkout')
    ap.add_argument('--pytorch-ref', default='unknown', help='free-text note of the ref read (kept in stats)')
    ap.add_argument('--out', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'playbooks', 'catalogue'))
    ap.add_argument('--self-test', action='store_true', help='round-trip test: each regex must match a synthetic rendering of its format')
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    stats = defaultdict(int)
    bad = 0
    if a.nccl_git:
        tags = resolve_tags(a.nccl_git, a.nccl_tags)
        rows, per_tag, skipped = build_nccl(a.nccl_git, tags, stats)
        for r in rows:
            err = check_regex(r['regex'])
            if err:
                bad += 1
                print('BAD REGEX %s: %s -- %s' % (r['format'], r['regex'], err), file=sys.stderr)
            elif a.self_test:
                sample = sample_from_segments(r['_segs'])
                if not re.fullmatch(r['regex'], sample):
                    bad += 1
                    print('SELF-TEST MISS %r !~ %s' % (sample, r['regex']), file=sys.stderr)
        write_tsv(os.path.join(a.out, 'nccl-messages.tsv'),
                  ['level', 'subsystem', 'file', 'first_tag', 'last_tag', 'format', 'regex'], rows)
        print('nccl: %d tags (%s .. %s), %d rows (%d WARN, %d INFO), %d format-only rows skipped'
              % (len(tags), tags[0], tags[-1], len(rows),
                 sum(r['level'] == 'WARN' for r in rows), sum(r['level'] == 'INFO' for r in rows),
                 len(skipped)))
        print('nccl tags: ' + ' '.join(tags))
        for t, c in per_tag.items():
            print('  %s: %d call sites' % (t, c))
        if skipped:
            print('  skipped (no literal text): ' + ' | '.join(repr(s[1]) for s in skipped))
    if a.pytorch_src:
        prow, missing = build_pytorch(a.pytorch_src, stats)
        for r in prow:
            err = check_regex(r['regex'])
            if err:
                bad += 1
                print('BAD REGEX %s: %s -- %s' % (r['message'], r['regex'], err), file=sys.stderr)
            elif a.self_test and not re.fullmatch(r['regex'], r['_sample']):
                bad += 1
                print('SELF-TEST MISS %r !~ %s' % (r['_sample'], r['regex']), file=sys.stderr)
        write_tsv(os.path.join(a.out, 'pytorch-messages.tsv'),
                  ['source', 'file', 'kind', 'message', 'regex'], prow)
        print('pytorch (%s): %d rows; missing inputs: %s' % (a.pytorch_ref, len(prow), ', '.join(missing) or 'none'))
    for k in sorted(stats):
        print('  stat %s = %s' % (k, stats[k]))
    if bad:
        sys.exit('%d regexes failed to compile' % bad)


if __name__ == '__main__':
    main()
