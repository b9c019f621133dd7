"""bench/api/api_bench.py — load for bench/api/run.sh.

    python3 api_bench.py throughput CONFIG.json CLIENTS SECONDS
        CLIENTS processes, each with one keep-alive connection, send
        SubmitServiceJob requests signed and serialised before the clock
        starts (so neither is measured), as fast as answers come back, for
        SECONDS; answers are read with a minimal parser (RawConnection).
        Prints "rate <submits/s> client_cpu <share of one core per client>".
    python3 api_bench.py reads CONFIG.json N MIDDLE_JOB_ID
        For bench/api/reads.sh: N of each kind of ListServiceJobs and
        GetJobQueueSnapshot request on queue "q", one at a time, each signed
        just before it is sent; prints p50 and p99 of each in milliseconds.
    python3 api_bench.py dispatch CONFIG.json N POLL_MS
        For bench/api/dispatch.sh: a warm-up submit, then N submits 20-60 ms
        apart; each answer's arrival against its CreateTrainingJob's arrival
        at the emulator (config "emulator": its port); p50/p99 in ms and
        p99 / poll interval.
    python3 api_bench.py latency CONFIG.json N
        One client, N submits then N describes of those jobs, one at a time;
        prints p50 and p99 of each in milliseconds.
"""
import http.client
import json
import multiprocessing
import os
import socket
import sys
import time
import uuid

import botocore.auth
import botocore.awsrequest
import botocore.credentials

PAYLOAD = json.dumps({
    "TrainingJobName": "bench", "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
    "AlgorithmSpecification": {"TrainingImage": "123.dkr.ecr.us-east-1.amazonaws.com/train:1", "TrainingInputMode": "File"},
    "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"}, "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
    "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 15, "VolumeSizeInGB": 100}})


def signed(cfg, path, body):
    req = botocore.awsrequest.AWSRequest(method="POST", url=cfg["endpoint"] + path, data=body,
                                         headers={"Content-Type": "application/json"})
    botocore.auth.SigV4Auth(botocore.credentials.Credentials(*cfg["key"]), "batch", "us-east-1").add_auth(req)
    p = req.prepare()
    return p.body, dict(p.headers)


def submit_body(name):
    return json.dumps({"jobName": name, "jobQueue": "q", "serviceJobType": "SAGEMAKER_TRAINING",
                       "serviceRequestPayload": PAYLOAD, "clientToken": str(uuid.uuid4()),
                       "retryStrategy": {"attempts": 1}, "timeoutConfig": {"attemptDurationSeconds": 86400}})


def connect(cfg):
    host, port = cfg["endpoint"].split("://")[1].split(":")
    return http.client.HTTPConnection(host, int(port), timeout=30)


def raw_request(cfg, path, body, headers):
    """The whole HTTP/1.1 request as bytes, built before the clock starts."""
    head = "POST %s HTTP/1.1\r\nHost: %s\r\n" % (path, cfg["endpoint"].split("://")[1]) + "".join("%s: %s\r\n" % (k, v) for k, v in headers.items())
    if "Content-Length" not in headers:
        head += "Content-Length: %d\r\n" % len(body)
    return head.encode() + b"\r\n" + (body if isinstance(body, bytes) else body.encode())


class RawConnection:
    """One keep-alive connection that sends prepared bytes and reads just
    enough of each answer (status, Content-Length, body): much less CPU per
    request than http.client, so that the client is not what is measured."""

    def __init__(self, cfg):
        host, port = cfg["endpoint"].split("://")[1].split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def call(self, raw):
        self.sock.sendall(raw)
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buf += chunk
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        status = int(head[9:12])
        i = head.lower().find(b"content-length:")
        length = int(head[i + 15:head.index(b"\r\n", i) if b"\r\n" in head[i:] else len(head)]) if i >= 0 else 0
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            rest += chunk
        self.buf = rest[length:]
        return status, rest[:length]


def worker(cfg, n, seconds, ready, out):
    reqs = [raw_request(cfg, "/v1/submitservicejob", *signed(cfg, "/v1/submitservicejob",
                                                             submit_body("bench-%d-%d" % (os.getpid(), i))))
            for i in range(n)]
    conn = RawConnection(cfg)
    done = 0
    error = None
    # Every client signs first, then all start together and stop together.
    ready.wait()
    t0 = time.time()
    c0 = time.process_time()
    try:
        for raw in reqs:
            if time.time() - t0 >= seconds:
                break
            status, _ = conn.call(raw)
            if status != 200:
                error = "status %d" % status
                break
            done += 1
    except Exception as e:      # the parent must hear back either way
        error = repr(e)
    out.put((done, time.time() - t0, time.process_time() - c0, error))


def throughput(cfg, clients, seconds):
    # Enough pre-signed requests for a rate well above what the server does.
    n = int(seconds * 4000 / clients) + 100
    q = multiprocessing.Queue()
    ready = multiprocessing.Barrier(clients)
    procs = [multiprocessing.Process(target=worker, args=(cfg, n, seconds, ready, q)) for _ in range(clients)]
    for p in procs:
        p.start()
    results = [q.get() for _ in procs]
    for p in procs:
        p.join()
    for r in results:
        if r[3]:
            raise SystemExit("a client failed: " + r[3])
    done = sum(r[0] for r in results)
    wall = max(r[1] for r in results)
    cpu = sum(r[2] for r in results) / sum(r[1] for r in results)
    if any(r[0] == n for r in results):
        print("warning: a client ran out of pre-signed requests", file=sys.stderr)
    print("rate %.0f client_cpu %.2f" % (done / wall, cpu))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] * 1000


