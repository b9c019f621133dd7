#!/usr/bin/python3
"""compare.py — check our C SigV4 signer against botocore, byte for byte.

Random mode (default): generate --count random requests (seeded; the seed is
printed so a failure can be replayed with --seed), sign every one with the C
signer (sigv4_driver, fed through a pipe) and with botocore's SigV4Auth (or
S3SigV4Auth for service s3) at the same pinned timestamp, and compare the
canonical request, the string to sign and every header of the signed
request.  The requests are meant to be awkward: odd paths ('..', '//',
'%2F', spaces, unicode, reserved characters), query strings with repeated,
unsorted and empty keys and values, headers with odd case, spacing and
repeated names, headers the signer replaces or skips, empty and binary
bodies, with and without session tokens.

Vectors mode (--vectors FILE): sign the published AWS test-suite vectors of
FILE with botocore and check it gets the published signatures, so the fixed
vectors and the random oracle agree with each other.

botocore is pinned to a timestamp without touching the clock: the timestamp
goes into request.context, then the same steps as SigV4Auth.add_auth run
(_modify_request_before_signing, canonical_request, string_to_sign,
signature, _inject_signature_to_request).

Run with Debian's /usr/bin/python3, which sees python3-botocore.  The
secrets here are random test strings.
"""
import argparse
import os
import random
import subprocess
import sys

import botocore
from botocore.auth import S3SigV4Auth, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


# ------------------------------------------------------------- wire format

def esc(data):
    """Escape bytes (or str, as UTF-8) for sigv4_driver's input."""
    if isinstance(data, str):
        data = data.encode('utf-8')
    out = []
    for b in data:
        if b == 0x5C:
            out.append('\\\\')
        elif b <= 0x20 or b >= 0x7F:
            out.append('\\x%02x' % b)
        else:
            out.append(chr(b))
    return ''.join(out)


def unesc(text):
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == '\\' and text[i + 1] == '\\':
            out.append(0x5C)
            i += 2
        elif c == '\\' and text[i + 1] == 'x':
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
        else:
            out.extend(c.encode('utf-8'))
            i += 1
    return bytes(out)


def case_text(name, c):
    lines = ['begin %s' % name,
             'method ' + esc(c['method']),
             'url ' + esc(c['url'])]
    for n, v in c['headers']:
        lines.append('header %s %s' % (esc(n), esc(v)))
    if c['body'] is not None:
        lines.append('body ' + esc(c['body']))
    lines += ['region ' + esc(c['region']),
              'service ' + esc(c['service']),
              'access_key_id ' + esc(c['akid']),
              'secret_access_key ' + esc(c['secret'])]
    if c['token'] is not None:
        lines.append('session_token ' + esc(c['token']))
    lines += ['amz_date ' + c['amz_date'], 'end', '']
    return '\n'.join(lines)


def parse_driver_output(text):
    results = {}
    cur = None
    for line in text.split('\n'):
        if not line:
            continue
        if line.startswith('begin '):
            cur = {}
            results[line[6:]] = cur
        elif line == 'end':
            cur = None
        else:
            key, _, value = line.partition(' ')
            cur[key] = unesc(value).decode('utf-8') if key != 'status' else value
    return results


# ----------------------------------------------------------------- oracle

def botocore_sign(c):
    creds = Credentials(c['akid'], c['secret'], c['token'])
    cls = S3SigV4Auth if c['service'] == 's3' else SigV4Auth
    auth = cls(creds, c['service'], c['region'])
    req = AWSRequest(method=c['method'], url=c['url'], data=c['body'])
    for n, v in c['headers']:
        req.headers[n] = v      # HTTPHeaders appends: repeated names stay
    req.context['timestamp'] = c['amz_date']
    auth._modify_request_before_signing(req)
    creq = auth.canonical_request(req)
    sts = auth.string_to_sign(req, creq)
    sig = auth.signature(sts, req)
    auth._inject_signature_to_request(req, sig)
    return creq, sts, sig, list(req.headers.items())


