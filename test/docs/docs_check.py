"""test/docs/docs_check.py — the repository's documentation holds together.

Checks, printing one "ok:"/"FAILED:" line each and "N passed, M failed":
  - every docs/... path cited in src/, sql/, test/, bench/, demo/ and
    expected/ exists, and a heading quoted after it (docs/x.md, 'Heading'
    [and 'Other']) is a heading of that file;
  - every relative link in the Markdown files resolves to a file of the
    repository, and its #anchor to a heading there;
  - no file refers to a path outside the repository, or cites the design
    by section number instead of docs/;
  - README.md has at most 260 lines.
Usage: docs_check.py REPOSITORY-ROOT
"""
import os
import re
import sys

root = os.path.abspath(sys.argv[1])
passed = failed = 0
problems = {}


def check(name, ok, detail=''):
    global passed, failed
    if ok:
        passed += 1
        print('ok: ' + name)
    else:
        failed += 1
        print('FAILED: ' + name + ('\n  ' + detail.replace('\n', '\n  ') if detail else ''))


def files(*tops):
    for top in tops:
        base = os.path.join(root, top)
        if os.path.isfile(base):
            yield base
            continue
        for d, dirs, names in os.walk(base):
            names = [x for x in names if x != '.git']
            dirs[:] = [x for x in dirs if x not in ('.git', 'results', 'output_iso', 'log', 'tmp_check')]
            for n in sorted(names):
                p = os.path.join(d, n)
                if os.path.getsize(p) > 2_000_000:
                    continue
                try:
                    with open(p, encoding='utf-8') as f:
                        f.read(1)
                except (UnicodeDecodeError, OSError):
                    continue
                yield p


def read(p):
    with open(p, encoding='utf-8') as f:
        return f.read()


def rel(p):
    return os.path.relpath(p, root)


def slug(heading):
    """GitHub's anchor for a heading."""
    h = re.sub(r'[`*_]{2,}', '', heading.strip().lower())
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')


def headings(path):
    out = []
    in_code = False
    for line in read(path).split('\n'):
        if line.startswith('```'):
            in_code = not in_code
        elif not in_code:
            m = re.match(r'^#{1,6} +(.*?) *$', line)
            if m:
                out.append(m.group(1))
    return out


# --- citations of docs/ in code, SQL, tests, benchmarks ---------------------
leader = re.compile(r'^\s*(?:/?\*+|--+|#+|//+)?[ \t]*', re.M)
cite = re.compile(r"\bdocs/([\w./-]+\.md)(?:#[\w-]+)?((?:,?\s+(?:and\s+)?'[^'\n]{2,80}')*)")
cited = 0
bad = []
for p in files('src', 'sql', 'test', 'bench', 'demo', 'expected'):
    if rel(p).startswith('test/docs/'):
        continue
    text = leader.sub('', read(p)).replace('\n', ' ')
    for m in cite.finditer(text):
        cited += 1
        target = os.path.join(root, 'docs', m.group(1))
        if not os.path.isfile(target):
            bad.append('%s cites docs/%s, which does not exist' % (rel(p), m.group(1)))
            continue
        hs = headings(target)
        for quoted in re.findall(r"'([^']+)'", m.group(2)):
            if not any(quoted == h or h.endswith(' ' + quoted) for h in hs):
                bad.append("%s cites docs/%s, '%s': no such heading" % (rel(p), m.group(1), quoted))
check('every docs/ path cited in src, sql, test, bench, demo, expected exists, with its quoted heading (%d citations)' % cited,
      cited > 30 and not bad, '\n'.join(bad) or 'too few citations found: %d' % cited)

# --- Markdown links ---------------------------------------------------------
bad = []
links = 0
md = [p for p in files('.') if p.endswith('.md')]
for p in md:
    text = re.sub(r'```.*?```', '', read(p), flags=re.S)
    text = re.sub(r'`[^`\n]*`', '', text)
    for m in re.finditer(r'\]\(([^)\s]+)\)', text):
        url = m.group(1)
        if re.match(r'^[a-z]+:', url):
            continue
        links += 1
        path, _, anchor = url.partition('#')
        target = os.path.normpath(os.path.join(os.path.dirname(p), path)) if path else p
        if not target.startswith(root + os.sep) and target != root:
            bad.append('%s links outside the repository: %s' % (rel(p), url))
            continue
        if not os.path.exists(target):
            bad.append('%s links to %s, which does not exist' % (rel(p), url))
            continue
        if anchor and os.path.isfile(target) and target.endswith('.md'):
            if anchor not in [slug(h) for h in headings(target)]:
                bad.append('%s links to %s: no heading with that anchor' % (rel(p), url))
check('every relative Markdown link resolves, anchors included (%d links)' % links, links > 50 and not bad, '\n'.join(bad))

# --- nothing outside the repository ----------------------------------------
outside = re.compile(r'\.\./shared|shared/design|/work/|design' + r'\.md|design (?:section|§|[0-9])|\bissue' + r' #?[0-9]|other agent', re.I)
bad = []
for p in files('.'):
    # A released install script is kept byte for byte as it was released.
    if rel(p).startswith('test/docs/') or rel(p) == 'sql/fairshare--0.1.0.sql':
        continue
    for n, line in enumerate(read(p).split('\n'), 1):
        if outside.search(line):
            bad.append('%s:%d: %s' % (rel(p), n, line.strip()[:120]))
check('no file refers to a path outside the repository, to design section or issue numbers, or to the agents that built it', not bad, '\n'.join(bad[:40]))

# --- README length ----------------------------------------------------------
n = len(read(os.path.join(root, 'README.md')).split('\n')) - 1
check('README.md has at most 260 lines (%d)' % n, n <= 260)

print('%d passed, %d failed' % (passed, failed))