def latency(cfg, n):
    subs = [signed(cfg, "/v1/submitservicejob", submit_body("lat-%d" % i)) for i in range(n)]
    conn = connect(cfg)
    ts, ids = [], []
    for body, headers in subs:
        t = time.perf_counter()
        conn.request("POST", "/v1/submitservicejob", body=body, headers=headers)
        r = conn.getresponse()
        ids.append(json.loads(r.read())["jobId"])
        ts.append(time.perf_counter() - t)
    descs = [signed(cfg, "/v1/describeservicejob", json.dumps({"jobId": i})) for i in ids]
    td = []
    for body, headers in descs:
        t = time.perf_counter()
        conn.request("POST", "/v1/describeservicejob", body=body, headers=headers)
        r = conn.getresponse()
        r.read()
        if r.status != 200:
            raise SystemExit("describe status %d" % r.status)
        td.append(time.perf_counter() - t)
    print("submit p50 %.2f ms p99 %.2f ms; describe p50 %.2f ms p99 %.2f ms"
          % (pct(ts, 0.5), pct(ts, 0.99), pct(td, 0.5), pct(td, 0.99)))


def reads(cfg, n, middle):
    conn = RawConnection(cfg)

    def call(op, body):
        raw = raw_request(cfg, "/v1/" + op.lower(), *signed(cfg, "/v1/" + op.lower(), json.dumps(body)))
        t = time.perf_counter()
        status, answer = conn.call(raw)
        took = time.perf_counter() - t
        if status != 200:
            raise SystemExit("%s %s: status %d %s" % (op, body, status, answer[:200]))
        return took, json.loads(answer)

    _, first = call("ListServiceJobs", {"jobQueue": "q", "jobStatus": "SUCCEEDED"})
    _, mid = call("ListServiceJobs", {"jobQueue": "q", "filters": [{"name": "JOB_NAME", "values": ["job-%d" % middle]}]})
    created = mid["jobSummaryList"][0]["createdAt"]
    kinds = [
        ("ListServiceJobs, no status (RUNNING)", "ListServiceJobs", {"jobQueue": "q"}),
        ("ListServiceJobs, RUNNABLE, 100", "ListServiceJobs", {"jobQueue": "q", "jobStatus": "RUNNABLE"}),
        ("ListServiceJobs, SUCCEEDED, 100", "ListServiceJobs", {"jobQueue": "q", "jobStatus": "SUCCEEDED"}),
        ("ListServiceJobs, SUCCEEDED, next page", "ListServiceJobs",
         {"jobQueue": "q", "jobStatus": "SUCCEEDED", "nextToken": first["nextToken"]}),
        ("ListServiceJobs, JOB_NAME prefix", "ListServiceJobs",
         {"jobQueue": "q", "filters": [{"name": "JOB_NAME", "values": ["job-%d*" % (middle // 10)]}]}),
        ("ListServiceJobs, BEFORE_CREATED_AT", "ListServiceJobs",
         {"jobQueue": "q", "filters": [{"name": "BEFORE_CREATED_AT", "values": [str(created)]}]}),
        ("ListServiceJobs, QUOTA_SHARE_NAME + FAILED", "ListServiceJobs",
         {"jobQueue": "q", "jobStatus": "FAILED", "filters": [{"name": "QUOTA_SHARE_NAME", "values": ["share-2"]}]}),
        ("ListServiceJobs, QUOTA_SHARE_NAME + SUCCEEDED", "ListServiceJobs",
         {"jobQueue": "q", "jobStatus": "SUCCEEDED", "filters": [{"name": "QUOTA_SHARE_NAME", "values": ["share-2"]}]}),
        ("ListServiceJobs, QUOTA_SHARE_NAME (RUNNING)", "ListServiceJobs",
         {"jobQueue": "q", "filters": [{"name": "QUOTA_SHARE_NAME", "values": ["share-2"]}]}),
        ("ListServiceJobs, SHARE_IDENTIFIER + FAILED", "ListServiceJobs",
         {"jobQueue": "q", "jobStatus": "FAILED", "filters": [{"name": "SHARE_IDENTIFIER", "values": ["team-2"]}]}),
        ("ListServiceJobs, SHARE_IDENTIFIER + RUNNABLE", "ListServiceJobs",
         {"jobQueue": "q", "jobStatus": "RUNNABLE", "filters": [{"name": "SHARE_IDENTIFIER", "values": ["team-2"]}]}),
        ("GetJobQueueSnapshot", "GetJobQueueSnapshot", {"jobQueue": "q"}),
    ]
    worst = 0.0
    for label, op, body in kinds:
        ts = []
        rows = 0
        for _ in range(n):
            took, answer = call(op, body)
            ts.append(took)
            rows = len(answer.get("jobSummaryList", answer.get("frontOfQueue", {}).get("jobs", [])))
        print("%-48s p50 %6.2f ms  p99 %6.2f ms  (%d jobs an answer)" % (label, pct(ts, 0.5), pct(ts, 0.99), rows))
        worst = max(worst, pct(ts, 0.99))
    print("slowest p99 %.2f ms / the 50 ms target: %.2f (target < 1)" % (worst, worst / 50))


def dispatch(cfg, n, poll_ms):
    import random
    import urllib.request
    conn = RawConnection(cfg)
    rng = random.Random(5)

    def call(op, body):
        raw = raw_request(cfg, "/v1/" + op.lower(), *signed(cfg, "/v1/" + op.lower(), json.dumps(body)))
        status, answer = conn.call(raw)
        if status != 200:
            raise SystemExit("%s: status %d %s" % (op, status, answer[:200]))
        return json.loads(answer), time.time()

    def emulator_arrivals():
        url = "http://127.0.0.1:%d/_emulator/stats?jobs=0" % cfg["emulator"]
        with urllib.request.urlopen(url, timeout=60) as r:
            return json.loads(r.read())["create_arrival_times"]

    def training_job_names(ids, seconds):
        deadline = time.time() + seconds
        names = {}
        while time.time() < deadline:
            for i in ids:
                if i not in names:
                    d, _ = call("DescribeServiceJob", {"jobId": i})
                    arn = d.get("latestAttempt", {}).get("serviceResourceId", {}).get("value")
                    if arn:
                        names[i] = arn.split("training-job/", 1)[1]
            if len(names) == len(ids):
                return names
            time.sleep(0.2)
        raise SystemExit("%d of %d jobs got no training job in %d s" % (len(ids) - len(names), len(ids), seconds))

    # The dispatcher's first turn plans and caches everything: not counted.
    warm, _ = call("SubmitServiceJob", json.loads(submit_body("warm")))
    training_job_names([warm["jobId"]], 60)
    answered = {}
    for i in range(n):
        r, t = call("SubmitServiceJob", json.loads(submit_body("lat-%d" % i)))
        answered[r["jobId"]] = t
        time.sleep(rng.uniform(0.02, 0.06))
    names = training_job_names(list(answered), 120)
    arrivals = emulator_arrivals()
    ms = [(arrivals[names[j]] - t) * 1000 for j, t in answered.items()]
    p50, p99 = pct([m / 1000 for m in ms], 0.5), pct([m / 1000 for m in ms], 0.99)
    print("API submit answered (after its commit) to CreateTrainingJob at the emulator, %d jobs: "
          "p50 %.2f ms, p99 %.2f ms, max %.2f ms" % (len(ms), p50, p99, max(ms)))
    print("p99 / poll_interval (%g s): %.4f (target < 0.1)" % (poll_ms / 1000, p99 / poll_ms))


if __name__ == "__main__":
    cfg = json.load(open(sys.argv[2]))
    if sys.argv[1] == "throughput":
        throughput(cfg, int(sys.argv[3]), float(sys.argv[4]))
    elif sys.argv[1] == "dispatch":
        dispatch(cfg, int(sys.argv[3]), float(sys.argv[4]))
    elif sys.argv[1] == "reads":
        reads(cfg, int(sys.argv[3]), int(sys.argv[4]))
    else:
        latency(cfg, int(sys.argv[3]))