# -------------------------------------------------------------- generator

METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'PATCH', 'OPTIONS',
           'post', 'Get', 'X-CUSTOM', 'M-SEARCH']
HOSTS = [('https', 'api.sagemaker.us-east-1.amazonaws.com'),
         ('https', 'example.amazonaws.com'),
         ('http', '127.0.0.1:8080'),
         ('http', 'localhost:80'),
         ('https', 'Example.AmazonAWS.com:443'),
         ('http', '[::1]:9000'),
         ('https', '[2001:DB8::1]'),
         ('HTTPS', 'runtime.sagemaker.eu-west-1.amazonaws.com'),
         ('http', '127.0.0.1:0443'),
         ('https', 'host_with-underscore.example:'),
         ('Http', 'h.example:443'),
         ('https', 'h.example:8443')]
SEGMENTS = ['a', 'b', 'sagemaker', 'TrainingJobs', '', '.', '..', '...',
            'a b', '  two  spaces ', 'sp%20ace', '%2F', 'a%2Fb', '%2e%2e',
            '%252F', '~user', '\u1234', '\u00e9', '\u65e5\u672c\u8a9e',
            '\U0001F600', "!$&'()*+,;=:@", '-_.~', '[x]', '{y}', '|', '^',
            '`', '"q"', '<>', '100%', '%', '+plus', '\\back', 'x=y',
            'caf\u00e9 au lait', '\u00a0']
QKEYS = ['a', 'A', 'b', 'Param1', 'param1', 'Action', '', 'x-amz-meta',
         'k%20y', '%E1%88%B4', '\u1234', 'a.b', '~', 'key+plus', 'Z', 'aa',
         'a-', 'Version', '%2F']
QVALUES = ['', '1', '2', '10', 'v%2Fw', 'a=b', '\u1234', 'spaced value',
           '%', 'x+y', '/slash/', '?q', 'value1', 'A', 'a', '%7E', '~']
HNAMES = ['Content-Type', 'X-Amz-Target', 'X-Custom', 'My-Header1', 'Accept',
          'Content-Length', 'X-Amz-Meta-Foo', 'User-Agent', 'Expect',
          'X-Amzn-Trace-Id', 'X-Amz-Date', 'X-Amz-Security-Token',
          'Authorization', 'Host', 'a', 'Z-Last', "!#$%&'*+-.^_`|~",
          'X-Amz-User-Agent', 'amz-sdk-invocation-id', 'Accept-Encoding']
HVALUES = ['value', 'a   b', ' lead', 'trail ', '\tTab\t', '', ' ', '\t',
           'multi  \t  space', '\u00e9', '\u00a0nbsp\u00a0', 'x\u3000y',
           '\u2003em', '\u0085nel', 'quote"d', '1,2,3',
           'application/x-amz-json-1.1', 'SageMaker.CreateTrainingJob',
           'trace=1;x', 'Root=1-5759e988-bd862e3fe1be46a994272793',
           '  a  b  c  ', '\u200bzero-width', 'x\u2028y', '\u180e']
REGIONS = ['us-east-1', 'eu-west-1', 'ap-southeast-2', 'cn-north-1',
           'us-gov-west-1', 'il-central-1']
SERVICES = ['sagemaker'] * 6 + ['service', 'execute-api', 'sts', 's3', 's3']
B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'


