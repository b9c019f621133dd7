#!/usr/bin/python3
"""metadata_server.py — fake AWS credential endpoints on 127.0.0.1 for tests.

  --mode container   the ECS/EKS container credentials endpoint: any GET
                     (or only --path) answers credentials JSON; with
                     --auth-token the Authorization header must equal it
                     (else 401).
  --mode imds        EC2 instance metadata, IMDSv2: PUT /latest/api/token
                     (with X-aws-ec2-metadata-token-ttl-seconds) hands out a
                     session token; GET /latest/meta-data/iam/security-
                     credentials/ and .../<role> answer only with a valid
                     X-aws-ec2-metadata-token (else 401).  --v1-only refuses
                     the PUT with 403, like an instance with IMDSv2 off.

Every credentials response carries a new key: AccessKeyId --key-prefix +
a 4-digit serial, SecretAccessKey --secret-prefix + serial, Token
--token-prefix + serial, Expiration now + --ttl seconds.  --fail-after N
answers 500 to credentials requests after N good ones; --bad-expiration-after
N answers, after N good ones, credentials whose Expiration is shaped right
but is no date (--bad-expiration, 2030-02-30 unless given); --bad-json answers a truncated JSON document
that contains a secret.

The port goes to --port-file once listening; request counts go to
--state-dir/counts (one "kind n" per line: token, role, creds, failed,
unauthorized, total), rewritten after every request, and IMDS session
tokens to --state-dir/imds_tokens so the test can look for them in logs.
Exits by itself after --lifetime seconds.  Test secrets only.
"""
import argparse
import datetime
import http.server
import json
import os
import secrets
import socketserver
import threading


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.counts = dict(token=0, role=0, creds=0, failed=0, unauthorized=0, total=0)
        self.serial = 0
        self.good = 0
        self.tokens = set()

    def write_counts(self):
        tmp = os.path.join(self.args.state_dir, 'counts.tmp')
        with open(tmp, 'w') as f:
            for k in sorted(self.counts):
                f.write('%s %d\n' % (k, self.counts[k]))
        os.replace(tmp, os.path.join(self.args.state_dir, 'counts'))

    def bump(self, kind):
        with self.lock:
            self.counts[kind] += 1
            self.counts['total'] += 1
            self.write_counts()

    def new_token(self):
        tok = 'IMDSTOKEN-' + secrets.token_hex(16)
        with self.lock:
            self.tokens.add(tok)
            with open(os.path.join(self.args.state_dir, 'imds_tokens'), 'a') as f:
                f.write(tok + '\n')
        return tok

    def credentials(self):
        """The body of a credentials response, or None when told to fail."""
        a = self.args
        with self.lock:
            if a.fail_after is not None and self.good >= a.fail_after:
                return None
            self.good += 1
            self.serial += 1
            n = self.serial
        if a.bad_json:
            return ('{"AccessKeyId": "%s%04d", "SecretAccessKey": "%s%04d", "Token": '
                    % (a.key_prefix, n, a.secret_prefix, n)).encode()
        exp = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=a.ttl)
        doc = {'AccessKeyId': '%s%04d' % (a.key_prefix, n),
               'SecretAccessKey': '%s%04d' % (a.secret_prefix, n),
               'Token': '%s%04d' % (a.token_prefix, n),
               'Expiration': exp.strftime('%Y-%m-%dT%H:%M:%SZ')}
        if a.bad_expiration_after is not None and n > a.bad_expiration_after:
            doc['Expiration'] = a.bad_expiration
        if a.mode == 'imds':
            doc.update(Code='Success', Type='AWS-HMAC',
                       LastUpdated=datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'))
        else:
            doc['RoleArn'] = 'arn:aws:iam::123456789012:role/fairshare-test'
        return json.dumps(doc).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body=b'', ctype='text/plain'):
        self.send_response(status)
        self.send_header('Content-Type', ctype)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def creds_reply(self):
        body = self.server.state.credentials()
        if body is None:
            self.server.state.bump('failed')
            self.reply(500, b'{"message": "failing on purpose"}', 'application/json')
        else:
            self.server.state.bump('creds')
            self.reply(200, body, 'application/json')

    def do_PUT(self):
        st = self.server.state
        length = int(self.headers.get('Content-Length') or 0)
        if length:
            self.rfile.read(length)
        if st.args.mode != 'imds' or self.path != '/latest/api/token':
            st.bump('unauthorized')
            return self.reply(404)
        if st.args.v1_only:
            st.bump('unauthorized')
            return self.reply(403)
        if not self.headers.get('X-aws-ec2-metadata-token-ttl-seconds'):
            st.bump('unauthorized')
            return self.reply(400)
        st.bump('token')
        self.reply(200, st.new_token().encode())

    def do_GET(self):
        st = self.server.state
        a = st.args
        if a.mode == 'container':
            if a.path and self.path != a.path:
                st.bump('unauthorized')
                return self.reply(404)
            if a.auth_token is not None and self.headers.get('Authorization') != a.auth_token:
                st.bump('unauthorized')
                return self.reply(401, b'{"message": "bad token"}', 'application/json')
            return self.creds_reply()
        base = '/latest/meta-data/iam/security-credentials/'
        if self.headers.get('X-aws-ec2-metadata-token') not in st.tokens:
            st.bump('unauthorized')
            return self.reply(401)
        if self.path == base:
            st.bump('role')
            return self.reply(200, a.role.encode())
        if self.path == base + a.role:
            return self.creds_reply()
        st.bump('unauthorized')
        self.reply(404)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--mode', choices=['container', 'imds'], required=True)
    ap.add_argument('--port-file', required=True)
    ap.add_argument('--state-dir', required=True)
    ap.add_argument('--path')
    ap.add_argument('--auth-token')
    ap.add_argument('--ttl', type=int, default=3600)
    ap.add_argument('--key-prefix', default='ASIATEST')
    ap.add_argument('--secret-prefix', default='TESTSECRET-')
    ap.add_argument('--token-prefix', default='TESTTOKEN-')
    ap.add_argument('--role', default='fairshare-test-role')
    ap.add_argument('--fail-after', type=int)
    ap.add_argument('--bad-expiration-after', type=int)
    ap.add_argument('--bad-expiration', default='2030-02-30T00:00:00Z')
    ap.add_argument('--bad-json', action='store_true')
    ap.add_argument('--v1-only', action='store_true')
    ap.add_argument('--lifetime', type=float, default=600)
    args = ap.parse_args()

    srv = Server(('127.0.0.1', 0), Handler)
    srv.state = State(args)
    srv.state.write_counts()
    timer = threading.Timer(args.lifetime, srv.shutdown)
    timer.daemon = True
    timer.start()
    tmp = args.port_file + '.tmp'
    with open(tmp, 'w') as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, args.port_file)
    srv.serve_forever()


if __name__ == '__main__':
    main()
