#!/usr/bin/python3
"""dispatch_bench.py — the measuring half of bench/dispatch/run.sh.

  latency    --pg PORT --emu PORT --jobs N --poll-ms MS
      N single-job INSERT transactions, spaced apart; for each, the client's
      wall-clock time when COMMIT returned against the emulator's arrival
      time of that job's CreateTrainingJob (create_arrival_times).
  throughput --pg PORT --emu PORT --jobs N --batches B --out FILE
      N jobs inserted in B transactions, back to back; the time from the
      first INSERT to the moment all N are RUNNING at the emulator, the
      requests in flight it saw, the dispatcher's create rate.  Writes what
      `direct' needs to FILE.
  direct     --emu PORT --jobs N --concurrency C --from FILE
      The emulator's own capacity for CreateTrainingJob: N signed creates
      (the dispatcher's request body, signed with botocore before the clock
      starts) sent straight to it by C threads on keep-alive connections;
      prints the rate and the dispatcher's rate as a fraction of it.

Talks to PostgreSQL with its own minimal frontend/backend protocol client
(trust authentication, simple queries), so that the time taken after COMMIT
is the moment the server's answer arrived, with no driver in between.
Standard library plus botocore (Debian's python3-botocore) for `direct'.
"""
import argparse
import json
import os
import random
import socket
import struct
import sys
import threading
import time
import urllib.request

EMU_KEY = "AKIAEMULATOR00000000"
EMU_SECRET = "emulator/secret/access/key"


class PgError(Exception):
    pass


class Pg:
    """One connection; query() runs a simple query and returns (rows,
    time.time() when ReadyForQuery arrived)."""

    def __init__(self, port, database="e2e", user="postgres"):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.rf = self.sock.makefile("rb")
        params = b"user\0" + user.encode() + b"\0database\0" + database.encode() + b"\0\0"
        self.sock.sendall(struct.pack("!ii", 8 + len(params), 196608) + params)
        self._until_ready()

    def _message(self):
        head = self.rf.read(5)
        if len(head) < 5:
            raise PgError("connection closed")
        kind, length = head[:1], struct.unpack("!i", head[1:])[0]
        return kind, self.rf.read(length - 4)

    def _until_ready(self):
        rows, error = [], None
        while True:
            kind, body = self._message()
            if kind == b"R" and struct.unpack("!i", body[:4])[0] != 0:
                raise PgError("the bench needs trust authentication")
            if kind == b"D":
                n = struct.unpack("!h", body[:2])[0]
                pos, row = 2, []
                for _ in range(n):
                    size = struct.unpack("!i", body[pos:pos + 4])[0]
                    pos += 4
                    if size < 0:
                        row.append(None)
                    else:
                        row.append(body[pos:pos + size].decode())
                        pos += size
                rows.append(row)
            elif kind == b"E" and error is None:
                fields = dict((f[:1], f[1:].decode(errors="replace")) for f in body.split(b"\0") if f)
                error = fields.get(b"M", "error")
            elif kind == b"Z":
                now = time.time()
                if error:
                    raise PgError(error)
                return rows, now

    def query(self, sql):
        data = sql.encode() + b"\0"
        self.sock.sendall(b"Q" + struct.pack("!i", 4 + len(data)) + data)
        return self._until_ready()

    def value(self, sql):
        return self.query(sql)[0][0][0]


def emu_get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d/_emulator/%s" % (port, path), timeout=60) as r:
        return json.loads(r.read())