def rand_case(rng):
    scheme, host = rng.choice(HOSTS)
    path_kind = rng.random()
    if path_kind < 0.08:
        path = ''
    elif path_kind < 0.15:
        path = '/'
    else:
        segs = [rng.choice(SEGMENTS) for _ in range(rng.randint(1, 7))]
        path = '/' + '/'.join(segs)
        if rng.random() < 0.2:
            path += '/'
        if rng.random() < 0.1:
            path = '/' + path
    query = ''
    qk = rng.random()
    if qk < 0.1:
        query = '?'
    elif qk < 0.65:
        pieces = []
        for _ in range(rng.randint(1, 8)):
            k = rng.choice(QKEYS)
            r = rng.random()
            if r < 0.15:
                pieces.append(k)            # no '='
            elif r < 0.2:
                pieces.append('')           # empty piece: "&&"
            else:
                pieces.append(k + '=' + rng.choice(QVALUES))
        if rng.random() < 0.3:
            pieces += [pieces[0]] * rng.randint(1, 2)   # repeats
        rng.shuffle(pieces)
        query = '?' + '&'.join(pieces)
        if rng.random() < 0.1:
            query += '&'
    frag = '#' + rng.choice(['frag', 'a?b=c', '']) if rng.random() < 0.08 else ''
    url = '%s://%s%s%s%s' % (scheme, host, path, query, frag)

    headers = []
    for _ in range(rng.randint(0, 9)):
        name = rng.choice(HNAMES)
        style = rng.random()
        if style < 0.3:
            name = name.lower()
        elif style < 0.4:
            name = name.upper()
        elif style < 0.5:
            name = ''.join(ch.upper() if rng.random() < 0.5 else ch.lower() for ch in name)
        ln = name.lower()
        if ln == 'host':
            value = rng.choice(['example.amazonaws.com', ' Other.Host:8080 ', 'a  b'])
        elif ln == 'content-length':
            value = str(rng.randint(0, 999))
        else:
            value = ''.join(rng.choice(HVALUES) for _ in range(rng.randint(1, 3)))
        headers.append((name, value))
        if rng.random() < 0.15:             # same name again: multiple values
            headers.append((rng.choice([name, name.lower(), name.upper()]),
                            rng.choice(HVALUES)))
    if rng.random() < 0.05:
        headers.append(('X-Amz-Content-SHA256',
                        rng.choice(['UNSIGNED-PAYLOAD', '  padded  ', '%064x' % rng.getrandbits(256)])))

    bk = rng.random()
    if bk < 0.2:
        body = None
    elif bk < 0.3:
        body = b''
    elif bk < 0.6:
        body = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 400)))
    elif bk < 0.8:
        body = ('{"TrainingJobName": "fairshare-%d-1", "Note": "\u00e9\u1234"}'
                % rng.randint(1, 10 ** 9)).encode('utf-8')
    else:
        body = bytes(rng.choice([0, 10, 13, 255, 32, 92]) for _ in range(rng.randint(1, 50)))

    tk = rng.random()
    if tk < 0.45:
        token = None
    elif tk < 0.5:
        token = ''
    else:
        token = ''.join(rng.choice(B64) for _ in range(rng.randint(20, 600)))
        if rng.random() < 0.3:
            token += '=='
    akid = rng.choice(['AKIA', 'ASIA']) + ''.join(
        rng.choice('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567') for _ in range(16))
    secret = ''.join(rng.choice(B64) for _ in range(40))
    t = rng.randint(631152000, 4102444799)  # 1990 .. 2099
    import time
    amz_date = time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(t))
    return dict(method=rng.choice(METHODS), url=url, headers=headers, body=body,
                region=rng.choice(REGIONS), service=rng.choice(SERVICES),
                akid=akid, secret=secret, token=token, amz_date=amz_date)


# ---------------------------------------------------------------- compare

def our_final_headers(c, ours):
    """The request's headers after applying the signer's result to it."""
    added = [('Authorization', ours['authorization']),
             ('X-Amz-Date', ours['x_amz_date'])]
    if 'security_token' in ours:
        added.append(('X-Amz-Security-Token', ours['security_token']))
    if 'content_sha256' in ours:
        added.append(('X-Amz-Content-SHA256', ours['content_sha256']))
    replaced = {n.lower() for n, _ in added}
    return [(n, v) for n, v in c['headers'] if n.lower() not in replaced] + added


