"""test/api/batch_checks.py — the AWS Batch API of fairshare, driven by boto3.

Run with the image's Python (boto3 1.43 has the service-job API):
    python3 batch_checks.py GROUP CONFIG.json
CONFIG names the endpoint, the keys ({"alice": [id, secret], ...}) and a
psql command line for looking at the tables.  Each check prints "ok: ..."
or "FAILED: ..."; the last line is "N passed, M failed".

Groups: jobs (every job operation, its errors and pagination, clientToken),
tenancy (two submitters and a viewer), auth (signature failures), input
(bad requests answered with the right error and nothing written), tags
(tagging's bounds and their messages), limits (rate and connection
limits, slow clients).
"""
import datetime
import http.client
import json
import socket
import ssl
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid

import boto3
import botocore.auth
import botocore.awsrequest
import botocore.config
import botocore.credentials
from botocore.exceptions import ClientError

PASS = 0
FAIL = 0


def ok(name):
    global PASS
    PASS += 1
    print("ok: " + name, flush=True)


def bad(name, why):
    global FAIL
    FAIL += 1
    print("FAILED: %s: %s" % (name, why), flush=True)


def check(name, expected, actual):
    if expected == actual:
        ok(name)
    else:
        bad(name, "expected %r, got %r" % (expected, actual))


def truthy(name, value, detail=""):
    if value:
        ok(name)
    else:
        bad(name, detail or repr(value))


def error_of(fn, *args, **kwargs):
    """(code, http status, message) of the ClientError fn raises, or None."""
    try:
        fn(*args, **kwargs)
    except ClientError as e:
        return (e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"],
                e.response["Error"].get("Message", ""))
    return None


CFG = {}


