"""Every answer of the AWS Batch API checked against botocore's model.

botocore parses an answer through the operation's output shape and drops
what the shape does not name, so a misspelt member, a number sent as a
string or a list sent as an object goes unnoticed by a boto3 caller until
the field is needed.  This script drives every operation fairshare serves
through boto3 (an admin's key, and a submitter's for the job operations),
takes each answer's raw JSON from the HTTP response, and checks it against
the output shape recursively: every member is one the shape names, of the
shape's type (string, enum value, integer, long, double, boolean, list,
map, structure, timestamp), and every required member is present.  Errors
are checked too: their JSON names __type and message, and x-amzn-ErrorType
agrees.

Used by test/api/conformance.test; prints "ok: ..." or "FAILED: ..." per
check and "N passed, N failed" last.
"""
import argparse
import json
import sys
import time

import boto3
import botocore.session
from botocore.config import Config
from botocore.exceptions import ClientError

MODEL = botocore.session.get_session().get_service_model("batch")
TYPE = "ml.g5.xlarge"
passed = 0
failed = 0
answers = {}		# operation -> raw JSON answers seen
mismatches = {}		# operation -> how its answers differ from the model


def check(what, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok: %s" % what, flush=True)
    else:
        failed += 1
        print("FAILED: %s %s" % (what, detail), flush=True)


def conform(shape, value, path, problems):
    """Append to problems every way value is not an instance of shape."""
    t = shape.type_name
    if t == "structure":
        if not isinstance(value, dict):
            problems.append("%s: a %s, not an object" % (path, type(value).__name__))
            return
        for name, v in value.items():
            if name not in shape.members:
                problems.append("%s.%s: not a member of %s" % (path, name, shape.name))
            elif v is not None:
                conform(shape.members[name], v, "%s.%s" % (path, name), problems)
        for name in shape.required_members:
            # The model marks DescribeServiceJob's startedAt required, yet a
            # job that has not started has no such time (AWS leaves it out
            # too, as for DescribeJobs' startedAt); fairshare leaves it out.
            if name not in value and not (shape.name == "DescribeServiceJobResponse" and name == "startedAt"):
                problems.append("%s.%s: required by %s, missing" % (path, name, shape.name))
    elif t == "list":
        if not isinstance(value, list):
            problems.append("%s: a %s, not a list" % (path, type(value).__name__))
            return
        for i, v in enumerate(value):
            conform(shape.member, v, "%s[%d]" % (path, i), problems)
    elif t == "map":
        if not isinstance(value, dict):
            problems.append("%s: a %s, not a map" % (path, type(value).__name__))
            return
        for k, v in value.items():
            conform(shape.key, k, "%s{key}" % path, problems)
            conform(shape.value, v, "%s[%r]" % (path, k), problems)
    elif t == "string":
        if not isinstance(value, str):
            problems.append("%s: a %s, not a string" % (path, type(value).__name__))
        elif shape.enum and value not in shape.enum:
            problems.append("%s: %r is not one of %s" % (path, value, shape.enum))
    elif t in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            problems.append("%s: %r is not an integer" % (path, value))
        elif t == "integer" and not -2 ** 31 <= value < 2 ** 31:
            problems.append("%s: %r does not fit an integer" % (path, value))
    elif t in ("double", "float"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            problems.append("%s: %r is not a number" % (path, value))
    elif t == "boolean":
        if not isinstance(value, bool):
            problems.append("%s: %r is not a boolean" % (path, value))
    elif t == "timestamp":
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            problems.append("%s: %r is not a timestamp (epoch seconds)" % (path, value))
    else:
        problems.append("%s: shape type %s not checked" % (path, t))


def capture(http_response, model, **kwargs):
    """after-call hook: check the raw answer of every successful call."""
    if http_response.status_code != 200:
        return
    body = http_response.content
    try:
        value = json.loads(body) if body else {}
    except ValueError:
        mismatches.setdefault(model.name, []).append("not JSON: %r" % body[:200])
        answers.setdefault(model.name, []).append(None)
        return
    answers.setdefault(model.name, []).append(value)
    if model.output_shape is not None:
        conform(model.output_shape, value, model.name, mismatches.setdefault(model.name, []))


def client(endpoint, pair):
    key, secret = pair.split(":", 1)
    c = boto3.client("batch", endpoint_url=endpoint, region_name="us-east-1",
                     aws_access_key_id=key, aws_secret_access_key=secret,
                     config=Config(retries={"max_attempts": 1}))
    c.meta.events.register("after-call.batch", capture)
    return c


def error_of(call, **kwargs):
    """The ClientError of a call that must fail, checked for its shape."""
    try:
        call(**kwargs)
    except ClientError as e:
        r = e.response
        body = r.get("Error", {})
        header = r.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("x-amzn-errortype", "")
        check("the error of %s names its type in the body and in x-amzn-ErrorType" % call.__name__,
              body.get("Code") and header.split(":")[0] == body.get("Code") and body.get("Message"), r)
        return body.get("Code")
    check("%s(%s) fails" % (call.__name__, kwargs), False)
    return None


def wait_status(batch, job_id, statuses, seconds=30):
    deadline = time.time() + seconds
    while True:
        job = batch.describe_service_job(jobId=job_id)
        if job["status"] in statuses or time.time() > deadline:
            return job
        time.sleep(0.3)


def payload(name):
    """A CreateTrainingJob request as the SageMaker SDK's TrainingQueue builds it."""
    return json.dumps({
        "TrainingJobName": name,
        "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
        "AlgorithmSpecification": {"TrainingImage": "123456789012.dkr.ecr.us-east-1.amazonaws.com/img:1",
                                   "TrainingInputMode": "File"},
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
        "ResourceConfig": {"InstanceType": TYPE, "InstanceCount": 1, "VolumeSizeInGB": 30},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
        "HyperParameters": {"emulator_training_seconds": "inf"},
        "CheckpointConfig": {"S3Uri": "s3://bucket/ckpt"},
    })


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--admin", required=True)
    ap.add_argument("--submitter", required=True)
    args = ap.parse_args()

    # The checker itself: it must see a member the shape does not name, a
    # number sent as a string, a value outside an enum and a missing
    # required member.
    problems = []
    conform(MODEL.operation_model("CreateJobQueue").output_shape,
            {"jobQueueName": "q", "jobQueueArn": "a", "jobQueueNmae": "q"}, "t", problems)
    conform(MODEL.operation_model("DescribeJobQueues").output_shape,
            {"jobQueues": [{"jobQueueName": "q", "jobQueueArn": "a", "state": "ON", "priority": "1"}]}, "t", problems)
    conform(MODEL.operation_model("CreateJobQueue").output_shape, {"jobQueueName": "q"}, "t", problems)
    check("the checker finds a misspelt member, a bad enum value, a number as a string, a missing member",
          sum("jobQueueNmae" in p for p in problems) == 1 and sum("'ON'" in p for p in problems) == 1
          and sum("'1' is not an integer" in p for p in problems) == 1
          and sum("jobQueueArn: required" in p for p in problems) == 1, problems)

    admin = client(args.endpoint, args.admin)
    user = client(args.endpoint, args.submitter)
    tags = {"team": "ml", "cost-center": "42"}

    # Service environments
    env = admin.create_service_environment(serviceEnvironmentName="conf-env", serviceEnvironmentType="SAGEMAKER_TRAINING",
                                           capacityLimits=[{"maxCapacity": 4, "capacityUnit": TYPE}], tags=tags)
    admin.describe_service_environments(serviceEnvironments=[env["serviceEnvironmentArn"]])
    admin.describe_service_environments(maxResults=1)
    admin.update_service_environment(serviceEnvironment="conf-env", capacityLimits=[{"maxCapacity": 6, "capacityUnit": TYPE}])

    # Scheduling policies
    fair = admin.create_scheduling_policy(name="conf-fair", tags=tags, fairsharePolicy={
        "shareDecaySeconds": 3600, "computeReservation": 10,
        "shareDistribution": [{"shareIdentifier": "A", "weightFactor": 1.0}, {"shareIdentifier": "B*", "weightFactor": 0.5}]})
    quota = admin.create_scheduling_policy(name="conf-quota", quotaSharePolicy={"idleResourceAssignmentStrategy": "FIFO"})
    admin.describe_scheduling_policies(arns=[fair["arn"], quota["arn"]])
    admin.list_scheduling_policies(maxResults=1)
    admin.list_scheduling_policies()
    admin.update_scheduling_policy(arn=fair["arn"], fairsharePolicy={
        "shareDecaySeconds": 0, "computeReservation": 0, "shareDistribution": [{"shareIdentifier": "A", "weightFactor": 2.0}]})

    # Job queues
    fq = admin.create_job_queue(jobQueueName="conf-fair-q", priority=5, schedulingPolicyArn=fair["arn"],
                                jobQueueType="SAGEMAKER_TRAINING", tags=tags,
                                serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": env["serviceEnvironmentArn"]}],
                                jobStateTimeLimitActions=[{"reason": "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY",
                                                           "state": "RUNNABLE", "maxTimeSeconds": 600, "action": "TERMINATE"}])
    qq = admin.create_job_queue(jobQueueName="conf-quota-q", priority=6, schedulingPolicyArn=quota["arn"],
                                jobQueueType="SAGEMAKER_TRAINING",
                                serviceEnvironmentOrder=[{"order": 1, "serviceEnvironment": "conf-env"}])
    admin.describe_job_queues(jobQueues=["conf-fair-q", qq["jobQueueArn"]])
    admin.describe_job_queues(maxResults=1)
    admin.update_job_queue(jobQueue="conf-fair-q", priority=7,
                           jobStateTimeLimitActions=[{"reason": "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE",
                                                      "state": "RUNNABLE", "maxTimeSeconds": 900, "action": "TERMINATE"}])

    # Quota shares
    share = admin.create_quota_share(quotaShareName="conf-share", jobQueue="conf-quota-q", tags=tags,
                                     capacityLimits=[{"maxCapacity": 2, "capacityUnit": TYPE}],
                                     resourceSharingConfiguration={"strategy": "LEND_AND_BORROW", "borrowLimit": 100},
                                     preemptionConfiguration={"inSharePreemption": "ENABLED"})
    admin.create_quota_share(quotaShareName="conf-share-2", jobQueue=qq["jobQueueArn"],
                             capacityLimits=[{"maxCapacity": 2, "capacityUnit": TYPE}],
                             resourceSharingConfiguration={"strategy": "RESERVE"},
                             preemptionConfiguration={"inSharePreemption": "DISABLED"})
    admin.describe_quota_share(quotaShareArn=share["quotaShareArn"])
    admin.list_quota_shares(jobQueue="conf-quota-q", maxResults=1)
    admin.list_quota_shares(jobQueue="conf-quota-q")
    admin.update_quota_share(quotaShareArn=share["quotaShareArn"], capacityLimits=[{"maxCapacity": 3, "capacityUnit": TYPE}])

    # Jobs: one running, one waiting behind it in each queue, one terminated
    jobs = []
    for i, (queue, extra) in enumerate([("conf-fair-q", {"shareIdentifier": "A"}),
                                        ("conf-fair-q", {"shareIdentifier": "Bx"}),
                                        ("conf-quota-q", {"quotaShareName": "conf-share"}),
                                        ("conf-quota-q", {"quotaShareName": "conf-share-2"})]):
        name = "conf-job-%d" % i
        r = user.submit_service_job(jobName=name, jobQueue=queue, serviceJobType="SAGEMAKER_TRAINING",
                                    serviceRequestPayload=payload(name), schedulingPriority=i, tags=tags,
                                    retryStrategy={"attempts": 2, "evaluateOnExit": [
                                        {"action": "RETRY", "onStatusReason":
                                         "Received status from SageMaker:InternalServerError: We encountered an internal error. Please try again."},
                                        {"action": "EXIT", "onStatusReason": "*"}]},
                                    timeoutConfig={"attemptDurationSeconds": 86400},
                                    preemptionConfiguration={"preemptionRetriesBeforeTermination": 3}, **extra)
        jobs.append(r["jobId"])
    # a running job's answer carries its attempts, latestAttempt, times
    job = wait_status(user, jobs[0], ("RUNNING",))
    check("the first job runs, with an attempt naming its training job",
          job.get("status") == "RUNNING" and job.get("latestAttempt", {}).get("serviceResourceId", {}).get("value", "")
          .startswith("arn:aws:sagemaker:"), job)
    for queue in ("conf-fair-q", "conf-quota-q"):
        for status in (None, "RUNNABLE", "SUBMITTED", "SUCCEEDED"):
            kwargs = {"jobQueue": queue}
            if status:
                kwargs["jobStatus"] = status
            user.list_service_jobs(**kwargs)
        user.list_service_jobs(jobQueue=queue, maxResults=1,
                               filters=[{"name": "JOB_NAME", "values": ["conf-job-*"]}])
        admin.get_job_queue_snapshot(jobQueue=queue)
    user.list_service_jobs(jobQueue="conf-quota-q", filters=[{"name": "QUOTA_SHARE_NAME", "values": ["conf-share"]}])
    user.update_service_job(jobId=jobs[1], schedulingPriority=9)
    user.terminate_service_job(jobId=jobs[1], reason="conformance")
    for j in jobs:
        user.describe_service_job(jobId=j)
    job = wait_status(user, jobs[1], ("FAILED",))
    check("the terminated job failed, isTerminated", job.get("status") == "FAILED" and job.get("isTerminated") is True, job)

    # Tags
    for arn in (env["serviceEnvironmentArn"], fair["arn"], fq["jobQueueArn"], share["quotaShareArn"]):
        admin.tag_resource(resourceArn=arn, tags={"extra": "1"})
        admin.list_tags_for_resource(resourceArn=arn)
        admin.untag_resource(resourceArn=arn, tagKeys=["extra"])
    job_arn = user.describe_service_job(jobId=jobs[0])["jobArn"]
    user.list_tags_for_resource(resourceArn=job_arn)
    # a job's tags are fixed at submit (docs/api-admin.md)
    error_of(user.tag_resource, resourceArn=job_arn, tags={"extra": "1"})

    # Errors are AWS-shaped too
    error_of(user.describe_service_job, jobId="999999999")
    error_of(admin.describe_quota_share, quotaShareArn="arn:aws:batch:us-east-1:000000000000:quota-share/conf-quota-q/none")
    error_of(user.create_job_queue, jobQueueName="nope", priority=1)

    # Deletes
    for j in jobs:
        user.terminate_service_job(jobId=j, reason="cleanup")
    admin.update_quota_share(quotaShareArn=share["quotaShareArn"], state="DISABLED")
    admin.delete_quota_share(quotaShareArn=share["quotaShareArn"])
    for q in ("conf-fair-q", "conf-quota-q"):
        admin.update_job_queue(jobQueue=q, state="DISABLED")
        admin.delete_job_queue(jobQueue=q)
    # a queue with jobs still stopping is DELETING until they end, as on AWS
    deadline = time.time() + 30
    while admin.describe_job_queues(jobQueues=["conf-fair-q", "conf-quota-q"])["jobQueues"] and time.time() < deadline:
        time.sleep(0.3)
    check("the deleted queues are gone once their jobs ended",
          admin.describe_job_queues(jobQueues=["conf-fair-q", "conf-quota-q"])["jobQueues"] == [])
    for p in (fair, quota):
        admin.delete_scheduling_policy(arn=p["arn"])
    admin.update_service_environment(serviceEnvironment="conf-env", state="DISABLED")
    admin.delete_service_environment(serviceEnvironment="conf-env")

    for name in sorted(answers):
        check("%s: its %d answers match the model" % (name, len(answers[name])),
              not mismatches.get(name), mismatches.get(name, [])[:8])
    served = set(answers)
    model_ops = {"SubmitServiceJob", "DescribeServiceJob", "ListServiceJobs", "UpdateServiceJob", "TerminateServiceJob",
                 "GetJobQueueSnapshot", "CreateServiceEnvironment", "UpdateServiceEnvironment",
                 "DescribeServiceEnvironments", "CreateJobQueue", "UpdateJobQueue", "DescribeJobQueues",
                 "CreateSchedulingPolicy", "UpdateSchedulingPolicy", "DescribeSchedulingPolicies",
                 "ListSchedulingPolicies", "CreateQuotaShare", "UpdateQuotaShare", "DescribeQuotaShare",
                 "ListQuotaShares", "DeleteQuotaShare", "DeleteJobQueue", "DeleteSchedulingPolicy",
                 "DeleteServiceEnvironment", "TagResource", "UntagResource", "ListTagsForResource"}
    check("every operation above was answered and checked", model_ops <= served, sorted(model_ops - served))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