def compare_case(c, ours):
    if ours is None:
        return 'no output from the C signer'
    if ours.get('status') != 'ok':
        return 'the C signer refused it: %s' % ours.get('error')
    creq, sts, sig, bheaders = botocore_sign(c)
    if ours['canonical_request'] != creq:
        return 'canonical request differs:\n--- C\n%s\n--- botocore\n%s' % (
            ours['canonical_request'], creq)
    if ours['string_to_sign'] != sts:
        return 'string to sign differs:\n--- C\n%s\n--- botocore\n%s' % (ours['string_to_sign'], sts)
    mine = sorted(our_final_headers(c, ours))
    theirs = sorted(bheaders)
    if mine != theirs:
        return 'headers differ:\n--- C\n%r\n--- botocore\n%r' % (mine, theirs)
    if not ours['authorization'].endswith('Signature=' + sig):
        return 'signature differs'
    return None


def run_random(args):
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)
    rng = random.Random(seed)
    cases = [rand_case(rng) for _ in range(args.count)]
    text = ''.join(case_text('c%d' % i, c) for i, c in enumerate(cases))
    proc = subprocess.run([args.driver], input=text.encode('utf-8'),
                          stdout=subprocess.PIPE, timeout=300, check=True)
    results = parse_driver_output(proc.stdout.decode('utf-8'))
    failures = 0
    stats = {'s3': 0, 'token': 0, 'query': 0, 'repeated_header': 0, 'binary_body': 0}
    for i, c in enumerate(cases):
        why = compare_case(c, results.get('c%d' % i))
        if c['service'] == 's3':
            stats['s3'] += 1
        if c['token']:
            stats['token'] += 1
        if '?' in c['url']:
            stats['query'] += 1
        names = [n.lower() for n, _ in c['headers']]
        if len(names) != len(set(names)):
            stats['repeated_header'] += 1
        if c['body'] and any(b >= 0x80 or b < 0x20 for b in c['body']):
            stats['binary_body'] += 1
        if why:
            failures += 1
            if failures <= 5:
                print('MISMATCH case c%d (seed %d):\n  %r\n%s' % (i, seed, c, why))
    print('botocore %s from %s' % (botocore.__version__, os.path.dirname(botocore.__file__)))
    print('seed %d: %d cases, %d agree, %d differ (%s)' % (
        seed, len(cases), len(cases) - failures, failures,
        ', '.join('%s %d' % kv for kv in sorted(stats.items()))))
    return 1 if failures else 0


def run_vectors(args):
    cases = []
    cur = None
    with open(args.vectors, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('begin '):
                cur = dict(name=line[6:], headers=[], body=None, token=None)
            elif line == 'end':
                if 'expect_signature' in cur:
                    cases.append(cur)
                cur = None
            elif cur is not None and line:
                key, _, value = line.partition(' ')
                if key == 'header':
                    n, _, v = value.partition(' ')
                    cur['headers'].append((unesc(n).decode(), unesc(v).decode()))
                elif key == 'body':
                    cur['body'] = unesc(value)
                else:
                    cur[{'access_key_id': 'akid', 'secret_access_key': 'secret',
                         'session_token': 'token'}.get(key, key)] = unesc(value).decode('utf-8', 'surrogateescape')
    bad = 0
    for c in cases:
        _, _, sig, _ = botocore_sign(c)
        if sig != c['expect_signature']:
            bad += 1
            print('botocore disagrees with the published %s: %s' % (c['name'], sig))
    print('botocore reproduces %d of %d published vectors' % (len(cases) - bad, len(cases)))
    return 1 if bad or not cases else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--driver', default=os.path.join(os.path.dirname(__file__), 'sigv4_driver'))
    ap.add_argument('--count', type=int, default=3000)
    ap.add_argument('--seed', type=int)
    ap.add_argument('--vectors')
    args = ap.parse_args()
    if args.vectors:
        return run_vectors(args)
    return run_random(args)


if __name__ == '__main__':
    sys.exit(main())
