"""A notebook-style walk-through of a fair-share queue, through boto3 against
fairshare's AWS Batch API.

Creates the resources a team trying AWS Batch for SageMaker would (a
SageMaker service environment of one instance, a fair-share scheduling
policy with HIGHPRI/MIDPRI/LOWPRI at weights 1/3/5 and a queue using it, a
FIFO queue on an environment of its own), submits a LOWPRI and a MIDPRI
training job built as the SageMaker SDK's TrainingQueue.submit() builds
them, shows the queue (list_service_jobs, get_job_queue_snapshot), submits
a HIGHPRI job, and checks the order in which the dispatcher ran them on the
SageMaker emulator: HIGHPRI, MIDPRI, LOWPRI.

The walk-through's jobs arrive within one AWS Batch scheduling cycle; fairshare
places a job as soon as it is committed, so the environment is DISABLED
(UpdateServiceEnvironment) while the three jobs are submitted and ENABLED
afterwards: the scheduler then sees them together, as AWS Batch did.

Used by test/api_admin/notebook.test (assertions) and by the demo (--show).
Exit status 0 when every check held; each failed check is printed.

    python3 notebook.py --endpoint http://127.0.0.1:PORT --admin KEY:SECRET
                        --submitter KEY:SECRET [--train-seconds N] [--show]
"""
import argparse
import json
import sys
import time

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

# As the SageMaker SDK's aws_batch constants define them.
DEFAULT_RETRY = {
    "attempts": 1,
    "evaluateOnExit": [
        {"action": "RETRY",
         "onStatusReason": "Received status from SageMaker:InternalServerError: "
                           "We encountered an internal error. Please try again."},
        {"action": "EXIT", "onStatusReason": "*"},
    ],
}
DEFAULT_TIMEOUT = {"attemptDurationSeconds": 86400}

# As the AWS sample's create_resources.py names them.
C5_SE = "ml-c5-xlarge-fifo"
G6_SE = "ml-g6-12xlarge-fss"
G6_SP = "ml-g6-12xlarge-sp"
C5_QUEUE = "ml-c5-xlarge-queue"
G6_QUEUE = "ml-g6-12xlarge-queue"

failures = []
show = False


def say(*args):
    if show:
        print(*args, flush=True)


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
                        config=Config(retries={"max_attempts": 3, "mode": "standard"},
                                      connect_timeout=10, read_timeout=30))