def sql(query):
    out = subprocess.run(CFG["psql"] + ["-At", "-c", query], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return out.stdout.strip()


def wait_sql(query, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if sql(query) == "t":
            return True
        time.sleep(0.1)
    return False


def client(who, region="us-east-1", retries=0, **kw):
    key, secret = CFG["keys"][who] if isinstance(who, str) else who
    return boto3.client(
        "batch", endpoint_url=CFG["endpoint"], region_name=region,
        aws_access_key_id=key, aws_secret_access_key=secret,
        config=botocore.config.Config(retries={"max_attempts": retries + 1, "mode": "standard"}), **kw)


def payload(n=1, hold=False, name="sdk-made-name"):
    """A CreateTrainingJob request as the SageMaker SDK builds it."""
    p = {
        "TrainingJobName": name,
        "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
        "AlgorithmSpecification": {"TrainingImage": "img:1", "TrainingInputMode": "File"},
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
        "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": n, "VolumeSizeInGB": 50},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
    }
    if hold:
        p["HyperParameters"] = {"emulator_training_seconds": "inf"}
    return json.dumps(p)


SDK_RETRY = {
    "attempts": 1,
    "evaluateOnExit": [
        {"action": "RETRY", "onStatusReason": "Received status from SageMaker:InternalServerError: "
                                              "We encountered an internal error. Please try again."},
        {"action": "EXIT", "onStatusReason": "*"},
    ],
}


def submit(c, name, queue="fifo_q", **kw):
    args = dict(jobName=name, jobQueue=queue, serviceJobType="SAGEMAKER_TRAINING",
                serviceRequestPayload=kw.pop("payload", payload()),
                retryStrategy=SDK_RETRY, timeoutConfig={"attemptDurationSeconds": 86400})
    args.update(kw)
    return c.submit_service_job(**args)


def signed_raw(method, path, body, who="alice", headers=None, region="us-east-1", amz_date=None,
               token=None, tamper=None, unsigned_first=None):
    """Send one request signed as botocore signs; returns (status, headers, body dict).
    unsigned_first: headers sent before the signed ones and not signed, as a proxy adds them."""
    key, secret = CFG["keys"][who] if isinstance(who, str) else who
    url = CFG["endpoint"] + path
    data = body if isinstance(body, bytes) else body.encode("utf-8")
    req = botocore.awsrequest.AWSRequest(method=method, url=url, data=data,
                                         headers=dict({"Content-Type": "application/json"}, **(headers or {})))
    creds = botocore.credentials.Credentials(key, secret, token)
    signer = botocore.auth.SigV4Auth(creds, "batch", region)
    if amz_date is not None:
        req.context["timestamp"] = amz_date
        # SigV4Auth.add_auth takes the clock's time; sign the fixed one.
        req.headers["X-Amz-Date"] = amz_date
        if token:
            req.headers["X-Amz-Security-Token"] = token
        canonical = signer.canonical_request(req)
        sts = signer.string_to_sign(req, canonical)
        sig = signer.signature(sts, req)
        req.headers["Authorization"] = "AWS4-HMAC-SHA256 Credential=%s, SignedHeaders=%s, Signature=%s" % (
            signer.scope(req), signer.signed_headers(signer.headers_to_sign(req)), sig)
    else:
        signer.add_auth(req)
    prepared = req.prepare()
    if tamper is not None:
        prepared.body = tamper
    conn = http_connection()
    conn.request(method, path, body=prepared.body, headers=dict(unsigned_first or {}, **prepared.headers))
    r = conn.getresponse()
    raw = r.read()
    conn.close()
    try:
        parsed = json.loads(raw) if raw else {}
    except ValueError:
        parsed = {"raw": raw[:200]}
    return r.status, {k.lower(): v for k, v in r.getheaders()}, parsed


def http_connection(timeout=10):
    host, port = CFG["endpoint"].split("://")[1].split(":")
    return http.client.HTTPConnection(host, int(port), timeout=timeout)


def job_count():
    return int(sql("SELECT count(*) FROM fairshare.jobs"))


# ---------------------------------------------------------------------------
def group_jobs():
    alice = client("alice")
    r = submit(alice, "first-job", tags={"team": "a"})
    check("submit answers jobArn, jobName and jobId", ("first-job", "arn:aws:batch:us-east-1:000000000000:service-job/" + r["jobId"]),
          (r["jobName"], r["jobArn"]))
    row = sql("SELECT request ? 'TrainingJobName', retry_attempts, evaluate_on_exit -> 0 ->> 'on_status_reason', "
              "attempt_duration_seconds, tags ->> 'team', submitted_by FROM fairshare.jobs WHERE job_id = %s" % r["jobId"])
    check("the job is a row: payload without TrainingJobName, retry rules, timeout, tags, submitter",
          "f|1|Received status from SageMaker:InternalServerError: We encountered an internal error. Please try again.|86400|a|tr_alice",
          row)
    d = alice.describe_service_job(jobId=r["jobArn"])
    check("describe by ARN (as the SDK does) names the job and its queue's ARN",
          (r["jobId"], "first-job", "arn:aws:batch:us-east-1:000000000000:job-queue/fifo_q", "SAGEMAKER_TRAINING"),
          (d["jobId"], d["jobName"], d["jobQueue"], d["serviceJobType"]))
    check("describe gives the retry strategy, timeout and tags back", (SDK_RETRY, {"attemptDurationSeconds": 86400}, {"team": "a"}),
          (d["retryStrategy"], d["timeoutConfig"], d["tags"]))
    check("describe gives the payload back with its TrainingJobName", "sdk-made-name",
          json.loads(d["serviceRequestPayload"]).get("TrainingJobName"))
    check("capacityUsage is the instance type and count", [{"capacityUnit": "ml.p4d.24xlarge", "quantity": 1.0}], d["capacityUsage"])
    check("describe by decimal id", r["jobArn"], alice.describe_service_job(jobId=r["jobId"])["jobArn"])
    if wait_sql("SELECT status = 'SUCCEEDED' FROM fairshare.jobs WHERE job_id = %s" % r["jobId"], 60):
        d = alice.describe_service_job(jobId=r["jobId"])
        arn = sql("SELECT training_job_arn FROM fairshare.job_attempts WHERE job_id = %s" % r["jobId"])
        check("a finished job: status, attempts with serviceResourceId, latestAttempt",
              ("SUCCEEDED", [{"name": "TrainingJobArn", "value": arn}], {"serviceResourceId": {"name": "TrainingJobArn", "value": arn}}),
              (d["status"], [a.get("serviceResourceId") for a in d["attempts"]], d.get("latestAttempt")))
        truthy("a finished job has createdAt <= scheduledAt <= startedAt <= stoppedAt",
               d["createdAt"] <= d["scheduledAt"] <= d["startedAt"] <= d["stoppedAt"], repr(d))
        check("isTerminated is false for a job that ran", False, d["isTerminated"])
    else:
        bad("the first job finishes", sql("SELECT status || ' ' || coalesce(status_reason, '') FROM fairshare.jobs WHERE job_id = %s" % r["jobId"]))

    # Listing: no status = RUNNING; filters; newest first; pages.
    held = submit(alice, "held-job", payload=payload(1, hold=True))
    wait_sql("SELECT status = 'RUNNING' FROM fairshare.jobs WHERE job_id = %s" % held["jobId"], 60)
    names = [j["jobName"] for j in alice.list_service_jobs(jobQueue="fifo_q")["jobSummaryList"]]
    check("no jobStatus lists RUNNING jobs only", ["held-job"], names)
    s = alice.list_service_jobs(jobQueue="fifo_q", jobStatus="SUCCEEDED")["jobSummaryList"]
    check("jobStatus SUCCEEDED lists the finished job, with its summary", ("first-job", "SUCCEEDED", True, "ml.p4d.24xlarge"),
          (s[0]["jobName"], s[0]["status"], "latestAttempt" in s[0], s[0]["capacityUsage"][0]["capacityUnit"]) if s else None)
    ids = []
    for i in range(7):
        ids.append(submit(alice, "Page-%d" % i, payload=payload(9))["jobId"])     # never fits: stays RUNNABLE
    wait_sql("SELECT count(*) = 7 FROM fairshare.jobs WHERE job_name LIKE 'Page-%%' AND status = 'RUNNABLE'", 30)
    pages = []
    token = None
    while True:
        kw = {"jobQueue": "fifo_q", "jobStatus": "RUNNABLE", "maxResults": 3}
        if token:
            kw["nextToken"] = token
        p = alice.list_service_jobs(**kw)
        pages.append([j["jobId"] for j in p["jobSummaryList"]])
        token = p.get("nextToken")
        if not token or len(pages) > 5:
            break
    check("pages of 3 cover the 7 RUNNABLE jobs newest first, each once", [list(reversed(ids))[0:3], list(reversed(ids))[3:6], list(reversed(ids))[6:7]], pages)
    paged = [j["jobId"] for pg in alice.get_paginator("list_service_jobs").paginate(
        jobQueue="fifo_q", jobStatus="RUNNABLE", PaginationConfig={"PageSize": 2}) for j in pg["jobSummaryList"]]
    check("boto3's paginator walks the same list", list(reversed(ids)), paged)
    e = error_of(alice.list_service_jobs, jobQueue="fifo_q", jobStatus="RUNNABLE", nextToken="bm90IGEgdG9rZW4=")
    check("a forged nextToken is a ClientException", ("ClientException", 400), e[:2] if e else None)
    e = error_of(alice.list_service_jobs, jobQueue="fifo_q", jobStatus="RUNNABLE", nextToken="")
    check("an empty nextToken is a ClientException, not an empty page", ("ClientException", 400), e[:2] if e else None)
    tok = alice.list_service_jobs(jobQueue="fifo_q", jobStatus="RUNNABLE", maxResults=3)["nextToken"]
    e = error_of(alice.list_service_jobs, jobQueue="fifo_q", jobStatus="FAILED", nextToken=tok)
    check("a nextToken of another query is a ClientException", ("ClientException", 400), e[:2] if e else None)
    e = error_of(alice.list_service_jobs, jobQueue="fifo_q", maxResults=101)
    check("maxResults above 100 is a ClientException", ("ClientException", 400), e[:2] if e else None)
    f = alice.list_service_jobs(jobQueue="fifo_q", filters=[{"name": "JOB_NAME", "values": ["page-1"]}])["jobSummaryList"]
    check("JOB_NAME matches whole names without case", ["Page-1"], [j["jobName"] for j in f])
    f = alice.list_service_jobs(jobQueue="fifo_q", jobStatus="RUNNING", filters=[{"name": "JOB_NAME", "values": ["PAGE-*"]}])["jobSummaryList"]
    check("JOB_NAME with * matches by prefix, and jobStatus is then ignored", 7, len(f))
    created = alice.describe_service_job(jobId=ids[3])["createdAt"]
    f = alice.list_service_jobs(jobQueue="fifo_q", filters=[{"name": "AFTER_CREATED_AT", "values": [str(created)]}])["jobSummaryList"]
    check("AFTER_CREATED_AT lists what came later, any status", [ids[6], ids[5], ids[4]], [j["jobId"] for j in f])
    f = alice.list_service_jobs(jobQueue="fifo_q", filters=[{"name": "BEFORE_CREATED_AT", "values": [str(created)]}])["jobSummaryList"]
    check("BEFORE_CREATED_AT lists what came earlier", [ids[2], ids[1], ids[0], held["jobId"], r["jobId"]], [j["jobId"] for j in f])
    e = error_of(alice.list_service_jobs, jobQueue="fifo_q", filters=[{"name": "JOB_NAME", "values": ["a"]}, {"name": "SHARE_IDENTIFIER", "values": ["b"]}])
    check("two filters at once are a ClientException", ("ClientException", 400), e[:2] if e else None)
    e = error_of(alice.list_service_jobs, jobQueue="fifo_q", filters=[{"name": "COLOUR", "values": ["a"]}])
    check("an unknown filter is a ClientException", ("ClientException", 400), e[:2] if e else None)
    e = error_of(alice.list_service_jobs, jobQueue="no_such_queue")
    check("listing an unknown queue is a ClientException", ("ClientException", 400), e[:2] if e else None)

    fj = submit(alice, "fair-low", queue="fair_q", shareIdentifier="LOWPRI", payload=payload(9))
    submit(alice, "fair-high", queue="fair_q", shareIdentifier="HIGHPRI", payload=payload(1, hold=True))
    wait_sql("SELECT count(*) = 1 FROM fairshare.jobs WHERE job_name = 'fair-high' AND status = 'RUNNING'", 60)
    f = alice.list_service_jobs(jobQueue="fair_q", filters=[{"name": "SHARE_IDENTIFIER", "values": ["LOWPRI"]}])["jobSummaryList"]
    check("SHARE_IDENTIFIER without jobStatus lists that share's RUNNING jobs", [], f)
    f = alice.list_service_jobs(jobQueue="fair_q", jobStatus="RUNNABLE", filters=[{"name": "SHARE_IDENTIFIER", "values": ["LOWPRI"]}])["jobSummaryList"]
    check("SHARE_IDENTIFIER combines with jobStatus", [(fj["jobId"], "LOWPRI")], [(j["jobId"], j.get("shareIdentifier")) for j in f])
    qj = submit(alice, "quota-wait", queue="quota_q", quotaShareName="ProdExp2", payload=payload(9))
    wait_sql("SELECT status = 'RUNNABLE' FROM fairshare.jobs WHERE job_id = %s" % qj["jobId"], 30)
    f = alice.list_service_jobs(jobQueue="quota_q", jobStatus="RUNNABLE", filters=[{"name": "QUOTA_SHARE_NAME", "values": ["ProdExp2"]}])["jobSummaryList"]
    check("QUOTA_SHARE_NAME combines with jobStatus", [qj["jobId"]], [j["jobId"] for j in f])

    # Update and terminate.
    u = alice.update_service_job(jobId=ids[0], schedulingPriority=42)
    check("update answers the job", (ids[0], "Page-0"), (u["jobId"], u["jobName"]))
    check("update changes the priority", 42, alice.describe_service_job(jobId=ids[0])["schedulingPriority"])
    e = error_of(alice.update_service_job, jobId=ids[0], schedulingPriority=10000)
    check("a priority above 9999 is a ClientException", ("ClientException", 400), e[:2] if e else None)
    e = error_of(alice.update_service_job, jobId=r["jobId"], schedulingPriority=1)
    check("updating a finished job is a ClientException", ("ClientException", 400), e[:2] if e else None)
    alice.terminate_service_job(jobId=ids[1], reason="not needed")
    d = alice.describe_service_job(jobId=ids[1])
    check("terminate fails a waiting job at once, isTerminated, with the reason", ("FAILED", True, True),
          (d["status"], d["isTerminated"], "not needed" in d.get("statusReason", "")))
    alice.terminate_service_job(jobId=held["jobArn"], reason="enough")
    if wait_sql("SELECT status = 'FAILED' FROM fairshare.jobs WHERE job_id = %s" % held["jobId"], 60):
        d = alice.describe_service_job(jobId=held["jobId"])
        check("terminate stops a running job; it ends FAILED and isTerminated", (True, True),
              (d["isTerminated"], "enough" in d["statusReason"]))
    else:
        bad("terminate stops a running job", sql("SELECT status FROM fairshare.jobs WHERE job_id = %s" % held["jobId"]))
    e = error_of(alice.terminate_service_job, jobId="999999", reason="x")
    check("terminating an unknown job is a ClientException", ("ClientException", 400), e[:2] if e else None)
    e = error_of(alice.describe_service_job, jobId="arn:aws:batch:us-east-1:000000000000:job-queue/fifo_q")
    check("an ARN of another kind as jobId is a ClientException", ("ClientException", 400), e[:2] if e else None)
    e = error_of(alice.describe_service_job, jobId="not-a-job")
    check("describing an unknown job is a ClientException", ("ClientException", 400), e[:2] if e else None)

    # Snapshot.
    snap = alice.get_job_queue_snapshot(jobQueue="fifo_q")
    front = [j["jobArn"].rsplit("/", 1)[1] for j in snap["frontOfQueue"]["jobs"]]
    expected = [x[0] for x in (l.split("|") for l in sql(
        "SELECT job_id FROM fairshare.queue_snapshot('fifo_q') ORDER BY position").splitlines())]
    check("frontOfQueue is queue_snapshot()'s order", expected, front)
    truthy("frontOfQueue has earliestTimeAtPosition and lastUpdatedAt",
           all("earliestTimeAtPosition" in j for j in snap["frontOfQueue"]["jobs"]) and snap["frontOfQueue"]["lastUpdatedAt"] > 0, repr(snap))
    snap = alice.get_job_queue_snapshot(jobQueue="arn:aws:batch:us-east-1:000000000000:job-queue/fair_q")
    fu = snap["queueUtilization"].get("fairshareUtilization", {})
    check("a fair-share queue's utilisation per share", (1, "HIGHPRI", [{"capacityUnit": "ml.p4d.24xlarge", "quantity": 1.0}]),
          (fu.get("activeShareCount"), fu["topCapacityUtilization"][0]["shareIdentifier"] if fu.get("topCapacityUtilization") else None,
           fu["topCapacityUtilization"][0]["capacityUsage"] if fu.get("topCapacityUtilization") else None))
    snap = alice.get_job_queue_snapshot(jobQueue="quota_q")
    check("frontOfQuotaShares gives each share's first waiting job", {"ProdExp2": [qj["jobArn"]]},
          {k: [j["jobArn"] for j in v] for k, v in snap.get("frontOfQuotaShares", {}).get("quotaShares", {}).items()})
    e = error_of(alice.get_job_queue_snapshot, jobQueue="nope")
    check("a snapshot of an unknown queue is a ClientException", ("ClientException", 400), e[:2] if e else None)

    # Submit errors: nothing is written.
    before = job_count()
    for name, kw in [
        ("an unknown queue", dict(jobQueue="nope")),
        ("a payload that is not JSON", dict(payload="{not json")),
        ("a payload without RoleArn", dict(payload=json.dumps({"OutputDataConfig": {}}))),
        ("another serviceJobType", dict(serviceJobType="EKS")),
        ("a share identifier on a FIFO queue", dict(shareIdentifier="X")),
        ("11 attempts", dict(retryStrategy={"attempts": 11})),
        ("a reserved tag", dict(tags={"aws:x": "y"})),
        ("a bad job name", dict(jobName="bad name!")),
    ]:
        args = {"jobName": "err-job"}
        args.update(kw)
        e = error_of(submit, alice, args.pop("jobName"), **args)
        check("submit with %s is a ClientException" % name, ("ClientException", 400), e[:2] if e else None)
    check("failed submits wrote nothing", before, job_count())

    # clientToken: same request -> same job; another request -> ClientException.
    tok = str(uuid.uuid4())
    a = submit(alice, "idem", clientToken=tok, payload=payload(9))
    b = submit(alice, "idem", clientToken=tok, payload=payload(9))
    check("the same clientToken and request give the same job", a["jobId"], b["jobId"])
    e = error_of(submit, alice, "idem-other", clientToken=tok, payload=payload(9))
    check("the same clientToken with another request is a ClientException", ("ClientException", 400), e[:2] if e else None)
    c2 = submit(client("bob"), "idem", clientToken=tok, payload=payload(9))
    truthy("another role's same clientToken is its own job", c2["jobId"] != a["jobId"])
    # A submit whose first answer is lost: the request reaches the server,
    # the connection drops before the answer is read; boto3 then sends it
    # again with the same clientToken.
    tok = str(uuid.uuid4())
    body = json.dumps({"jobName": "lost-answer", "jobQueue": "fifo_q", "serviceJobType": "SAGEMAKER_TRAINING",
                       "serviceRequestPayload": payload(9), "clientToken": tok})
    key, secret = CFG["keys"]["alice"]
    req = botocore.awsrequest.AWSRequest(method="POST", url=CFG["endpoint"] + "/v1/submitservicejob", data=body,
                                         headers={"Content-Type": "application/json"})
    botocore.auth.SigV4Auth(botocore.credentials.Credentials(key, secret), "batch", "us-east-1").add_auth(req)
    p = req.prepare()
    conn = http_connection()
    conn.request("POST", "/v1/submitservicejob", body=p.body, headers=dict(p.headers))
    conn.sock.shutdown(socket.SHUT_WR)
    wait_sql("SELECT count(*) = 1 FROM fairshare.jobs WHERE job_name = 'lost-answer'", 10)
    conn.close()
    again = alice.submit_service_job(jobName="lost-answer", jobQueue="fifo_q", serviceJobType="SAGEMAKER_TRAINING",
                                     serviceRequestPayload=payload(9), clientToken=tok)
    check("the retry of a submit whose answer was lost returns the job it made, and there is one",
          (sql("SELECT string_agg(job_id::text, ',') FROM fairshare.jobs WHERE job_name = 'lost-answer'"),),
          (again["jobId"],))

    # quotaShareName takes the share's ARN, as every name parameter does
    # (docs/api.md); one of another queue, kind or region is refused.
    share_arn = "arn:aws:batch:us-east-1:000000000000:job-queue/quota_q/quota-share/ProdExp2"
    qa = submit(alice, "quota-by-arn", queue="quota_q", quotaShareName=share_arn, payload=payload(9))
    check("quotaShareName as the share's ARN puts the job in that share", "quota_q|ProdExp2",
          sql("SELECT job_queue || '|' || quota_share FROM fairshare.jobs WHERE job_id = %s" % qa["jobId"]))
    check("... which describe names", "ProdExp2", alice.describe_service_job(jobId=qa["jobId"]).get("quotaShareName"))
    alice.terminate_service_job(jobId=qa["jobId"], reason="checked")
    before = job_count()
    for name, arn, says in [
        ("of another queue's share", "arn:aws:batch:us-east-1:000000000000:job-queue/fair_q/quota-share/ProdExp2",
         'is a quota share of job queue "fair_q", not of "quota_q"'),
        ("of another kind", "arn:aws:batch:us-east-1:000000000000:job-queue/quota_q", "is not a quota-share ARN"),
        ("of another region", "arn:aws:batch:eu-west-1:000000000000:job-queue/quota_q/quota-share/ProdExp2",
         "is not an ARN of this fairshare installation"),
    ]:
        e = error_of(submit, alice, "quota-bad-arn", queue="quota_q", quotaShareName=arn, payload=payload(9))
        check("a quotaShareName ARN %s is a ClientException saying so" % name, ("ClientException", 400, True),
              e[:2] + (says in e[2],) if e else None)
    check("... and none of them made a job", before, job_count())

    # SDK code that attached to a training job copies its tags, fairshare's
    # own included, into the next submission: those are dropped, not refused.
    p = json.loads(payload(9))     # never fits: it waits, and is terminated below
    p["Tags"] = [{"Key": "fairshare:installation", "Value": "x"}, {"Key": "k", "Value": "v"}]
    tagged = submit(alice, "sdk-attached-tags", payload=json.dumps(p), tags={"fairshare:job-id": "7", "team": "b"})
    check("fairshare: tags in a submission's tags and payload Tags are dropped, the others kept",
          '{"team": "b"}|[{"Key": "k", "Value": "v"}]',
          sql("SELECT tags::text || '|' || (request -> 'Tags')::text FROM fairshare.jobs WHERE job_id = %s" % tagged["jobId"]))
    alice.terminate_service_job(jobId=tagged["jobId"], reason="only its tags were wanted")

    # Placed, but SageMaker has not answered the create yet (it takes 3 s
    # here): the job is shown RUNNABLE, as on AWS Batch until the job goes
    # to SageMaker -- so no scheduledAt and no attempt yet.
    emulator_faults({"operations": {"CreateTrainingJob": {"slow_rate": 1, "slow_seconds": 3}}})
    try:
        slow = submit(alice, "slow-create")
        if wait_sql("SELECT status = 'SCHEDULED' AND training_job_arn IS NULL FROM fairshare.jobs WHERE job_id = %s"
                    % slow["jobId"], 30):
            d = alice.describe_service_job(jobId=slow["jobId"])
            check("a job whose create is unanswered is RUNNABLE, with no scheduledAt and no attempt",
                  ("RUNNABLE", None, []), (d["status"], d.get("scheduledAt"), d["attempts"]))
        else:
            bad("the slow job is placed", sql("SELECT status FROM fairshare.jobs WHERE job_id = %s" % slow["jobId"]))
    finally:
        emulator_faults({})
    if wait_sql("SELECT training_job_arn IS NOT NULL FROM fairshare.jobs WHERE job_id = %s" % slow["jobId"], 30):
        d = alice.describe_service_job(jobId=slow["jobId"])
        truthy("... and once SageMaker has it, scheduledAt and its attempt",
               d["status"] != "RUNNABLE" and d.get("scheduledAt") and len(d["attempts"]) == 1, repr(d))
    alice.terminate_service_job(jobId=slow["jobId"], reason="only its placement was wanted")


def emulator_faults(config):
    req = urllib.request.Request(CFG["emulator"] + "/_emulator/faults", data=json.dumps(config).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    urllib.request.urlopen(req, timeout=10).read()


def group_tenancy():
    alice, bob, vera, adam = client("alice"), client("bob"), client("vera"), client("adam")
    a = submit(alice, "alice-job", payload=payload(9))
    b = submit(bob, "bob-job", payload=payload(9))
    # A job submitted in SQL, whose rule's action is in lower case (SQL takes
    # any case): the API gives it in the model's enum.
    j = sql("SET ROLE tr_alice; INSERT INTO fairshare.jobs (job_name, job_queue, request, retry_attempts, evaluate_on_exit) "
            "SELECT 'sql-job', job_queue, request, 2, '[{\"action\": \"retry\", \"on_status_reason\": \"x*\"}]' "
            "FROM fairshare.jobs WHERE job_id = %s RETURNING job_id" % a["jobId"])
    j = next(line for line in j.splitlines() if line.isdigit())   # among psql's SET and INSERT tags
    check("a rule written in SQL as 'retry' is described as RETRY",
          {"attempts": 2, "evaluateOnExit": [{"action": "RETRY", "onStatusReason": "x*"}]},
          alice.describe_service_job(jobId=j)["retryStrategy"])
    alice.terminate_service_job(jobId=j, reason="only its description was wanted")
    e = error_of(bob.describe_service_job, jobId=a["jobId"])
    check("a submitter cannot see another's job", ("ClientException", 400), e[:2] if e else None)
    e = error_of(bob.terminate_service_job, jobId=a["jobId"], reason="mine now")
    check("a submitter cannot terminate another's job", ("ClientException", 400), e[:2] if e else None)
    e = error_of(bob.update_service_job, jobId=a["jobId"], schedulingPriority=9)
    check("a submitter cannot change another's job", ("ClientException", 400), e[:2] if e else None)
    check("another's job is untouched", "RUNNABLE|0",
          sql("SELECT status || '|' || scheduling_priority FROM fairshare.jobs WHERE job_id = %s" % a["jobId"]))
    ids = {j["jobId"] for j in bob.list_service_jobs(jobQueue="fifo_q", filters=[{"name": "JOB_NAME", "values": ["*"]}])["jobSummaryList"]}
    check("a submitter lists only its own jobs", set(sql("SELECT job_id FROM fairshare.jobs WHERE job_queue = 'fifo_q' "
                                                          "AND submitted_by = 'tr_bob'").split()), ids)
    truthy("... which are some", b["jobId"] in ids and a["jobId"] not in ids, repr(ids))
    e = error_of(submit, vera, "viewer-job")
    check("a viewer cannot submit, and is told the roles it needs, no table's name",
          ("ClientException", 400, "SubmitServiceJob needs the fairshare_admin or fairshare_submitter role"),
          e[:3] if e else None)
    e = error_of(vera.list_service_jobs, jobQueue="fifo_q", jobStatus="RUNNABLE")
    check("a viewer cannot list jobs, and is told so",
          ("ClientException", 400, "ListServiceJobs needs the fairshare_admin or fairshare_submitter role"),
          e[:3] if e else None)
    e = error_of(vera.create_job_queue, jobQueueName="viewer-q", priority=1)
    check("a viewer calling an admin operation is told the operation and the role it needs, no internal name",
          ("ClientException", 400, "CreateJobQueue needs the fairshare_admin role"), e[:3] if e else None)
    e = error_of(alice.tag_resource, resourceArn="arn:aws:batch:us-east-1:000000000000:job-queue/fifo_q", tags={"k": "v"})
    check("... and so is a submitter", ("ClientException", 400, "TagResource needs the fairshare_admin role"),
          e[:3] if e else None)
    e = error_of(vera.describe_service_job, jobId=a["jobId"])
    check("a viewer cannot read jobs",
          ("ClientException", 400, "DescribeServiceJob needs the fairshare_admin or fairshare_submitter role"),
          e[:3] if e else None)
    e = error_of(vera.terminate_service_job, jobId=a["jobId"], reason="x")
    check("a viewer cannot terminate",
          ("ClientException", 400, "TerminateServiceJob needs the fairshare_admin or fairshare_submitter role"),
          e[:3] if e else None)
    snap = vera.get_job_queue_snapshot(jobQueue="fifo_q")
    truthy("a viewer reads the queue snapshot", len(snap["frontOfQueue"]["jobs"]) >= 2, repr(snap))
    names = {j["jobName"] for j in adam.list_service_jobs(jobQueue="fifo_q", filters=[{"name": "JOB_NAME", "values": ["*"]}])["jobSummaryList"]}
    check("an admin lists every job", {"alice-job", "bob-job"}, names & {"alice-job", "bob-job"})
    adam.terminate_service_job(jobId=b["jobId"], reason="admin says")
    check("an admin terminates anyone's job", "FAILED", sql("SELECT status FROM fairshare.jobs WHERE job_id = %s" % b["jobId"]))


def group_grants():
    """With fairshare.require_role_arn_grant and fairshare.require_share_grant
    on (jobs.test sets them), a key's role may submit only a RoleArn and a
    share granted to it, as AWS Batch asks the caller for iam:PassRole and
    the batch:ShareIdentifier condition."""
    alice, bob = client("alice"), client("bob")
    sql("INSERT INTO fairshare.role_arn_grants (role, role_arn) "
        "VALUES ('tr_alice', 'arn:aws:iam::123456789012:role/SageMaker*')")
    sql("INSERT INTO fairshare.share_grants (role, job_queue, share) VALUES ('tr_alice', 'fair_q', 'HIGH*')")
    try:
        a = submit(alice, "granted-job")
        truthy("a key's role submits a job whose RoleArn is granted to it", a.get("jobId"), repr(a))
        a = submit(alice, "granted-share-job", queue="fair_q", shareIdentifier="HIGHPRI")
        truthy("... and under a share granted to it", a.get("jobId"), repr(a))
        before = job_count()
        e = error_of(submit, bob, "ungranted-job")
        check("a RoleArn granted to no role of the key's is refused with a ClientException that names both",
              ("ClientException", 400,
               'role "tr_bob" may not submit jobs that run as arn:aws:iam::123456789012:role/SageMakerRole'),
              (e[0], e[1], e[2].split(" (")[0]) if e else None)
        e = error_of(submit, alice, "ungranted-share-job", queue="fair_q", shareIdentifier="LOWPRI")
        check("a share granted to no role of the key's is refused with a ClientException that names it",
              ("ClientException", 400, 'role "tr_alice" may not submit jobs under share "LOWPRI" of job queue "fair_q"'),
              (e[0], e[1], e[2].split(" (")[0]) if e else None)
        check("... and no job is written", before, job_count())
    finally:
        sql("DELETE FROM fairshare.role_arn_grants")
        sql("DELETE FROM fairshare.share_grants")


def group_auth():
    key, secret = CFG["keys"]["alice"]
    before = job_count()
    e = error_of(submit, client((key, secret[:-1] + ("A" if secret[-1] != "A" else "B"))), "wrong-secret")
    check("a wrong secret is 403 InvalidSignatureException", ("InvalidSignatureException", 403), e[:2] if e else None)
    e = error_of(submit, client(("FSAKNOSUCHKEY0000000", secret)), "unknown-key")
    check("an unknown key is 403 UnrecognizedClientException", ("UnrecognizedClientException", 403), e[:2] if e else None)
    e = error_of(submit, client("alice", region="eu-west-1"), "wrong-region")
    check("a signature for another region is 403 InvalidSignatureException", ("InvalidSignatureException", 403), e[:2] if e else None)
    body = json.dumps({"jobId": "1"})
    old = (datetime.datetime.utcnow() - datetime.timedelta(minutes=20)).strftime("%Y%m%dT%H%M%SZ")
    st, h, b = signed_raw("POST", "/v1/describeservicejob", body, amz_date=old)
    check("a date 20 minutes old is 403 InvalidSignatureException", (403, "InvalidSignatureException"), (st, b.get("__type")))
    truthy("... and says so", "15 minutes" in b.get("message", ""), repr(b))
    new = (datetime.datetime.utcnow() + datetime.timedelta(minutes=20)).strftime("%Y%m%dT%H%M%SZ")
    st, h, b = signed_raw("POST", "/v1/describeservicejob", body, amz_date=new)
    check("a date 20 minutes ahead is 403 InvalidSignatureException", (403, "InvalidSignatureException"), (st, b.get("__type")))
    now = datetime.datetime.utcnow().strftime("%Y%m%dT%H%M%SZ")
    st, h, b = signed_raw("POST", "/v1/describeservicejob", body, amz_date=now, token="session-token")
    check("a session token is refused with 403 UnrecognizedClientException", (403, "UnrecognizedClientException"), (st, b.get("__type")))
    truthy("... saying it is not supported", "not supported" in b.get("message", ""), repr(b))
    st, h, b = signed_raw("POST", "/v1/submitservicejob", json.dumps({"jobName": "x"}),
                          tamper=json.dumps({"jobName": "y"}).encode())
    check("a body changed after signing is 403 InvalidSignatureException", (403, "InvalidSignatureException"), (st, b.get("__type")))
    many = {"X-Forwarded-Hop-%d" % i: "v" for i in range(200)}
    st, h, b = signed_raw("POST", "/v1/listservicejobs", json.dumps({"jobQueue": "fifo_q"}), unsigned_first=many)
    check("200 unsigned headers in front of the signed ones are all read: the request is answered",
          (200, True), (st, "jobSummaryList" in b))
    conn = http_connection()
    conn.request("POST", "/v1/describeservicejob", body=body, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    b = json.loads(r.read())
    check("an unsigned request is 403", (403, "MissingAuthenticationTokenException"), (r.status, b.get("__type")))
    check("the error type is also in x-amzn-ErrorType", "MissingAuthenticationTokenException", r.getheader("x-amzn-ErrorType"))
    conn.close()
    dk = CFG["keys"]["dora"]
    check("a key works before it is disabled", True, "jobSummaryList" in client("dora").list_service_jobs(jobQueue="fifo_q"))
    # Keys work apart from the role's login, as IAM access keys do apart
    # from a console password (docs/api.md): an API-only role may be NOLOGIN.
    sql("ALTER ROLE tr_dora NOLOGIN")
    try:
        check("a key of a role made NOLOGIN still works", None,
              error_of(client("dora").list_service_jobs, jobQueue="fifo_q"))
    finally:
        sql("ALTER ROLE tr_dora LOGIN")
    # A key is its role's by OID and name together: the OID of a dropped
    # role may later be another's.  A rename shows the name is checked.
    sql("ALTER ROLE tr_dora RENAME TO tr_dora_renamed")
    try:
        e = error_of(client("dora").list_service_jobs, jobQueue="fifo_q")
        check("a key whose role was renamed (or dropped) is refused, saying so",
              ("UnrecognizedClientException", 403, True), (e[0], e[1], "dropped or renamed" in e[2]) if e else None)
    finally:
        sql("ALTER ROLE tr_dora_renamed RENAME TO tr_dora")
    check("... and works again under the name it was made for", None,
          error_of(client("dora").list_service_jobs, jobQueue="fifo_q"))
    sql("SELECT fairshare.disable_api_key('%s')" % dk[0])
    e = error_of(client("dora").list_service_jobs, jobQueue="fifo_q")
    check("a disabled key is 403", ("UnrecognizedClientException", 403), e[:2] if e else None)
    check("no failed signature wrote anything", before, job_count())


def group_input():
    before = job_count()
    cases = [
        ("malformed JSON", "POST", "/v1/submitservicejob", b'{"jobName": "x", ', 400, "ClientException"),
        ("a body that is an array", "POST", "/v1/submitservicejob", b'[1, 2]', 400, "ClientException"),
        ("a string where an integer goes", "POST", "/v1/submitservicejob",
         json.dumps({"jobName": "t1", "jobQueue": "fifo_q", "serviceJobType": "SAGEMAKER_TRAINING",
                     "serviceRequestPayload": payload(), "schedulingPriority": "high"}).encode(), 400, "ClientException"),
        ("an object where a string goes", "POST", "/v1/submitservicejob",
         json.dumps({"jobName": {"a": 1}, "jobQueue": "fifo_q", "serviceJobType": "SAGEMAKER_TRAINING",
                     "serviceRequestPayload": payload()}).encode(), 400, "ClientException"),
        ("an unknown member", "POST", "/v1/submitservicejob",
         json.dumps({"jobName": "t2", "jobQueue": "fifo_q", "serviceJobType": "SAGEMAKER_TRAINING",
                     "serviceRequestPayload": payload(), "colour": "blue"}).encode(), 400, "ClientException"),
        ("invalid UTF-8", "POST", "/v1/submitservicejob", b'{"jobName": "\xff\xfe", "jobQueue": "fifo_q"}', 400, "ClientException"),
        ("a NUL byte", "POST", "/v1/submitservicejob", b'{"jobName": "a\x00b"}', 400, "ClientException"),
        ("an escaped NUL", "POST", "/v1/submitservicejob", b'{"jobName": "a\\u0000b"}', 400, "ClientException"),
        ("an oversized body", "POST", "/v1/submitservicejob",
         json.dumps({"jobName": "big", "pad": "x" * 70000}).encode(), 413, "ClientException"),
        ("an unknown operation", "POST", "/v1/frobnicateservicejob", b'{}', 404, "UnknownOperationException"),
        ("a GET of an operation", "GET", "/v1/submitservicejob", b'', 404, "UnknownOperationException"),
        ("a path outside /v1", "POST", "/admin", b'{}', 404, "UnknownOperationException"),
        ("a path with a \".\" segment (signed as another path)", "POST", "/v1/./submitservicejob", b'{}', 400, "ClientException"),
        ("a path with a \"..\" segment", "GET", "/v1/tags/arn%3Aaws%3Abatch%3Aus-east-1%3A000000000000%3Ajob-queue%2Ffifo_q/..", b'', 400, "ClientException"),
    ]
    for name, method, path, body, status, kind in cases:
        st, h, b = signed_raw(method, path, body)
        check("%s is answered %d %s" % (name, status, kind), (status, kind), (st, b.get("__type")))
        truthy("... with a message", isinstance(b.get("message"), str) and b["message"], repr(b))
    check("bad input wrote nothing", before, job_count())
    # JSON nested 32,000 deep fits in the 64kB body but not in the JSON
    # parser's stack: PostgreSQL's "stack depth limit exceeded" (54001) is
    # the request's fault, a 400 that botocore does not retry, and its
    # message tells the client what to change, not to raise max_stack_depth.
    deep = 32000
    st, h, b = signed_raw("POST", "/v1/describeservicejob", b'{"jobId": ' + b"[" * deep + b"]" * deep + b"}")
    check("JSON nested 32,000 deep is answered 400 ClientException", (400, "ClientException"), (st, b.get("__type")))
    check("... saying it is nested too deeply, not how to configure the server",
          (True, False), ("nested too deeply" in b.get("message", ""), "max_stack_depth" in b.get("message", "")))
    # Headers beyond fairshare.api_max_header_size (16kB here) are answered
    # 431 ClientException, AWS-shaped; beyond four times it libmicrohttpd
    # answers before any callback of ours runs, with its own page -- 431 and
    # a small HTML body, no x-amzn-ErrorType -- and closes the connection
    # (docs/api.md).  botocore raises either as a ClientError.
    host, port = CFG["endpoint"].split("://")[1].split(":")

    def raw_headers_of(padding):
        conn = socket.create_connection((host, int(port)), timeout=10)
        conn.sendall(b"POST /v1/submitservicejob HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"p" * padding
                     + b"\r\nContent-Length: 2\r\n\r\n{}")
        answer = b""
        try:
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except (ConnectionResetError, socket.timeout):
            pass
        conn.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        return head.decode("latin-1"), body

    head, body = raw_headers_of(20000)
    check("headers over the setting are answered 431 ClientException, AWS-shaped, and closed",
          ("431", "ClientException", True, True),
          (head[9:12], json.loads(body or b"{}").get("__type"),
           "x-amzn-errortype: clientexception" in head.lower(), "connection: close" in head.lower()))
    truthy("... naming the setting", b"fairshare.api_max_header_size" in body, repr(body[:200]))
    head, body = raw_headers_of(100000)
    check("headers over four times the setting are answered by libmicrohttpd: 431, HTML, no AWS error type",
          ("431", True, False), (head[9:12], "text/html" in head.lower() or "content-type" not in head.lower(),
                                 "x-amzn-errortype" in head.lower()))
    print("  (libmicrohttpd's answer to over-size headers: %r)" % (head[:200] + body[:100].decode("latin-1")))
    check("over-size headers wrote nothing", before, job_count())
    # An empty body is an empty request: a ClientException naming what is missing.
    st, h, b = signed_raw("POST", "/v1/describeservicejob", b"")
    check("an empty body is a request without members", (400, "ClientException", True),
          (st, b.get("__type"), "jobId is required" in b.get("message", "")))

    # A body declared over the limit is refused from the headers, before
    # any of it is read: no "100 Continue", the 413 at once, then closed.
    conn = socket.create_connection((host, int(port)), timeout=5)
    conn.sendall(b"POST /v1/submitservicejob HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n"
                 b"Expect: 100-continue\r\n\r\n")
    try:
        first = conn.recv(65536)
    except socket.timeout:
        first = b""
    conn.close()
    check("a body declared too large is answered 413 from its headers, without 100 Continue",
          ("413", False), (first[9:12].decode("latin-1"), b" 100 " in first[:16]))
    # A chunked body that never ends is not read for ever: past four times
    # the limit the connection is closed.
    conn = socket.create_connection((host, int(port)), timeout=10)
    conn.sendall(b"POST /v1/submitservicejob HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"%x\r\n%s\r\n" % (16384, b"x" * 16384)
    try:
        for _ in range(40):        # 640 kB, and the body goes on (no last chunk)
            conn.sendall(chunk)
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        pass
    conn.settimeout(5)
    try:
        answer = conn.recv(65536)
        closed = answer == b"" or answer.startswith(b"HTTP/1.1 413")
    except ConnectionResetError:
        closed = True
    except socket.timeout:
        closed = False
    conn.close()
    truthy("a chunked body that goes on past four times the limit gets its connection closed", closed)


def group_tags():
    adam = client("adam")
    arn = "arn:aws:batch:us-east-1:000000000000:job-queue/fifo_q"
    # botocore's model: TagResource takes 1 to 50 tags, UntagResource 1 to 50
    # tagKeys; botocore checks neither bound, the server does.
    e = error_of(adam.tag_resource, resourceArn=arn, tags={})
    check("TagResource with no tags is a ClientException saying so", ("ClientException", 400, True),
          e[:2] + ("at least one tag" in e[2],) if e else None)
    before = job_count()
    e = error_of(submit, client("alice"), "no-tags", tags={})
    check("SubmitServiceJob with empty tags is a ClientException saying so, and submits nothing",
          ("ClientException", 400, True, before),
          (tuple(e[:2]) + ("at least one tag" in e[2],) if e else (None, None, None)) + (job_count(),))
    fifty = {"k%02d" % i: "v" for i in range(50)}
    adam.tag_resource(resourceArn=arn, tags=fifty)
    check("a queue takes 50 tags", fifty, adam.list_tags_for_resource(resourceArn=arn)["tags"])
    e = error_of(adam.tag_resource, resourceArn=arn, tags={"one-more": "x"})
    check("a 51st tag is a ClientException naming one job queue", ("ClientException", 400, "a job queue has at most 50 tags"),
          e[:3] if e else None)
    e = error_of(adam.untag_resource, resourceArn=arn, tagKeys=["k%02d" % i for i in range(51)])
    check("UntagResource with 51 tagKeys is a ClientException: at most 50", ("ClientException", 400, True),
          e[:2] + ("at most 50" in e[2],) if e else None)
    # More than the server keeps of a repeated query parameter (64): refused
    # by the server itself, never cut to the first 64.
    e = error_of(adam.untag_resource, resourceArn=arn, tagKeys=["k%02d" % i for i in range(65)])
    check("UntagResource with 65 tagKeys is refused as too many, not cut short", ("ClientException", 400, True),
          e[:2] + ("tagKeys is repeated more than 64 times" in e[2],) if e else None)
    check("... and neither refusal removed a tag", 50, len(adam.list_tags_for_resource(resourceArn=arn)["tags"]))
    adam.untag_resource(resourceArn=arn, tagKeys=list(fifty))
    check("UntagResource with 50 tagKeys removes all 50", {}, adam.list_tags_for_resource(resourceArn=arn)["tags"])
    many = {"t%02d" % i: "v" for i in range(51)}
    e = error_of(adam.create_service_environment, serviceEnvironmentName="tags-env", serviceEnvironmentType="SAGEMAKER_TRAINING",
                 capacityLimits=[{"maxCapacity": 1, "capacityUnit": "NUM_INSTANCES"}], tags=many)
    check("51 tags on a new service environment: a ClientException naming one", ("ClientException", 400, "a service environment has at most 50 tags"),
          e[:3] if e else None)
    e = error_of(adam.create_scheduling_policy, name="tags-sp", tags=many,
                 fairsharePolicy={"shareDistribution": [{"shareIdentifier": "A", "weightFactor": 1.0}]})
    check("51 tags on a new scheduling policy: a ClientException naming one", ("ClientException", 400, "a scheduling policy has at most 50 tags"),
          e[:3] if e else None)
    # An encoded NUL (%00) in the path or the query would end the name there:
    # refused, and nothing is tagged or untagged under the shorter name.
    adam.tag_resource(resourceArn=arn, tags={"team": "a"})
    path = "/v1/tags/" + urllib.parse.quote(arn, safe="")
    st, h, b = signed_raw("POST", path + "%00ignored", json.dumps({"tags": {"nul": "x"}}), who="adam")
    check("a resourceArn holding %00 is a ClientException naming the encoded NUL", (400, "ClientException", True),
          (st, b.get("__type"), "encoded NUL" in b.get("message", "")))
    st, h, b = signed_raw("DELETE", path + "?tagKeys=team%00zzz", b"", who="adam")
    check("a tagKeys value holding %00 is a ClientException naming the encoded NUL", (400, "ClientException", True),
          (st, b.get("__type"), "encoded NUL" in b.get("message", "")))
    # A "#" is a URL's fragment: SigV4 signs nothing after it, so one sent
    # raw would leave the query out of the signature check.
    st, h, b = signed_raw("DELETE", path + "#?tagKeys=team", b"", who="adam")
    check("a raw \"#\" in the path is a ClientException: send it as %23", (400, "ClientException", True),
          (st, b.get("__type"), "%23" in b.get("message", "")))
    check("... and none of the three changed the queue's tags", {"team": "a"},
          adam.list_tags_for_resource(resourceArn=arn)["tags"])
    adam.untag_resource(resourceArn=arn, tagKeys=["team"])

    # Job ids of 19 digits (a bigint's last decade) are still jobs the API
    # can name.  (Last: the ids stay up there.)
    sql("SELECT setval(pg_get_serial_sequence('fairshare.jobs', 'job_id'), 1000000000000000000)")
    alice = client("alice")
    big = submit(alice, "nineteen-digits", tags={"size": "big"})
    check("a job of id 1000000000000000001 is described", ("1000000000000000001", "nineteen-digits"),
          (big["jobId"], alice.describe_service_job(jobId=big["jobId"])["jobName"]))
    check("... and its tags are listed", {"size": "big"},
          alice.list_tags_for_resource(resourceArn=big["jobArn"])["tags"])
    e = error_of(alice.describe_service_job, jobId="9223372036854775808")
    check("one past the largest bigint is a job that does not exist", ("ClientException", 400, True),
          (e[0], e[1], "does not exist" in e[2]) if e else None)
    alice.terminate_service_job(jobId=big["jobId"], reason="only its id was wanted")


def group_limits():
    # Requests per second per key (the test sets 5): the sixth in a burst is 429.
    statuses = []
    for _ in range(12):
        st, h, b = signed_raw("POST", "/v1/listservicejobs", json.dumps({"jobQueue": "fifo_q"}), who="carol")
        statuses.append((st, b.get("__type")))
    truthy("a key over fairshare.api_key_requests_per_second gets 429 TooManyRequestsException",
           (429, "TooManyRequestsException") in statuses and statuses[0][0] == 200, repr(statuses))
    time.sleep(1.2)
    st, h, b = signed_raw("POST", "/v1/listservicejobs", json.dumps({"jobQueue": "fifo_q"}), who="carol")
    check("a second later the key is served again", 200, st)
    st, h, b = signed_raw("POST", "/v1/listservicejobs", json.dumps({"jobQueue": "fifo_q"}), who="alice")
    check("other keys were never limited", 200, st)

    # A slow client holds neither the worker nor its connection for long.
    host, port = CFG["endpoint"].split("://")[1].split(":")
    slow = socket.create_connection((host, int(port)))
    slow.sendall(b"POST /v1/listservicejobs HTTP/1.1\r\nHost: x\r\n")   # and then nothing
    t0 = time.time()
    r = client("alice").list_service_jobs(jobQueue="fifo_q")
    truthy("while a client dawdles, another is answered at once", time.time() - t0 < 2 and "jobSummaryList" in r)
    slow.settimeout(CFG["idle_timeout"] + 5)
    t0 = time.time()
    try:
        closed = slow.recv(100) == b""
    except (ConnectionResetError, socket.timeout):
        closed = True
    truthy("the slow client is disconnected after fairshare.api_idle_timeout",
           closed and time.time() - t0 < CFG["idle_timeout"] + 4, "%.1fs" % (time.time() - t0))
    slow.close()

    # Beyond fairshare.api_max_connections (the test sets 4): 429, closed.
    idle = [socket.create_connection((host, int(port))) for _ in range(5)]
    time.sleep(0.3)
    st, h, b = signed_raw("POST", "/v1/listservicejobs", json.dumps({"jobQueue": "fifo_q"}), who="alice")
    check("a connection beyond fairshare.api_max_connections is answered 429 TooManyRequestsException",
          (429, "TooManyRequestsException"), (st, b.get("__type")))
    for s in idle:
        s.close()
    time.sleep(0.3)
    st, h, b = signed_raw("POST", "/v1/listservicejobs", json.dumps({"jobQueue": "fifo_q"}), who="alice")
    check("once they close, requests are served again", 200, st)


def main():
    group, cfg = sys.argv[1], sys.argv[2]
    CFG.update(json.load(open(cfg)))
    try:
        globals()["group_" + group]()
    except Exception as e:      # a crash of the checks is a failure, not a hang
        import traceback
        traceback.print_exc()
        bad("group %s ran to its end" % group, repr(e))
    print("%d passed, %d failed" % (PASS, FAIL))
    sys.exit(1 if FAIL else 0)


if __name__ == "__main__":
    main()
