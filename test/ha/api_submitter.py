"""test/ha/api_submitter.py — a stream of jobs through fairshare's AWS Batch
API (boto3's batch client, SigV4 with an API key), to whichever node of the
Patroni cluster serves it.

    python3 api_submitter.py CONFIG.json

CONFIG: {"ports": {"1": port, ...}, "key": [id, secret], "dir": DIR,
"interval": seconds}.  Every node's API worker has its own port; only the
primary's listens (a standby's waits for promotion), so a request to a
standby is refused at connect.  One job every interval: SubmitServiceJob to
the node that served the last one, then to the others in turn.  Stops when
DIR/stop-submitting exists, idles while DIR/pause-submitting does.

Writes one JSON line per try to DIR/api.log: t (start), t_end, node, and
outcome "ok" (with jobName, jobId), "refused" (nothing listened) or the
error; and each acknowledged job's name to DIR/acked-api.  A try that timed
out or failed after connecting is not retried (it may or may not have
committed): only acknowledged jobs are promised.
"""
import json
import os
import sys
import time

import boto3
import botocore.config
from botocore.exceptions import ClientError, ConnectTimeoutError, EndpointConnectionError


def payload(fails):
    p = {
        "RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
        "AlgorithmSpecification": {"TrainingImage": "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
                                   "TrainingInputMode": "File"},
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
        "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 1, "VolumeSizeInGB": 50},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
        "HyperParameters": ({"emulator_outcome": "Failed", "emulator_failure_reason": "AlgorithmError: asked to fail"}
                            if fails else {}),
    }
    return json.dumps(p)


def main():
    cfg = json.load(open(sys.argv[1]))
    d = cfg["dir"]
    nodes = sorted(cfg["ports"])
    conf = botocore.config.Config(connect_timeout=1, read_timeout=8, retries={"max_attempts": 1, "mode": "standard"})
    clients = {k: boto3.client("batch", endpoint_url="http://127.0.0.1:%d" % cfg["ports"][k], region_name="us-east-1",
                               aws_access_key_id=cfg["key"][0], aws_secret_access_key=cfg["key"][1], config=conf)
               for k in nodes}
    log = open(os.path.join(d, "api.log"), "a")
    acked = open(os.path.join(d, "acked-api"), "a")
    last = nodes[0]
    i = 0
    while not os.path.exists(os.path.join(d, "stop-submitting")):
        if os.path.exists(os.path.join(d, "pause-submitting")):
            time.sleep(0.2)
            continue
        i += 1
        name = "a%d" % i
        order = [last] + [k for k in nodes if k != last]
        for k in order:
            t = time.time()
            rec = {"t": t, "node": k, "name": name}
            try:
                r = clients[k].submit_service_job(jobName=name, jobQueue="q", serviceJobType="SAGEMAKER_TRAINING",
                                                  serviceRequestPayload=payload(i % 7 == 0))
                rec.update(outcome="ok", jobId=r["jobId"])
            except (EndpointConnectionError, ConnectTimeoutError):
                rec["outcome"] = "refused"
            except ClientError as e:
                rec["outcome"] = e.response.get("Error", {}).get("Code", "ClientError")
            except Exception as e:  # a read timeout, a dropped connection: unknown
                rec["outcome"] = type(e).__name__
            rec["t_end"] = time.time()
            log.write(json.dumps(rec) + "\n")
            log.flush()
            if rec["outcome"] == "ok":
                acked.write(name + "\n")
                acked.flush()
                last = k
            if rec["outcome"] != "refused":
                break
        time.sleep(cfg.get("interval", 0.3))


if __name__ == "__main__":
    main()