def wait_for(pg, sql, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if pg.value(sql) == "t":
            return
        time.sleep(0.05)
    raise SystemExit("timed out after %d s waiting for %s" % (seconds, what))


def pct(values, p):
    """Nearest-rank percentile."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(-(-p * len(s) // 100)) - 1))
    return s[k]


INSERT = ("INSERT INTO fairshare.jobs (job_name, job_queue, request) "
          "SELECT '%s' || i, 'q', public.req() FROM generate_series(%d, %d) i")


def cpu_seconds(pid):
    """User + system CPU time of a process (all its threads) so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def latency(a):
    pg = Pg(a.pg)
    rng = random.Random(5)
    commits = {}
    # The dispatcher's first turn in a new session plans and caches
    # everything (a few hundred ms, once per dispatcher start): not counted.
    rows, t = pg.query("BEGIN; " + (INSERT % ("warm-", 1, 1)) + " RETURNING job_id; COMMIT")
    wait_for(pg, "SELECT training_job_arn IS NOT NULL FROM fairshare.jobs WHERE job_id = %s" % rows[0][0],
             60, "the warm-up job's ARN")
    warm = emu_get(a.emu, "stats?jobs=0")["create_arrival_times"]
    warm_ms = (warm[pg.value("SELECT training_job_name FROM fairshare.jobs WHERE job_id = %s"
                             % rows[0][0])] - t) * 1000
    for i in range(1, a.jobs + 1):
        rows, t = pg.query("BEGIN; " + (INSERT % ("lat-", i, i)) + " RETURNING job_id; COMMIT")
        commits[int(rows[0][0])] = t
        # Spaced apart, at no fixed phase to the dispatcher's own timers.
        time.sleep(rng.uniform(0.02, 0.06))
    wait_for(pg, "SELECT count(*) = %d FROM fairshare.jobs WHERE job_name LIKE 'lat-%%' "
             "AND training_job_arn IS NOT NULL" % a.jobs, 60, "the latency jobs' ARNs")
    names = dict((int(r[0]), r[1]) for r in pg.query(
        "SELECT job_id, training_job_name FROM fairshare.jobs WHERE job_name LIKE 'lat-%'")[0])
    arrivals = emu_get(a.emu, "stats?jobs=0")["create_arrival_times"]
    ms = [(arrivals[names[j]] - t) * 1000 for j, t in commits.items()]
    p50, p99 = pct(ms, 50), pct(ms, 99)
    if a.dump:
        with open(a.dump, "w") as f:
            for j, t in sorted(commits.items()):
                f.write("%d %.6f %.3f\n" % (j, t, (arrivals[names[j]] - t) * 1000))
    print("latency: %d single-job commits, commit (client, after COMMIT returned) to "
          "CreateTrainingJob arriving at the emulator" % len(ms))
    print("  p50 %.2f ms, p99 %.2f ms, max %.2f ms, min %.2f ms (the warm-up job before them: %.0f ms)" %
          (p50, p99, max(ms), min(ms), warm_ms))
    print("  p99 / poll_interval (%g s): %.4f (target < 0.1)" % (a.poll_ms / 1000, p99 / a.poll_ms))


def throughput(a):
    pg = Pg(a.pg)
    before = emu_get(a.emu, "stats?jobs=0")
    worker_pid = int(pg.value("SELECT pid FROM fairshare.dispatcher_state()"))
    cpu0 = cpu_seconds(worker_pid), cpu_seconds(a.emu_pid)
    per = -(-a.jobs // a.batches)
    t0 = time.time()
    for b in range(a.batches):
        lo, hi = b * per + 1, min(a.jobs, (b + 1) * per)
        pg.query(INSERT % ("tput-", lo, hi))
    t_inserted = time.time()
    wait_for(pg, "SELECT count(*) = %d FROM fairshare.jobs WHERE job_name LIKE 'tput-%%' "
             "AND training_job_arn IS NOT NULL" % a.jobs, a.timeout, "all jobs' ARNs")
    t_arns = time.time()
    cpu1 = cpu_seconds(worker_pid), cpu_seconds(a.emu_pid)
    after = emu_get(a.emu, "stats")
    names = [r[0] for r in pg.query(
        "SELECT training_job_name FROM fairshare.jobs WHERE job_name LIKE 'tput-%'")[0]]
    body = pg.value("SELECT fairshare.create_training_job_request(j)::text FROM fairshare.jobs j "
                    "WHERE job_name = 'tput-1'")
    created = [after["create_times"][n] for n in names]
    arrived = [after["create_arrival_times"][n] for n in names]
    running = sum(1 for n in names if after["jobs"][n]["status"] == "InProgress"
                  and after["jobs"][n]["secondary_status"] == "Training")
    once = sum(1 for n in names if after["create_calls"].get(n) == 1)
    if running != a.jobs:
        raise SystemExit("only %d of %d jobs are InProgress/Training at the emulator" % (running, a.jobs))
    calls = {op: after["calls"].get(op, 0) - before["calls"].get(op, 0) for op in after["calls"]}
    t_all = max(created)
    if a.dump:
        with open(a.dump, "w") as f:
            for t in sorted(arrived):
                f.write("%.6f\n" % (t - t0))
    window = max(arrived) - min(arrived)
    rate = (a.jobs - 1) / window if window > 0 else float("inf")
    print("throughput: %d jobs inserted in %d transactions (%.0f ms), capacity for all" %
          (a.jobs, a.batches, (t_inserted - t0) * 1000))
    print("  first INSERT to all %d InProgress/Training at the emulator: %.2f s (%.0f jobs/s end to end)" %
          (a.jobs, t_all - t0, a.jobs / (t_all - t0)))
    print("  first INSERT to first create: %.0f ms; first to last create: %.2f s = %.0f creates/s" %
          ((min(arrived) - t0) * 1000, window, rate))
    print("  all ARNs written in PostgreSQL %.2f s after the first INSERT" % (t_arns - t0))
    print("  requests in the window: %s; created exactly once (one call each): %d/%d" %
          (", ".join("%s %d" % (op, n) for op, n in sorted(calls.items()) if n), once, a.jobs))
    print("  max requests in flight at the emulator: %d" % after["max_in_flight"])
    print("  CPU busy over those %.2f s: dispatcher %.0f%%, emulator %.0f%% (of one core; the "
          "emulator is one Python process)" % (t_arns - t0, 100 * (cpu1[0] - cpu0[0]) / (t_arns - t0),
                                               100 * (cpu1[1] - cpu0[1]) / (t_arns - t0)))
    with open(a.out, "w") as f:
        json.dump({"rate": rate, "max_in_flight": after["max_in_flight"], "body": body}, f)


def direct(a):
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    with open(getattr(a, "from")) as f:
        state = json.load(f)
    template = json.loads(state["body"])
    creds = Credentials(EMU_KEY, EMU_SECRET)
    url = "http://127.0.0.1:%d/" % a.emu
    tag = "%x" % int(time.time())
    raw = []
    for i in range(a.jobs):
        template["TrainingJobName"] = "direct-%s-%d" % (tag, i)
        body = json.dumps(template).encode()
        req = AWSRequest(method="POST", url=url, data=body, headers={
            "Content-Type": "application/x-amz-json-1.1",
            "X-Amz-Target": "SageMaker.CreateTrainingJob"})
        SigV4Auth(creds, "sagemaker", "us-east-1").add_auth(req)
        lines = ["POST / HTTP/1.1", "Host: 127.0.0.1:%d" % a.emu, "Content-Length: %d" % len(body)]
        lines += ["%s: %s" % (k, v) for k, v in req.headers.items() if k.lower() != "host"]
        raw.append(("\r\n".join(lines) + "\r\n\r\n").encode() + body)

    failures = []

    def client(chunk, start):
        s = socket.create_connection(("127.0.0.1", a.emu))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        rf = s.makefile("rb")
        start.wait()
        for r in chunk:
            s.sendall(r)
            status = rf.readline()
            length = 0
            while True:
                line = rf.readline()
                if line in (b"\r\n", b""):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            rf.read(length)
            if b" 200 " not in status:
                failures.append(status)
        s.close()

    start = threading.Event()
    threads = [threading.Thread(target=client, args=(raw[k::a.concurrency], start))
               for k in range(a.concurrency)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    cpu0 = cpu_seconds(a.emu_pid)
    t0 = time.time()
    start.set()
    for t in threads:
        t.join()
    elapsed = time.time() - t0
    emu_cpu = (cpu_seconds(a.emu_pid) - cpu0) / elapsed
    if failures:
        raise SystemExit("%d direct creates failed: %s" % (len(failures), failures[0]))
    capacity = a.jobs / elapsed
    print("emulator capacity, measured directly: %d signed creates from %d keep-alive connections "
          "in %.2f s = %.0f creates/s (emulator CPU %.0f%%)" %
          (a.jobs, a.concurrency, elapsed, capacity, 100 * emu_cpu))
    print("dispatcher create rate / emulator capacity: %.0f / %.0f = %.2f "
          "(1.0 = dispatch limited by the emulator)" % (state["rate"], capacity, state["rate"] / capacity))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("latency")
    s.add_argument("--pg", type=int, required=True)
    s.add_argument("--emu", type=int, required=True)
    s.add_argument("--jobs", type=int, default=200)
    s.add_argument("--poll-ms", type=float, required=True)
    s.add_argument("--dump", help="write job id, commit time, latency ms per job here")
    s = sub.add_parser("throughput")
    s.add_argument("--pg", type=int, required=True)
    s.add_argument("--emu", type=int, required=True)
    s.add_argument("--jobs", type=int, default=5000)
    s.add_argument("--batches", type=int, default=5)
    s.add_argument("--emu-pid", type=int, required=True)
    s.add_argument("--timeout", type=int, default=240)
    s.add_argument("--out", required=True)
    s.add_argument("--dump", help="write each create's arrival, seconds after the first INSERT, here")
    s = sub.add_parser("direct")
    s.add_argument("--emu", type=int, required=True)
    s.add_argument("--jobs", type=int, default=5000)
    s.add_argument("--concurrency", type=int, required=True)
    s.add_argument("--emu-pid", type=int, required=True)
    s.add_argument("--from", required=True)
    a = p.parse_args()
    {"latency": latency, "throughput": throughput, "direct": direct}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
