"""Reference scenario 1 (borrow and reclaim) set up and watched through boto3.

One environment of 100 x ml.p4d.24xlarge; a quota-share queue with ProdExp1
(limit 60, LEND_AND_BORROW) and ProdExp2 (limit 40, LEND), all made with
the admin operations. ProdExp2 runs 25 instances; ProdExp1 has a backlog and
borrows up to 75 (get_job_queue_snapshot's quotaShareUtilization says so);
ProdExp2 submits 15 more, the scheduler preempts 15 instances of ProdExp1
and ProdExp2 reaches 40: the victim's describe_service_job shows the
preemption in preemptionSummary, and the snapshot shows 60 and 40.

Used by test/api_admin/quota_shares.test; prints "ok: ..." or "FAILED: ..."
per check, exit status 0 when all held.
"""
import argparse
import json
import sys
import time

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

TYPE = "ml.p4d.24xlarge"
QUEUE = "p4-quota"
failures = []


def check(what, ok, detail=""):
    if ok:
        print("ok: %s" % what, flush=True)
    else:
        failures.append(what)
        print("FAILED: %s %s" % (what, detail), flush=True)


def client(endpoint, pair):
    key, secret = pair.split(":", 1)
    return boto3.client("batch", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id=key, aws_secret_access_key=secret,
                        config=Config(retries={"max_attempts": 3, "mode": "standard"}))


def submit(batch, name, share, count, priority=0):
    request = {
        "TrainingJobName": name,
        "RoleArn": "arn:aws:iam::123456789012:role/SageMakerExecutionRole",
        "AlgorithmSpecification": {"TrainingImage": "img:1", "TrainingInputMode": "File"},
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
        "ResourceConfig": {"InstanceType": TYPE, "InstanceCount": count, "VolumeSizeInGB": 100},
        "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
        # The emulator keeps it training until it is stopped.
        "HyperParameters": {"emulator_training_seconds": "inf"},
    }
    r = batch.submit_service_job(jobName=name, jobQueue=QUEUE, serviceJobType="SAGEMAKER_TRAINING",
                                 serviceRequestPayload=json.dumps(request), quotaShareName=share,
                                 schedulingPriority=priority)
    return r["jobArn"]


def usage(batch):
    """Instances each quota share holds, from the snapshot."""
    snap = batch.get_job_queue_snapshot(jobQueue=QUEUE)
    held = {}
    for u in snap.get("queueUtilization", {}).get("quotaShareUtilization", {}).get("topCapacityUtilization", []):
        held[u["quotaShareName"]] = sum(c["quantity"] for c in u["capacityUsage"] if c["capacityUnit"] == TYPE)
    return held, snap


