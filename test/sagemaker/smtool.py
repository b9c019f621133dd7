#!/usr/bin/python3
"""smtool.py — small helpers for test/sagemaker/client.test (stdlib only).

  ctl PORT METHOD PATH [JSON]      call the emulator's control API, print the answer
  stat PORT KEY[.KEY...]           one value of GET /_emulator/stats (JSON), "null" if absent
  ports LOG PREFIX                 distinct client ports of the emulator --log lines
                                   whose job name starts with PREFIX
  span LOG PREFIX                  seconds between the first and the last such line
  count LOG PREFIX                 how many such lines
  tls-server PORTFILE CERT KEY COUNTFILE [LIFETIME]
                                   an HTTPS server with a self-signed certificate that
                                   answers every request 200 {} and writes how many
                                   requests it answered to COUNTFILE; a client that
                                   verifies certificates must never get that far

Test data only; never given a secret.
"""
import http.server
import json
import os
import socketserver
import ssl
import sys
import threading
import urllib.request


def control(port, method, path, body=None):
    data = body.encode() if body is not None else None
    req = urllib.request.Request("http://127.0.0.1:%s/_emulator/%s" % (port, path.lstrip("/")),
                                 data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        return e.read().decode()


def log_lines(path, prefix):
    out = []
    with open(path) as f:
        for line in f:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if (d.get("name") or "").startswith(prefix):
                out.append(d)
    return out


def tls_server(port_file, cert, key, count_file, lifetime):
    served = [0]
    lock = threading.Lock()

    def bump():
        with lock:
            served[0] += 1
            tmp = count_file + ".tmp"
            with open(tmp, "w") as f:
                f.write("%d\n" % served[0])
            os.replace(tmp, count_file)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
            bump()
            body = b"{}"
            self.send_response(200)
            self.send_header("Content-Type", "application/x-amz-json-1.1")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

        def handle_error(self, request, client_address):
            pass  # failed handshakes are the point

    with open(count_file, "w") as f:
        f.write("0\n")
    srv = Server(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    timer = threading.Timer(lifetime, srv.shutdown)
    timer.daemon = True
    timer.start()
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, port_file)
    srv.serve_forever()


def main(argv):
    cmd = argv[1]
    if cmd == "ctl":
        print(control(argv[2], argv[3], argv[4], argv[5] if len(argv) > 5 else None))
    elif cmd == "stat":
        v = json.loads(control(argv[2], "GET", "stats"))
        for k in argv[3].split("."):
            v = v.get(k) if isinstance(v, dict) else None
        print(json.dumps(v))
    elif cmd == "ports":
        print(len({d["client"].rsplit(":", 1)[1] for d in log_lines(argv[2], argv[3])}))
    elif cmd == "span":
        ts = [d["t"] for d in log_lines(argv[2], argv[3])]
        print("%.3f" % (max(ts) - min(ts) if ts else -1))
    elif cmd == "agents":
        print(" ".join(sorted({str(d.get("user_agent")) for d in log_lines(argv[2], argv[3])})))
    elif cmd == "count":
        print(len(log_lines(argv[2], argv[3])))
    elif cmd == "tls-server":
        tls_server(argv[2], argv[3], argv[4], argv[5], float(argv[6]) if len(argv) > 6 else 600)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