def create_resources(batch):
    """create_resources.py: environments, the policy, the queues; wait until VALID."""
    for name in (C5_SE, G6_SE):
        r = batch.create_service_environment(
            serviceEnvironmentName=name, serviceEnvironmentType="SAGEMAKER_TRAINING", state="ENABLED",
            capacityLimits=[{"maxCapacity": 1, "capacityUnit": "NUM_INSTANCES"}])
        say("created service environment", r["serviceEnvironmentArn"])
    sp = batch.create_scheduling_policy(name=G6_SP, fairsharePolicy={
        "shareDecaySeconds": 3600,
        "shareDistribution": [{"shareIdentifier": "HIGHPRI", "weightFactor": 1},
                              {"shareIdentifier": "MIDPRI", "weightFactor": 3},
                              {"shareIdentifier": "LOWPRI", "weightFactor": 5}]})
    say("created scheduling policy", sp["arn"])
    r = batch.create_job_queue(jobQueueName=C5_QUEUE, jobQueueType="SAGEMAKER_TRAINING", state="ENABLED",
                               priority=2, serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": C5_SE}])
    say("created job queue", r["jobQueueArn"])
    r = batch.create_job_queue(jobQueueName=G6_QUEUE, jobQueueType="SAGEMAKER_TRAINING", state="ENABLED",
                               priority=1, serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": G6_SE}],
                               schedulingPolicyArn=sp["arn"])
    say("created job queue", r["jobQueueArn"])
    envs = batch.describe_service_environments(serviceEnvironments=[C5_SE, G6_SE])["serviceEnvironments"]
    check("both service environments are VALID",
          sorted(e["status"] for e in envs) == ["VALID", "VALID"], envs)
    queues = batch.describe_job_queues(jobQueues=[C5_QUEUE, G6_QUEUE])["jobQueues"]
    check("both job queues are VALID and ENABLED",
          sorted((q["status"], q["state"]) for q in queues) == [("VALID", "ENABLED")] * 2, queues)
    g6 = [q for q in queues if q["jobQueueName"] == G6_QUEUE][0]
    check("the fair-share queue names its policy's ARN", g6.get("schedulingPolicyArn") == sp["arn"], g6)
    policy = batch.describe_scheduling_policies(arns=[sp["arn"]])["schedulingPolicies"][0]
    weights = {d["shareIdentifier"]: d["weightFactor"] for d in policy["fairsharePolicy"]["shareDistribution"]}
    check("the policy has weights 1/3/5", weights == {"HIGHPRI": 1.0, "MIDPRI": 3.0, "LOWPRI": 5.0}, weights)


def submit(batch, job_name, priority, share, train_seconds):
    """What TrainingQueue.submit(model_trainer, inputs, job_name, priority, share_identifier) sends."""
    request = {
        "TrainingJobName": job_name,
        "RoleArn": "arn:aws:iam::123456789012:role/SageMakerExecutionRole",
        "AlgorithmSpecification": {
            "TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5-gpu-py311",
            "TrainingInputMode": "File"},
        "OutputDataConfig": {"S3OutputPath": "s3://notebook-bucket/output"},
        "InputDataConfig": [{"ChannelName": "train", "DataSource": {"S3DataSource": {
            "S3DataType": "S3Prefix", "S3Uri": "s3://notebook-bucket/data/train"}}}],
        "ResourceConfig": {"InstanceType": "ml.g6.12xlarge", "InstanceCount": 1, "VolumeSizeInGB": 30},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
        "HyperParameters": {"epochs": "1", "emulator_training_seconds": str(train_seconds)},
        "Tags": [{"Key": "notebook", "Value": "fairshare"}],
    }
    r = batch.submit_service_job(
        jobName=job_name, jobQueue=G6_QUEUE, serviceJobType="SAGEMAKER_TRAINING",
        serviceRequestPayload=json.dumps(request), retryStrategy=DEFAULT_RETRY,
        timeoutConfig=DEFAULT_TIMEOUT, schedulingPriority=priority, shareIdentifier=share,
        tags={"notebook": "fairshare"})
    say("submitted %-24s share %-7s priority %s -> jobId %s" % (job_name, share, priority, r["jobId"]))
    return r["jobArn"]


def show_queue(batch, title, expect):
    # A submitted job enters its queue at the scheduler's next pass (at once,
    # woken by the commit): wait for it, as the notebook's reader does.
    deadline = time.time() + 15
    while True:
        jobs = batch.list_service_jobs(jobQueue=G6_QUEUE, jobStatus="RUNNABLE")["jobSummaryList"]
        if len(jobs) >= expect or time.time() > deadline:
            break
        time.sleep(0.1)
    say("--- %s: list_service_jobs(jobStatus=RUNNABLE)" % title)
    for j in jobs:
        say("    %-24s %-9s share %s" % (j["jobName"], j["status"], j.get("shareIdentifier")))
    snap = batch.get_job_queue_snapshot(jobQueue=G6_QUEUE)
    front = [j["jobArn"] for j in snap.get("frontOfQueue", {}).get("jobs", [])]
    say("--- get_job_queue_snapshot: frontOfQueue in the order the scheduler will place them")
    for arn in front:
        say("    %s" % arn)
    return jobs, front


def main():
    global show
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--admin", required=True, help="ACCESS_KEY_ID:SECRET of an admin's key")
    ap.add_argument("--submitter", required=True, help="ACCESS_KEY_ID:SECRET of a submitter's key")
    ap.add_argument("--train-seconds", type=float, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--show", action="store_true", help="print what the notebook shows")
    args = ap.parse_args()
    show = args.show
    admin = client(args.endpoint, args.admin)
    user = client(args.endpoint, args.submitter)

    create_resources(admin)
    # A notebook's cell run twice: SDK code reuses what exists when AWS Batch
    # answers ClientException "Object already exists".
    again = [
        lambda: admin.create_service_environment(
            serviceEnvironmentName=C5_SE, serviceEnvironmentType="SAGEMAKER_TRAINING",
            capacityLimits=[{"maxCapacity": 1, "capacityUnit": "NUM_INSTANCES"}]),
        lambda: admin.create_scheduling_policy(name=G6_SP, fairsharePolicy={"shareDecaySeconds": 3600}),
        lambda: admin.create_job_queue(jobQueueName=C5_QUEUE, jobQueueType="SAGEMAKER_TRAINING", priority=2,
                                       serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": C5_SE}]),
    ]
    for what, create in zip(("service environment", "scheduling policy", "job queue"), again):
        try:
            create()
            check("creating the %s again is refused" % what, False)
        except ClientError as e:
            check("creating the %s again is ClientException \"Object already exists\"" % what,
                  (e.response["Error"]["Code"], e.response["Error"].get("Message"), e.response.get("message"))
                  == ("ClientException", "Object already exists", "Object already exists"), e.response)
    try:
        user.create_job_queue(jobQueueName="mine", priority=1,
                              serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": C5_SE}])
        check("a submitter's key cannot create a queue", False)
    except ClientError as e:
        check("a submitter's key cannot create a queue (ClientException)",
              e.response["Error"]["Code"] == "ClientException", e.response["Error"])

    # The jobs arrive together, as in one AWS Batch scheduling cycle.
    admin.update_service_environment(serviceEnvironment=G6_SE, state="DISABLED")
    say("--- %s is DISABLED while the jobs arrive (they arrive together, as in one scheduling cycle)" % G6_SE)
    base = "notebook-%d" % int(time.time())
    low = submit(user, base + "-low-pri", 5, "LOWPRI", args.train_seconds)
    mid = submit(user, base + "-mid-pri", 3, "MIDPRI", args.train_seconds)
    jobs, front = show_queue(user, "after the LOWPRI and MIDPRI jobs", 2)
    check("list_service_jobs shows both jobs RUNNABLE", len(jobs) == 2, jobs)
    check("the snapshot puts MIDPRI before LOWPRI", front == [mid, low], front)
    high = submit(user, base + "-high-pri", 1, "HIGHPRI", args.train_seconds)
    _, front = show_queue(user, "after the HIGHPRI job", 3)
    check("the snapshot puts HIGHPRI, MIDPRI, LOWPRI", front == [high, mid, low], front)
    admin.update_service_environment(serviceEnvironment=G6_SE, state="ENABLED")
    say("--- the environment is ENABLED; the dispatcher runs them one at a time")

    names = {high: "HIGHPRI", mid: "MIDPRI", low: "LOWPRI"}
    deadline = time.time() + args.timeout
    done = {}
    last = None
    while time.time() < deadline and len(done) < 3:
        states = {}
        for arn in names:
            d = user.describe_service_job(jobId=arn)
            states[names[arn]] = d["status"]
            if d["status"] in ("SUCCEEDED", "FAILED"):
                done[arn] = d
        if states != last:
            say("    " + ", ".join("%s %s" % kv for kv in states.items()))
            last = states
        time.sleep(0.2)
    check("the three jobs succeeded", len(done) == 3 and all(d["status"] == "SUCCEEDED" for d in done.values()),
          {names[a]: (d["status"], d.get("statusReason")) for a, d in done.items()})
    if len(done) == 3:
        order = [names[a] for a in sorted(done, key=lambda a: done[a]["startedAt"])]
        say("--- they ran in this order:", ", ".join(order))
        check("they ran HIGHPRI, MIDPRI, LOWPRI", order == ["HIGHPRI", "MIDPRI", "LOWPRI"], order)
        d = done[high]
        check("describe_service_job names the training job of its attempt",
              bool(d.get("attempts"))
              and "training-job/" in (d["attempts"][-1].get("serviceResourceId") or {}).get("value", ""),
              d.get("attempts"))
        check("the job keeps the share and priority it was submitted with",
              d.get("shareIdentifier") == "HIGHPRI" and d.get("schedulingPriority") == 1, d)
    say("--- %s" % ("every check held" if not failures else "%d checks failed" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