def wait_for(batch, what, predicate, seconds):
    deadline = time.time() + seconds
    held, snap = usage(batch)
    while time.time() < deadline:
        held, snap = usage(batch)
        if predicate(held):
            break
        time.sleep(0.3)
    check(what, predicate(held), held)
    return held, snap


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--admin", required=True)
    ap.add_argument("--submitter", required=True)
    args = ap.parse_args()
    admin = client(args.endpoint, args.admin)
    user = client(args.endpoint, args.submitter)

    admin.create_service_environment(serviceEnvironmentName="p4-reservation", serviceEnvironmentType="SAGEMAKER_TRAINING",
                                     capacityLimits=[{"maxCapacity": 100, "capacityUnit": TYPE}])
    sp = admin.create_scheduling_policy(name="p4-quota-policy",
                                        quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
    admin.create_job_queue(jobQueueName=QUEUE, priority=10, schedulingPolicyArn=sp["arn"],
                           serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": "p4-reservation"}])
    q1 = admin.create_quota_share(quotaShareName="ProdExp1", jobQueue=QUEUE,
                                  capacityLimits=[{"maxCapacity": 60, "capacityUnit": TYPE}],
                                  resourceSharingConfiguration={"strategy": "LEND_AND_BORROW", "borrowLimit": -1},
                                  preemptionConfiguration={"inSharePreemption": "DISABLED"})
    admin.create_quota_share(quotaShareName="ProdExp2", jobQueue=QUEUE,
                             capacityLimits=[{"maxCapacity": 40, "capacityUnit": TYPE}],
                             resourceSharingConfiguration={"strategy": "LEND"},
                             preemptionConfiguration={"inSharePreemption": "DISABLED"})
    shares = user.list_quota_shares(jobQueue=QUEUE)["quotaShares"]
    check("list_quota_shares shows both shares, VALID and ENABLED",
          sorted((s["quotaShareName"], s["status"], s["state"]) for s in shares)
          == [("ProdExp1", "VALID", "ENABLED"), ("ProdExp2", "VALID", "ENABLED")], shares)
    d = user.describe_quota_share(quotaShareArn=q1["quotaShareArn"])
    check("describe_quota_share by ARN gives its limit and strategy",
          d["capacityLimits"] == [{"maxCapacity": 60, "capacityUnit": TYPE}]
          and d["resourceSharingConfiguration"]["strategy"] == "LEND_AND_BORROW", d)

    for i in range(5):
        submit(user, "exp2-%d" % i, "ProdExp2", 5)
    wait_for(user, "ProdExp2 runs 25 instances", lambda h: h.get("ProdExp2") == 25, 60)
    exp1 = [submit(user, "exp1-%d" % i, "ProdExp1", 15, priority=p) for i, p in enumerate((80, 50, 30, 10, 10, 10))]
    held, snap = wait_for(user, "ProdExp1 borrows: 75 instances (60 of its own and 15 of ProdExp2's)",
                          lambda h: h.get("ProdExp1") == 75 and h.get("ProdExp2") == 25, 60)
    # The sixth job enters the queue at the pass after its submit: wait for it.
    deadline = time.time() + 15
    while True:
        front = snap.get("frontOfQuotaShares", {}).get("quotaShares", {})
        if front.get("ProdExp1") or time.time() > deadline:
            break
        time.sleep(0.2)
        snap = user.get_job_queue_snapshot(jobQueue=QUEUE)
    check("frontOfQuotaShares shows ProdExp1's waiting job", len(front.get("ProdExp1") or []) >= 1, front)
    check("and the borrow holds: 75 and 25", usage(user)[0] == {"ProdExp1": 75, "ProdExp2": 25}, usage(user)[0])

    reclaim = [submit(user, "exp2-more-%d" % i, "ProdExp2", 5) for i in range(3)]
    wait_for(user, "the reclaim: ProdExp2 reaches 40, ProdExp1 60",
             lambda h: h.get("ProdExp2") == 40 and h.get("ProdExp1") == 60, 90)

    preempted = []
    for arn in exp1:
        j = user.describe_service_job(jobId=arn)
        summary = j.get("preemptionSummary") or {}
        if summary.get("preemptedAttemptCount", 0) > 0:
            preempted.append((arn, j, summary))
    check("exactly one ProdExp1 job (15 instances) was preempted", len(preempted) == 1,
          [(p[1]["jobName"], p[2]) for p in preempted])
    if preempted:
        arn, job, summary = preempted[0]
        recent = summary.get("recentPreemptedAttempts") or []
        check("its preemptionSummary lists the preempted attempt with its training job and reason",
              len(recent) >= 1 and "training-job/" in (recent[0].get("serviceResourceId") or {}).get("value", "")
              and bool(recent[0].get("statusReason")), summary)
        check("the preempted job is waiting again (RUNNABLE)", job["status"] == "RUNNABLE", job["status"])
        snap = user.get_job_queue_snapshot(jobQueue=QUEUE)
        front = snap.get("frontOfQuotaShares", {}).get("quotaShares", {}).get("ProdExp1", [])
        check("the snapshot's front of ProdExp1 holds waiting jobs", len(front) >= 1, front)
    # Placed, a reclaiming job is RUNNABLE to the API until its victims have
    # stopped and SageMaker has its training job (AWS Batch's SCHEDULED).
    for arn in reclaim:
        deadline = time.time() + 60
        while True:
            j = user.describe_service_job(jobId=arn)
            if j["status"] in ("SCHEDULED", "STARTING", "RUNNING") or time.time() > deadline:
                break
            time.sleep(0.5)
        check("the reclaiming job %s runs" % j["jobName"], j["status"] in ("SCHEDULED", "STARTING", "RUNNING")
              and "serviceResourceId" in j.get("latestAttempt", {}), (j["status"], j.get("latestAttempt")))

    try:
        user.update_quota_share(quotaShareArn=q1["quotaShareArn"], state="DISABLED")
        check("a submitter cannot disable a quota share", False)
    except ClientError as e:
        check("a submitter cannot disable a quota share", e.response["Error"]["Code"] == "ClientException")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
