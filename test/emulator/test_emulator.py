#!/usr/bin/python3
"""Tests of sagemaker_emulator.py, the local SageMaker that fairshare's tests
and demo run against.

Run with Debian's interpreter: /usr/bin/python3 test_emulator.py [-k PATTERN]
It starts its own emulator processes on free ports and stops them again.
Requests are signed the way a real client signs them, with Debian's
python3-botocore (SigV4Auth + AWSRequest, or a full botocore SageMaker
client pointed at the emulator with endpoint_url); botocore is used only
here, never by the emulator.  The last line printed is "N passed, M failed".
"""

import ctypes
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

try:
    import botocore.config
    import botocore.exceptions
    import botocore.session
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
except ImportError:  # pragma: no cover - the runner installs python3-botocore
    print("test_emulator.py needs python3-botocore (apt-get install python3-botocore)")
    print("0 passed, 1 failed")
    sys.exit(1)

HERE = os.path.dirname(os.path.abspath(__file__))
EMULATOR = os.path.join(HERE, "sagemaker_emulator.py")
PYTHON = os.environ.get("FS_PYTHON") or "/usr/bin/python3"
sys.path.insert(0, HERE)
import sagemaker_emulator as emu  # noqa: E402  (for the pure SigV4 function)

AKID = "AKIDTESTEMULATOR0001"
SECRET = "test/secret/key+for/the/emulator"
TOKEN = "FwoGZXIvYXdzEXAMPLE//session+token=="
REGION = "us-east-1"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
SM_MODEL = botocore.session.get_session().get_service_model("sagemaker")

_children = []


def _die_with_parent():
    """Child-side: get SIGTERM if the test process dies (no leftovers)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class Emulator:
    """One emulator process on a free port, and ways to talk to it."""

    def __init__(self, *extra, token=None, akid=AKID, secret=SECRET, region=REGION):
        self.tmp = tempfile.mkdtemp(prefix="sm-emulator-test.")
        self.port_file = os.path.join(self.tmp, "port")
        self.stderr_path = os.path.join(self.tmp, "stderr")
        self.akid, self.secret, self.token, self.region = akid, secret, token, region
        args = [PYTHON, EMULATOR, "--port", "0", "--port-file", self.port_file,
                "--region", region, "--access-key-id", akid, "--secret-access-key", secret]
        if token:
            args += ["--session-token", token]
        args += list(extra)
        self._stderr = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._stderr,
                                     stderr=self._stderr, preexec_fn=_die_with_parent)
        _children.append(self.proc)
        deadline = time.time() + 10
        while not os.path.exists(self.port_file):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("emulator did not start: " + open(self.stderr_path).read())
            time.sleep(0.02)
        self.port = int(open(self.port_file).read())
        self.url = "http://127.0.0.1:%d" % self.port

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()
        return self.proc.returncode

    # Control API -------------------------------------------------------
    def control(self, method, path, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            data = None if body is None else json.dumps(body).encode()
            conn.request(method, "/_emulator" + path, body=data,
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read() or b"null")
        finally:
            conn.close()

    def ok(self, method, path, body=None):
        status, out = self.control(method, path, body)
        assert status == 200, (status, out)
        return out

    def stats(self):
        return self.ok("GET", "/stats")

    def reset(self):
        self.ok("POST", "/reset")

    # Signed API calls ----------------------------------------------------
    def signed(self, op, body, **kw):
        """Sign like botocore; returns (method, path, headers, data)."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        path = kw.get("path", "/")
        headers = {"X-Amz-Target": "SageMaker." + op,
                   "Content-Type": "application/x-amz-json-1.1"}
        headers.update(kw.get("headers", {}))
        req = AWSRequest(method="POST", url=self.url + path, data=data, headers=headers)
        creds = Credentials(kw.get("akid", self.akid), kw.get("secret", self.secret),
                            kw.get("token", self.token))
        auth = SigV4Auth(creds, kw.get("service", "sagemaker"), kw.get("region", self.region))
        stamp = kw.get("timestamp")
        if stamp is None:
            auth.add_auth(req)
        else:  # a fixed X-Amz-Date, without touching the clock
            req.context["timestamp"] = stamp
            auth._modify_request_before_signing(req)
            canonical = auth.canonical_request(req)
            auth._inject_signature_to_request(
                req, auth.signature(auth.string_to_sign(req, canonical), req))
        return "POST", path, dict(req.headers.items()), data

    def call(self, op, body, conn=None, unsigned=False, mutate=None, **kw):
        """One API call; returns (status, headers, parsed JSON body).
        Raises the http.client/socket error when the connection is dropped."""
        if unsigned:
            method, path = "POST", "/"
            headers = {"X-Amz-Target": "SageMaker." + op,
                       "Content-Type": "application/x-amz-json-1.1"}
            data = json.dumps(body).encode()
        else:
            method, path, headers, data = self.signed(op, body, **kw)
        if mutate:
            headers, data = mutate(headers, data)
        own = conn is None
        conn = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
            return resp.status, dict(resp.getheaders()), json.loads(raw) if raw else None
        finally:
            if own:
                conn.close()

    def client(self, **config):
        cfg = {"retries": {"total_max_attempts": 1}, "parameter_validation": False}
        cfg.update(config)
        return botocore.session.get_session().create_client(
            "sagemaker", region_name=self.region, endpoint_url=self.url,
            aws_access_key_id=self.akid, aws_secret_access_key=self.secret,
            aws_session_token=self.token, config=botocore.config.Config(**cfg))


def job_request(name, instance_type="ml.m5.xlarge", count=1, **hyper):
    """A minimal valid CreateTrainingJob body; hyperparameters as keywords."""
    req = {"TrainingJobName": name, "RoleArn": ROLE,
           "AlgorithmSpecification": {"TrainingImage": "123456789012.dkr.ecr.us-east-1."
                                      "amazonaws.com/train:latest",
                                      "TrainingInputMode": "File"},
           "OutputDataConfig": {"S3OutputPath": "s3://bucket/output"},
           "ResourceConfig": {"InstanceType": instance_type, "InstanceCount": count,
                              "VolumeSizeInGB": 50},
           "StoppingCondition": {"MaxRuntimeInSeconds": 86400}}
    if hyper:
        req["HyperParameters"] = {k: str(v) for k, v in hyper.items()}
    return req


FAST = dict(emulator_starting_seconds=0.05, emulator_downloading_seconds=0.05,
            emulator_training_seconds=0.1, emulator_uploading_seconds=0.05)
HOLD = dict(emulator_starting_seconds="inf")


def wait_for(predicate, timeout=5.0, interval=0.02):
    deadline = time.time() + timeout
    while True:
        value = predicate()
        if value or time.time() > deadline:
            return value
        time.sleep(interval)


def error_type(body):
    return body["__type"].split("#")[-1].split(":")[0]


def error_message(body):
    return body.get("message", body.get("Message"))


class EmulatorTest(unittest.TestCase):
    """Shares one emulator per class; every test starts from a reset."""

    extra_args = ()
    token = None

    @classmethod
    def setUpClass(cls):
        cls.emu = Emulator(*cls.extra_args, token=cls.token)
        cls.addClassCleanup(cls.emu.stop)

    def setUp(self):
        self.emu.reset()

    def create(self, name, *args, **kw):
        status, _, body = self.emu.call("CreateTrainingJob", job_request(name, *args, **kw))
        self.assertEqual(status, 200, body)
        return body

    def describe(self, name):
        status, _, body = self.emu.call("DescribeTrainingJob", {"TrainingJobName": name})
        self.assertEqual(status, 200, body)
        return body

    def assertApiError(self, result, code, status=400, contains=None):
        got_status, headers, body = result
        self.assertEqual((got_status, error_type(body)), (status, code), body)
        if contains is not None:
            self.assertIn(contains, error_message(body))
        return body


# ---------------------------------------------------------------------------
# The SigV4 verifier on its own, against AWS's test-suite values and botocore
# ---------------------------------------------------------------------------

class TestSigV4Function(unittest.TestCase):
    SUITE_KEY = ("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")

    def verify(self, method, target, headers, body=b"", **kw):
        args = dict(access_key_id=self.SUITE_KEY[0], secret_access_key=self.SUITE_KEY[1],
                    session_token=None, region="us-east-1", service="service",
                    check_clock=False)
        args.update(kw)
        return emu.verify_sigv4(method, target, headers, body, **args)

    def suite_headers(self, signature, extra=()):
        return [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z"),
                ("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/"
                 "us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, "
                 "Signature=" + signature)] + list(extra)

    def test_aws_suite_get_vanilla(self):
        self.assertIsNone(self.verify("GET", "/", self.suite_headers(
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")))

    def test_aws_suite_query_order(self):
        self.assertIsNone(self.verify("GET", "/?Param2=value2&Param1=value1", self.suite_headers(
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500")))

    def test_aws_suite_post_vanilla(self):
        self.assertIsNone(self.verify("POST", "/", self.suite_headers(
            "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b")))

    def test_aws_suite_wrong_signature(self):
        with self.assertRaises(emu.ApiError) as cm:
            self.verify("GET", "/", self.suite_headers("0" * 64))
        self.assertEqual(cm.exception.code, "InvalidSignatureException")
        self.assertIn("GET\n/\n\nhost:example.amazonaws.com\n", cm.exception.message)

    def test_agrees_with_botocore_on_random_requests(self):
        """Random paths, queries, header values and bodies signed by botocore
        at fixed times all verify; flipping any byte of the body does not."""
        rng = random.Random(7)
        alphabet = "abcXYZ019-_.~ %/=&+*"
        for i in range(200):
            path = "/" + "/".join("".join(rng.choice("ab-c_~.1") for _ in range(rng.randint(0, 5)))
                                  for _ in range(rng.randint(0, 3)))
            query = "&".join("%s=%s" % ("".join(rng.choice("abAB12") for _ in range(3)),
                                        urllib.parse.quote("".join(rng.choice("xy z-_%/+~")
                                                                   for _ in range(3)), safe="-_.~"))
                             for _ in range(rng.randint(0, 3)))
            url = "http://127.0.0.1:8443" + path + ("?" + query if query else "")
            body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))).encode()
            headers = {"Content-Type": "application/x-amz-json-1.1",
                       "X-Amz-Target": "SageMaker.DescribeTrainingJob",
                       "X-Custom": "  spaced   value  " + str(i)}
            token = TOKEN if i % 2 else None
            req = AWSRequest(method="POST", url=url, data=body, headers=headers)
            req.context["timestamp"] = "20240229T%02d%02d%02dZ" % (i % 24, i % 60, (7 * i) % 60)
            auth = SigV4Auth(Credentials(AKID, SECRET, token), "sagemaker", "eu-west-1")
            auth._modify_request_before_signing(req)
            canonical = auth.canonical_request(req)
            auth._inject_signature_to_request(
                req, auth.signature(auth.string_to_sign(req, canonical), req))
            sent = list(req.headers.items()) + [("Host", "127.0.0.1:8443")]
            target = req.url[len("http://127.0.0.1:8443"):]
            args = dict(access_key_id=AKID, secret_access_key=SECRET, session_token=token,
                        region="eu-west-1", service="sagemaker", check_clock=False)
            with self.subTest(i=i, url=url):
                self.assertIsNone(emu.verify_sigv4("POST", target, sent, body, **args))
                tampered = body + b" "
                with self.assertRaises(emu.ApiError):
                    emu.verify_sigv4("POST", target, sent, tampered, **args)


# ---------------------------------------------------------------------------
# The process: CLI, port file, loopback only, clean exit on signals, log
# ---------------------------------------------------------------------------

class TestProcess(unittest.TestCase):
    def test_port_file_loopback_and_sigterm(self):
        e = Emulator()
        try:
            self.assertGreater(e.port, 0)
            self.assertEqual(e.ok("GET", "/health")["port"], e.port)
            listening = subprocess.run(["ss", "-Hltn", "sport = :%d" % e.port],
                                       capture_output=True, text=True).stdout
            if listening:  # ss is in iproute2; skip the check where it is missing
                self.assertIn("127.0.0.1:%d" % e.port, listening)
                self.assertNotIn("0.0.0.0:%d" % e.port, listening)
        finally:
            started = time.time()
            self.assertEqual(e.stop(signal.SIGTERM), 0)
        self.assertLess(time.time() - started, 3)
        self.assertFalse(os.path.exists(e.port_file), "port file left behind")
        self.assertIn("stopped", open(e.stderr_path).read())

    def test_sigint_exits_cleanly_with_a_client_connected(self):
        e = Emulator()
        idle = socket.create_connection(("127.0.0.1", e.port))  # a keep-alive client
        try:
            self.assertEqual(e.stop(signal.SIGINT), 0)
        finally:
            idle.close()

    def test_fixed_port_and_busy_port(self):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        e = Emulator("--port", str(port))
        try:
            self.assertEqual(e.port, port)
            busy = subprocess.run([PYTHON, EMULATOR, "--port", str(port)],
                                  capture_output=True, timeout=10, preexec_fn=_die_with_parent)
            self.assertNotEqual(busy.returncode, 0)
        finally:
            e.stop()

    def test_bad_cli_settings_are_refused(self):
        for args in (["--capacity", "p5=fail"], ["--limit", "ml.p5.48xlarge=many"],
                     ["--throttle-rate", "0.7", "--error-5xx-rate", "0.7"],
                     ["--time-scale", "-1"]):
            with self.subTest(args=args):
                r = subprocess.run([PYTHON, EMULATOR] + args, capture_output=True, timeout=10,
                                   preexec_fn=_die_with_parent)
                self.assertNotEqual(r.returncode, 0)

    def test_log_file_time_scale_and_cli_defaults(self):
        log = os.path.join(tempfile.mkdtemp(prefix="sm-emulator-log."), "requests.log")
        e = Emulator("--log", log, "--time-scale", "0.05", "--default-training-seconds", "10",
                     "--default-outcome", "Failed", "--default-failure-reason",
                     "AlgorithmError: from the CLI", "--capacity", "ml.p5.48xlarge=fail",
                     "--limit", "ml.g5.xlarge=1")
        try:
            started = time.time()
            self.assertEqual(e.call("CreateTrainingJob", job_request("scaled"))[0], 200)
            done = wait_for(lambda: e.call("DescribeTrainingJob", {"TrainingJobName": "scaled"})
                            [2]["TrainingJobStatus"] == "Failed", timeout=5)
            self.assertTrue(done)
            self.assertLess(time.time() - started, 3)  # 11 s of timeline at 0.05
            body = e.call("DescribeTrainingJob", {"TrainingJobName": "scaled"})[2]
            self.assertEqual(body["FailureReason"], "AlgorithmError: from the CLI")
            starts = {t["Status"]: t["StartTime"] for t in body["SecondaryStatusTransitions"]}
            self.assertAlmostEqual(starts["Failed"] - starts["Training"], 0.5, delta=0.01)
            # --capacity and --limit
            e.call("CreateTrainingJob", job_request("p5", "ml.p5.48xlarge",
                                                    emulator_starting_seconds=0))
            self.assertTrue(wait_for(lambda: e.call("DescribeTrainingJob", {
                "TrainingJobName": "p5"})[2].get("FailureReason", "").startswith("CapacityError")))
            self.assertEqual(e.call("CreateTrainingJob", job_request("g5a", "ml.g5.xlarge"))[0], 200)
            self.assertEqual(error_type(e.call("CreateTrainingJob",
                                               job_request("g5b", "ml.g5.xlarge"))[2]),
                             "ResourceLimitExceeded")
            # reset keeps the CLI settings
            e.reset()
            self.assertEqual(e.ok("GET", "/capacity"), {"ml.p5.48xlarge": "fail"})
            self.assertEqual(e.ok("GET", "/limits"), {"ml.g5.xlarge": 1})
        finally:
            e.stop()
        lines = [json.loads(line) for line in open(log)]
        self.assertGreaterEqual(len(lines), 5)
        first = lines[0]
        self.assertEqual((first["op"], first["name"], first["outcome"], first["status"]),
                         ("CreateTrainingJob", "scaled", "ok", 200))
        self.assertIn("ResourceLimitExceeded", [line["outcome"] for line in lines])


# ---------------------------------------------------------------------------
# The operations' happy paths and response shapes
# ---------------------------------------------------------------------------

def shape_members(name):
    return SM_MODEL.shape_for(name).members


class TestOperations(EmulatorTest):
    def test_create_returns_the_arn(self):
        body = self.create("My-Job-01", **HOLD)
        self.assertEqual(body, {"TrainingJobArn":
                                "arn:aws:sagemaker:us-east-1:123456789012:training-job/my-job-01"})

    def test_describe_has_the_documented_shape(self):
        self.create("shape-1", count=3, **FAST)
        body = self.describe("shape-1")
        output = SM_MODEL.operation_model("DescribeTrainingJob").output_shape
        for member in output.required_members:
            self.assertIn(member, body)
        for member in body:
            self.assertIn(member, output.members, "not a DescribeTrainingJob member")
        self.assertEqual(body["TrainingJobName"], "shape-1")
        self.assertEqual(body["TrainingJobStatus"], "InProgress")
        self.assertEqual(body["SecondaryStatus"], "Starting")
        self.assertEqual(body["ResourceConfig"], {"InstanceType": "ml.m5.xlarge",
                                                  "InstanceCount": 3, "VolumeSizeInGB": 50})
        self.assertEqual(body["HyperParameters"]["emulator_training_seconds"], "0.1")
        self.assertIsInstance(body["CreationTime"], float)
        self.assertLess(abs(body["CreationTime"] - time.time()), 5)
        self.assertNotIn("TrainingEndTime", body)
        wait_for(lambda: self.describe("shape-1")["TrainingJobStatus"] == "Completed")
        body = self.describe("shape-1")
        statuses = SM_MODEL.shape_for("SecondaryStatus").enum
        for t in body["SecondaryStatusTransitions"]:
            self.assertIn(t["Status"], statuses)
            self.assertIsInstance(t["StartTime"], float)
            self.assertIsInstance(t["EndTime"], float)
            self.assertTrue(t["StatusMessage"])
        for key in ("TrainingStartTime", "TrainingEndTime", "LastModifiedTime"):
            self.assertIsInstance(body[key], float)
        self.assertLessEqual(body["CreationTime"], body["TrainingStartTime"])
        self.assertLessEqual(body["TrainingStartTime"], body["TrainingEndTime"])
        self.assertEqual(body["ModelArtifacts"]["S3ModelArtifacts"],
                         "s3://bucket/output/shape-1/output/model.tar.gz")
        self.assertEqual(body["BillableTimeInSeconds"], 3 * body["TrainingTimeInSeconds"])

    def test_expect_100_continue(self):
        """libcurl sends large bodies only after "100 Continue"."""
        method, path, headers, data = self.emu.signed("CreateTrainingJob",
                                                      job_request("expect-1", **HOLD))
        headers["Expect"] = "100-continue"
        headers["Content-Length"] = str(len(data))
        head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % (method, path, self.emu.port)
        head += "".join("%s: %s\r\n" % kv for kv in headers.items()) + "\r\n"
        with socket.create_connection(("127.0.0.1", self.emu.port), timeout=10) as s:
            s.sendall(head.encode())
            self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 100 Continue"))
            s.sendall(data)
            answer = b""
            while b"training-job/expect-1" not in answer:
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
        self.assertTrue(answer.startswith(b"HTTP/1.1 200 "), answer)

    def test_chunked_body(self):
        method, path, headers, data = self.emu.signed("CreateTrainingJob",
                                                      job_request("chunked-1", **HOLD))
        headers["Transfer-Encoding"] = "chunked"
        conn = http.client.HTTPConnection("127.0.0.1", self.emu.port, timeout=10)
        try:
            conn.request(method, path, body=iter([data[:17], data[17:]]), headers=headers,
                         encode_chunked=True)
            resp = conn.getresponse()
            self.assertEqual(resp.status, 200, resp.read())
        finally:
            conn.close()
        self.assertEqual(self.describe("chunked-1")["TrainingJobStatus"], "InProgress")

    def test_names_are_case_insensitive(self):
        self.create("CaseJob", **HOLD)
        self.assertEqual(self.describe("casejob")["TrainingJobName"], "CaseJob")

    def test_botocore_client_round_trip_and_waiter(self):
        c = self.emu.client()
        arn = c.create_training_job(**job_request("boto-1", **FAST))["TrainingJobArn"]
        self.assertTrue(arn.endswith("/boto-1"))
        c.get_waiter("training_job_completed_or_stopped").wait(
            TrainingJobName="boto-1", WaiterConfig={"Delay": 1, "MaxAttempts": 10})
        d = c.describe_training_job(TrainingJobName="boto-1")
        self.assertEqual((d["TrainingJobStatus"], d["SecondaryStatus"]), ("Completed", "Completed"))
        self.assertEqual([s["TrainingJobName"] for s in
                          c.list_training_jobs()["TrainingJobSummaries"]], ["boto-1"])
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            c.create_training_job(**job_request("boto-1"))
        self.assertEqual(cm.exception.response["Error"]["Code"], "ResourceInUse")
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            c.describe_training_job(TrainingJobName="nobody")
        self.assertEqual(cm.exception.response["Error"]["Code"], "ValidationException")
        self.assertEqual(cm.exception.response["Error"]["Message"], "Requested resource not found.")

    def test_stop_goes_through_stopping_to_stopped(self):
        self.create("stop-1", emulator_training_seconds="inf", emulator_stopping_seconds=0.3,
                    emulator_starting_seconds=0, emulator_downloading_seconds=0)
        self.assertEqual(self.describe("stop-1")["SecondaryStatus"], "Training")
        status, _, body = self.emu.call("StopTrainingJob", {"TrainingJobName": "stop-1"})
        self.assertEqual((status, body), (200, {}))
        d = self.describe("stop-1")
        self.assertEqual((d["TrainingJobStatus"], d["SecondaryStatus"]), ("Stopping", "Stopping"))
        self.assertApiError(self.emu.call("StopTrainingJob", {"TrainingJobName": "stop-1"}),
                            "ValidationException", contains="in status Stopping.")
        self.assertTrue(wait_for(lambda: self.describe("stop-1")["TrainingJobStatus"] == "Stopped"))
        d = self.describe("stop-1")
        self.assertEqual(d["SecondaryStatus"], "Stopped")
        self.assertIn("TrainingEndTime", d)
        self.assertNotIn("FailureReason", d)
        self.assertEqual([t["Status"] for t in d["SecondaryStatusTransitions"]],
                         ["Starting", "Downloading", "Training", "Stopping", "Stopped"])
        starts = {t["Status"]: t["StartTime"] for t in d["SecondaryStatusTransitions"]}
        self.assertAlmostEqual(starts["Stopped"] - starts["Stopping"], 0.3, delta=0.01)
        self.assertApiError(self.emu.call("StopTrainingJob", {"TrainingJobName": "stop-1"}),
                            "ValidationException",
                            contains="The request was rejected because the training job is "
                                     "in status Stopped.")
        self.assertEqual(self.emu.stats()["stops"], {"stop-1": 1})

    def test_stop_a_finished_or_unknown_job(self):
        self.create("done-1", **HOLD)
        self.emu.ok("POST", "/jobs/done-1/complete")
        self.assertApiError(self.emu.call("StopTrainingJob", {"TrainingJobName": "done-1"}),
                            "ValidationException", contains="in status Completed.")
        self.assertApiError(self.emu.call("StopTrainingJob", {"TrainingJobName": "ghost"}),
                            "ValidationException", contains="Requested resource not found.")

    def test_list_tags_returns_the_create_tags_in_pages(self):
        tags = [{"Key": "k%02d" % i, "Value": "v%d" % i} for i in range(53)]
        request = job_request("tagged-1", **HOLD)
        request["Tags"] = tags[:50]
        status, _, _ = self.emu.call("CreateTrainingJob", request)
        self.assertEqual(status, 200)
        arn = self.describe("tagged-1")["TrainingJobArn"]
        status, _, body = self.emu.call("ListTags", {"ResourceArn": arn, "MaxResults": 100})
        self.assertEqual((status, body), (200, {"Tags": tags[:50]}))
        status, _, first = self.emu.call("ListTags", {"ResourceArn": arn})
        self.assertEqual(status, 200)
        self.assertEqual(len(first["Tags"]), 50)
        self.assertNotIn("NextToken", first)
        request = job_request("tagged-2", **HOLD)
        status, _, _ = self.emu.call("CreateTrainingJob", request)
        status, _, body = self.emu.call("ListTags", {"ResourceArn": self.describe("tagged-2")["TrainingJobArn"]})
        self.assertEqual((status, body), (200, {"Tags": []}))
        self.assertApiError(self.emu.call("ListTags", {"ResourceArn": arn.replace("tagged-1", "ghost")}),
                            "ValidationException", contains="Requested resource not found")
        self.assertApiError(self.emu.call("ListTags", {"ResourceArn": arn, "MaxResults": 101}),
                            "ValidationException", contains="less than or equal to 100")

    def test_list_filters_sorting_and_pagination(self):
        names = ["list-%02d" % i for i in range(25)]
        for name in names:
            self.create(name, **HOLD)
        self.create("other-job", **HOLD)
        self.emu.ok("POST", "/jobs/list-03/complete")
        self.emu.ok("POST", "/jobs/list-04/fail", {"reason": "AlgorithmError: x"})
        list_ = lambda **kw: self.emu.call("ListTrainingJobs", kw)  # noqa: E731

        status, _, body = list_()
        self.assertEqual(status, 200)
        self.assertEqual(len(body["TrainingJobSummaries"]), 10)  # default MaxResults
        self.assertIn("NextToken", body)
        summary = body["TrainingJobSummaries"][0]
        self.assertEqual(summary["TrainingJobName"], "other-job")  # newest first by default
        for member in summary:
            self.assertIn(member, shape_members("TrainingJobSummary"))
        for member in SM_MODEL.shape_for("TrainingJobSummary").required_members:
            self.assertIn(member, summary)

        seen, token = [], None
        while True:
            kw = {"NameContains": "LIST", "MaxResults": 7, "SortBy": "Name",
                  "SortOrder": "Ascending"}
            if token:
                kw["NextToken"] = token
            status, _, body = list_(**kw)
            self.assertEqual(status, 200, body)
            seen += [s["TrainingJobName"] for s in body["TrainingJobSummaries"]]
            token = body.get("NextToken")
            if not token:
                break
        self.assertEqual(seen, names)

        body = list_(SortBy="Name", SortOrder="Descending", MaxResults=3)[2]
        self.assertEqual([s["TrainingJobName"] for s in body["TrainingJobSummaries"]],
                         ["other-job", "list-24", "list-23"])
        body = list_(StatusEquals="Completed", MaxResults=100)[2]
        self.assertEqual([s["TrainingJobName"] for s in body["TrainingJobSummaries"]], ["list-03"])
        self.assertIn("TrainingEndTime", body["TrainingJobSummaries"][0])
        body = list_(StatusEquals="Failed", MaxResults=100)[2]
        self.assertEqual([s["TrainingJobName"] for s in body["TrainingJobSummaries"]], ["list-04"])
        # As documented, StatusEquals filters the MaxResults jobs already chosen.
        body = list_(StatusEquals="Completed", MaxResults=5, SortBy="Name",
                     SortOrder="Descending")[2]
        self.assertEqual(body["TrainingJobSummaries"], [])
        self.assertIn("NextToken", body)

        # CreationTime has millisecond resolution (as in SageMaker): space them out.
        for name in ("win-a", "win-b", "win-c"):
            time.sleep(0.005)
            self.create(name, **HOLD)
        created = {n: self.describe(n)["CreationTime"] for n in ("win-a", "win-c")}
        body = list_(CreationTimeAfter=created["win-a"], CreationTimeBefore=created["win-c"],
                     SortOrder="Ascending")[2]
        self.assertEqual([s["TrainingJobName"] for s in body["TrainingJobSummaries"]], ["win-b"])

        # /backdate makes a job older, finished or not: CreationTimeAfter leaves it out.
        self.emu.ok("POST", "/jobs/list-03/backdate", {"seconds": 86400})
        self.assertAlmostEqual(self.describe("list-03")["CreationTime"],
                               self.describe("list-02")["CreationTime"] - 86400, delta=5)
        body = list_(NameContains="list-0", CreationTimeAfter=self.describe("list-02")["CreationTime"] - 3600,
                     MaxResults=100)[2]
        self.assertNotIn("list-03", [s["TrainingJobName"] for s in body["TrainingJobSummaries"]])
        self.assertIn("list-04", [s["TrainingJobName"] for s in body["TrainingJobSummaries"]])
        self.assertEqual(self.emu.control("POST", "/jobs/list-03/backdate", {"seconds": -1})[0], 400)

    def test_list_validation(self):
        for kw, member in (({"MaxResults": 0}, "maxResults"), ({"MaxResults": 101}, "maxResults"),
                           ({"SortBy": "Size"}, "sortBy"), ({"SortOrder": "Up"}, "sortOrder"),
                           ({"StatusEquals": "Running"}, "statusEquals"),
                           ({"NameContains": "a_b"}, "nameContains"),
                           ({"CreationTimeAfter": "yesterday"}, "creationTimeAfter")):
            with self.subTest(kw=kw):
                self.assertApiError(self.emu.call("ListTrainingJobs", kw), "ValidationException",
                                    contains="'%s'" % member)
        self.assertApiError(self.emu.call("ListTrainingJobs", {"NextToken": "garbage"}),
                            "ValidationException", contains="pagination token")

    def test_list_with_iso_timestamps_from_botocore(self):
        self.create("iso-1", **HOLD)
        c = self.emu.client()
        out = c.list_training_jobs(CreationTimeAfter=time.time() - 60,
                                   CreationTimeBefore="2999-01-01T00:00:00Z")
        self.assertEqual([s["TrainingJobName"] for s in out["TrainingJobSummaries"]], ["iso-1"])


# ---------------------------------------------------------------------------
# Validation, like SageMaker
# ---------------------------------------------------------------------------

class TestValidation(EmulatorTest):
    def create_raw(self, body):
        return self.emu.call("CreateTrainingJob", body)

    def test_missing_required_members(self):
        for member, path in (("TrainingJobName", "trainingJobName"), ("RoleArn", "roleArn"),
                             ("OutputDataConfig", "outputDataConfig"),
                             ("AlgorithmSpecification", "algorithmSpecification"),
                             ("ResourceConfig", "resourceConfig"),
                             ("StoppingCondition", "stoppingCondition")):
            with self.subTest(member=member):
                req = job_request("missing-1")
                del req[member]
                body = self.assertApiError(self.create_raw(req), "ValidationException")
                self.assertEqual(body["__type"], "com.amazonaws.sagemaker#ValidationException")
                self.assertEqual(body["message"],
                                 "1 validation error detected: Value null at '%s' failed to "
                                 "satisfy constraint: Member must not be null" % path)
        self.assertEqual(self.emu.stats()["creates"], {})

    def test_missing_nested_members(self):
        cases = (("OutputDataConfig", "S3OutputPath", "outputDataConfig.s3OutputPath"),
                 ("AlgorithmSpecification", "TrainingInputMode",
                  "algorithmSpecification.trainingInputMode"),
                 ("ResourceConfig", "VolumeSizeInGB", "resourceConfig.volumeSizeInGB"),
                 ("ResourceConfig", "InstanceCount", "resourceConfig.instanceCount"),
                 ("ResourceConfig", "InstanceType", "resourceConfig.instanceType"))
        for outer, inner, path in cases:
            with self.subTest(member=inner):
                req = job_request("missing-2")
                del req[outer][inner]
                self.assertApiError(self.create_raw(req), "ValidationException",
                                    contains="Value null at '%s'" % path)

    def test_all_problems_are_listed(self):
        req = job_request("two problems")
        del req["RoleArn"]
        body = self.assertApiError(self.create_raw(req), "ValidationException")
        self.assertTrue(body["message"].startswith("2 validation errors detected: "), body)
        self.assertIn("'trainingJobName'", body["message"])
        self.assertIn("'roleArn'", body["message"])

    def test_training_job_names(self):
        for bad in ("", "-lead", "trail-", "under_score", "dot.ted", "sp ace", "x" * 64,
                    "newline\n", "ünïcode", 42):
            with self.subTest(name=bad):
                self.assertApiError(self.create_raw(job_request(bad)), "ValidationException",
                                    contains="at 'trainingJobName'")
        for good in ("a", "A1", "a--b", "x" * 63, "Job-2024-01-01-12-00-00"):
            with self.subTest(name=good):
                self.create(good, **HOLD)

    def test_instance_counts(self):
        for bad in (0, -1, "2", 1.5, True):
            with self.subTest(count=bad):
                req = job_request("count-1")
                req["ResourceConfig"]["InstanceCount"] = bad
                self.assertApiError(self.create_raw(req), "ValidationException",
                                    contains="at 'resourceConfig.instanceCount'")

    def test_instance_types(self):
        for bad in ("p4d.24xlarge", "ml.p4d", "ML.P4D.24XLARGE", "ml.p4d.24xlarge ", 5, ""):
            with self.subTest(type=bad):
                self.assertApiError(self.create_raw(job_request("type-1", bad)),
                                    "ValidationException",
                                    contains="at 'resourceConfig.instanceType'")
        for good in ("ml.p5.48xlarge", "ml.trn1n.32xlarge", "ml.g6e.xlarge"):
            self.create("type-" + good.replace(".", "-"), good, **HOLD)

    def test_instance_groups(self):
        req = job_request("groups-1", **HOLD)
        req["ResourceConfig"] = {"VolumeSizeInGB": 10, "InstanceGroups": [
            {"InstanceGroupName": "a", "InstanceType": "ml.p4d.24xlarge", "InstanceCount": 2},
            {"InstanceGroupName": "b", "InstanceType": "ml.c5.xlarge", "InstanceCount": 1}]}
        self.assertEqual(self.create_raw(req)[0], 200)
        self.assertEqual(self.emu.stats()["jobs"]["groups-1"]["instances"],
                         {"ml.p4d.24xlarge": 2, "ml.c5.xlarge": 1})
        req["TrainingJobName"] = "groups-2"
        req["ResourceConfig"]["InstanceGroups"][1]["InstanceCount"] = 0
        self.assertApiError(self.create_raw(req), "ValidationException",
                            contains="resourceConfig.instanceGroups.2.instanceCount")

    def test_other_member_constraints(self):
        def with_(path, value):
            req = job_request("constraint-1")
            target = req
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
            return req
        cases = ((("RoleArn",), "not-an-arn", "'roleArn'"),
                 (("OutputDataConfig", "S3OutputPath"), "/local/path",
                  "'outputDataConfig.s3OutputPath'"),
                 (("AlgorithmSpecification", "TrainingInputMode"), "Stream",
                  "'algorithmSpecification.trainingInputMode'"),
                 (("ResourceConfig", "VolumeSizeInGB"), 0, "'resourceConfig.volumeSizeInGB'"),
                 (("StoppingCondition", "MaxRuntimeInSeconds"), 0,
                  "'stoppingCondition.maxRuntimeInSeconds'"),
                 (("HyperParameters",), {"epochs": 10}, "'hyperParameters.epochs'"),
                 (("HyperParameters",), {"emulator_training_seconds": "soon"},
                  "'hyperParameters.emulator_training_seconds'"),
                 (("HyperParameters",), {"emulator_outcome": "Maybe"},
                  "'hyperParameters.emulator_outcome'"),
                 (("OutputDataConfig",), "s3://bucket", "'outputDataConfig'"))
        for path, value, contains in cases:
            with self.subTest(path=path, value=value):
                self.assertApiError(self.create_raw(with_(path, value)), "ValidationException",
                                    contains=contains)
        req = job_request("constraint-2")
        del req["AlgorithmSpecification"]["TrainingImage"]
        self.assertApiError(self.create_raw(req), "ValidationException",
                            contains="TrainingImage or AlgorithmSpecification.AlgorithmName")

    def test_bodies_that_are_not_requests(self):
        self.assertApiError(self.emu.call("CreateTrainingJob", b"{not json"),
                            "SerializationException")
        self.assertApiError(self.emu.call("CreateTrainingJob", b"[1, 2]"),
                            "SerializationException")
        self.assertApiError(self.emu.call("DescribeTrainingJob", {}), "ValidationException",
                            contains="Value null at 'trainingJobName'")
        self.assertApiError(self.emu.call("DescribeTrainingJob", {"TrainingJobName": "a_b"}),
                            "ValidationException", contains="regular expression pattern")

    def test_unknown_operations_and_content_types(self):
        self.assertApiError(self.emu.call("DeleteTrainingJob", {}), "UnknownOperationException")
        self.assertApiError(self.emu.call("CreateTrainingJob", job_request("ct-1"),
                                          headers={"Content-Type": "application/json"}),
                            "UnknownOperationException", contains="Content-Type")
        self.assertApiError(self.emu.call("DescribeTrainingJob", {"TrainingJobName": "x"},
                                          path="/other"), "UnknownOperationException")

    def test_duplicate_names_are_resource_in_use(self):
        arn = self.create("dup-1", **HOLD)["TrainingJobArn"]
        for name in ("dup-1", "DUP-1"):
            with self.subTest(name=name):
                body = self.assertApiError(self.create_raw(job_request(name)), "ResourceInUse",
                                           contains="a training job with this name already "
                                                    "exists (%s)" % arn)
                self.assertEqual(body["__type"], "com.amazonaws.sagemaker#ResourceInUse")
                self.assertIn("Message", body)  # SageMaker's own errors use "Message"
        self.emu.ok("POST", "/jobs/dup-1/complete")
        self.assertApiError(self.create_raw(job_request("dup-1")), "ResourceInUse")
        self.assertEqual(self.describe("dup-1")["TrainingJobStatus"], "Completed")
        stats = self.emu.stats()
        self.assertEqual(stats["creates"], {"dup-1": 1})
        self.assertEqual(stats["create_calls"], {"dup-1": 3, "DUP-1": 1})
        self.assertEqual(stats["duplicate_creates"], {"dup-1": 2, "DUP-1": 1})


# ---------------------------------------------------------------------------
# Signatures
# ---------------------------------------------------------------------------

def amz_date(offset_seconds=0):
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() + offset_seconds))


class TestSignatures(EmulatorTest):
    DESCRIBE = {"TrainingJobName": "sig-job"}

    def setUp(self):
        super().setUp()
        self.create("sig-job", **HOLD)

    def describe_with(self, **kw):
        return self.emu.call("DescribeTrainingJob", self.DESCRIBE, **kw)

    def test_a_correct_signature_is_accepted(self):
        self.assertEqual(self.describe_with()[0], 200)
        self.assertEqual(self.describe_with(timestamp=amz_date(-600))[0], 200)  # 10 min skew

    def test_unsigned(self):
        self.assertApiError(self.describe_with(unsigned=True),
                            "MissingAuthenticationTokenException", 403,
                            contains="Missing Authentication Token")

    def test_wrong_signature(self):
        def flip(headers, data):
            auth = headers["Authorization"]
            last = auth[-1]
            headers["Authorization"] = auth[:-1] + ("0" if last != "0" else "1")
            return headers, data
        body = self.assertApiError(self.describe_with(mutate=flip), "InvalidSignatureException",
                                   403, contains="The request signature we calculated does not "
                                                 "match the signature you provided.")
        self.assertIn("The Canonical String for this request should have been", body["message"])
        self.assertIn("x-amz-target:SageMaker.DescribeTrainingJob\n", body["message"])

    def test_wrong_secret(self):
        self.assertApiError(self.describe_with(secret="not-the-secret"),
                            "InvalidSignatureException", 403)

    def test_unknown_access_key(self):
        self.assertApiError(self.describe_with(akid="AKIDSOMEBODYELSE0000"),
                            "UnrecognizedClientException", 403,
                            contains="The security token included in the request is invalid.")

    def test_stale_and_future_dates(self):
        self.assertApiError(self.describe_with(timestamp=amz_date(-16 * 60)),
                            "InvalidSignatureException", 403, contains="Signature expired: ")
        self.assertApiError(self.describe_with(timestamp=amz_date(+16 * 60)),
                            "InvalidSignatureException", 403, contains="Signature not yet current")

    def test_wrong_scope(self):
        self.assertApiError(self.describe_with(region="eu-west-1"), "InvalidSignatureException",
                            403, contains="Credential should be scoped to a valid region")
        self.assertApiError(self.describe_with(service="s3"), "InvalidSignatureException", 403,
                            contains="Credential should be scoped to correct service: 'sagemaker'")

        def other_day(headers, data):
            headers["X-Amz-Date"] = amz_date(-86400)
            return headers, data
        self.assertApiError(self.emu.call("DescribeTrainingJob", self.DESCRIBE,
                                          mutate=other_day), "InvalidSignatureException", 403)

    def test_tampered_body_and_headers(self):
        def body(headers, data):
            return headers, data.replace(b"sig-job", b"sig-jox")
        self.assertApiError(self.describe_with(mutate=body), "InvalidSignatureException", 403)

        def target(headers, data):
            headers["X-Amz-Target"] = "SageMaker.StopTrainingJob"
            return headers, data
        self.assertApiError(self.emu.call("DescribeTrainingJob", self.DESCRIBE, mutate=target),
                            "InvalidSignatureException", 403)
        self.assertEqual(self.describe("sig-job")["TrainingJobStatus"], "InProgress")

        def extra_unsigned_header(headers, data):
            headers["User-Agent"] = "changed after signing"
            return headers, data
        self.assertEqual(self.describe_with(mutate=extra_unsigned_header)[0], 200)

    def test_malformed_authorization(self):
        def no_signature(headers, data):
            headers["Authorization"] = headers["Authorization"].split(", Signature=")[0]
            return headers, data
        self.assertApiError(self.describe_with(mutate=no_signature),
                            "IncompleteSignatureException", 400,
                            contains="requires 'Signature' parameter")

        def other_algorithm(headers, data):
            headers["Authorization"] = headers["Authorization"].replace("HMAC-SHA256", "HMAC-SHA1")
            return headers, data
        self.assertApiError(self.describe_with(mutate=other_algorithm),
                            "IncompleteSignatureException", 400)

    def test_session_token_when_none_is_configured(self):
        self.assertApiError(self.describe_with(token=TOKEN), "UnrecognizedClientException", 403)

    def test_date_header_query_string_and_whitespace(self):
        """What botocore signs in less common ways still verifies."""
        self.assertEqual(self.describe_with(headers={"Date": "ignored"})[0], 200)
        self.assertEqual(self.describe_with(path="/?b=2&a=1&c=%20x")[0], 200)
        self.assertEqual(self.describe_with(headers={"X-Note": "  many   spaces  "})[0], 200)

    def test_rejections_are_counted(self):
        self.describe_with(unsigned=True)
        self.describe_with(secret="bad")
        outcomes = self.emu.stats()["outcomes"]["DescribeTrainingJob"]
        self.assertEqual(outcomes["MissingAuthenticationTokenException"], 1)
        self.assertEqual(outcomes["InvalidSignatureException"], 1)


class TestSessionToken(EmulatorTest):
    token = TOKEN

    def test_matching_token_is_accepted(self):
        self.create("tok-1", **HOLD)
        self.assertEqual(self.emu.client().describe_training_job(
            TrainingJobName="tok-1")["TrainingJobStatus"], "InProgress")

    @unittest.skipUnless(os.path.exists("/usr/bin/curl"), "needs the curl command")
    def test_curl_aws_sigv4_is_accepted(self):
        """A third signer (libcurl's, which the C client builds on) agrees."""
        def curl(op, body, secret=SECRET):
            out = subprocess.run(
                ["/usr/bin/curl", "-s", "--max-time", "10", "--aws-sigv4",
                 "aws:amz:%s:sagemaker" % REGION, "--user", "%s:%s" % (AKID, secret),
                 "-H", "X-Amz-Security-Token: " + TOKEN, "-H", "X-Amz-Target: SageMaker." + op,
                 "-H", "Content-Type: application/x-amz-json-1.1", "--data-binary", "@-",
                 self.emu.url + "/"], input=json.dumps(body).encode(), capture_output=True,
                timeout=20)
            return json.loads(out.stdout)
        self.assertIn("TrainingJobArn", curl("CreateTrainingJob", job_request("curl-1", **HOLD)))
        self.assertEqual(curl("DescribeTrainingJob", {"TrainingJobName": "curl-1"})
                         ["SecondaryStatus"], "Starting")
        self.assertEqual(error_type(curl("ListTrainingJobs", {}, secret="wrong")),
                         "InvalidSignatureException")

    def test_missing_or_wrong_token(self):
        self.assertApiError(self.emu.call("ListTrainingJobs", {}, token=None),
                            "UnrecognizedClientException", 403)
        self.assertApiError(self.emu.call("ListTrainingJobs", {}, token=TOKEN + "x"),
                            "UnrecognizedClientException", 403)

    def test_token_must_be_signed(self):
        def add_token_after_signing(headers, data):
            headers["X-Amz-Security-Token"] = TOKEN
            return headers, data
        self.assertApiError(self.emu.call("ListTrainingJobs", {}, token=None,
                                          mutate=add_token_after_signing),
                            "InvalidSignatureException", 403, contains="X-Amz-Security-Token")


class TestSeveralRegions(EmulatorTest):
    """--also-region: one endpoint plays two regions, each with its own
    training jobs, as two regions of SageMaker are."""
    extra_args = ("--also-region", "eu-west-1")

    def test_each_region_sees_its_own_training_jobs(self):
        east = self.create("east-job", **HOLD)
        status, _, west = self.emu.call("CreateTrainingJob", job_request("west-job", **HOLD),
                                        region="eu-west-1")
        self.assertEqual(status, 200, west)
        self.assertTrue(east["TrainingJobArn"].startswith("arn:aws:sagemaker:us-east-1:"))
        self.assertTrue(west["TrainingJobArn"].startswith("arn:aws:sagemaker:eu-west-1:"))
        for region, mine, other, arn in (("us-east-1", "east-job", "west-job", west["TrainingJobArn"]),
                                         ("eu-west-1", "west-job", "east-job", east["TrainingJobArn"])):
            status, _, listed = self.emu.call("ListTrainingJobs", {}, region=region)
            self.assertEqual([j["TrainingJobName"] for j in listed["TrainingJobSummaries"]], [mine])
            status, _, body = self.emu.call("DescribeTrainingJob", {"TrainingJobName": mine}, region=region)
            self.assertEqual(status, 200, body)
            self.assertApiError(self.emu.call("DescribeTrainingJob", {"TrainingJobName": other},
                                              region=region), "ValidationException")
            self.assertApiError(self.emu.call("StopTrainingJob", {"TrainingJobName": other},
                                              region=region), "ValidationException")
            self.assertApiError(self.emu.call("ListTags", {"ResourceArn": arn}, region=region),
                                "ValidationException")
        self.assertApiError(self.emu.call("ListTrainingJobs", {}, region="ap-south-1"),
                            "InvalidSignatureException", 403,
                            contains="Credential should be scoped to a valid region")


class TestNoClockCheck(EmulatorTest):
    extra_args = ("--no-clock-check",)

    def test_stale_date_is_accepted(self):
        status, _, _ = self.emu.call("ListTrainingJobs", {}, timestamp="20150830T123600Z")
        self.assertEqual(status, 200)


# ---------------------------------------------------------------------------
# Timelines and the control API
# ---------------------------------------------------------------------------

class TestTimelines(EmulatorTest):
    def test_durations_from_hyperparameters(self):
        self.create("time-1", emulator_starting_seconds=0.2, emulator_downloading_seconds=0.1,
                    emulator_training_seconds=0.4, emulator_uploading_seconds=0.1)
        seen = []
        deadline = time.time() + 5
        while time.time() < deadline:
            d = self.describe("time-1")
            if not seen or seen[-1] != d["SecondaryStatus"]:
                seen.append(d["SecondaryStatus"])
            if d["TrainingJobStatus"] == "Completed":
                break
            time.sleep(0.02)
        self.assertEqual(seen, ["Starting", "Downloading", "Training", "Uploading", "Completed"])
        t = {x["Status"]: x for x in d["SecondaryStatusTransitions"]}
        for phase, seconds in (("Starting", 0.2), ("Downloading", 0.1), ("Training", 0.4),
                               ("Uploading", 0.1)):
            self.assertAlmostEqual(t[phase]["EndTime"] - t[phase]["StartTime"], seconds,
                                   delta=0.003, msg=phase)
        self.assertAlmostEqual(d["TrainingStartTime"], t["Downloading"]["StartTime"], delta=0.002)
        self.assertAlmostEqual(d["TrainingEndTime"], t["Completed"]["StartTime"], delta=0.002)

    def test_failed_outcome_with_reason(self):
        self.create("fail-1", emulator_outcome="Failed",
                    emulator_failure_reason="AlgorithmError: boom", **FAST)
        self.assertTrue(wait_for(lambda: self.describe("fail-1")["TrainingJobStatus"] == "Failed"))
        d = self.describe("fail-1")
        self.assertEqual((d["SecondaryStatus"], d["FailureReason"]), ("Failed", "AlgorithmError: boom"))
        self.assertEqual([x["Status"] for x in d["SecondaryStatusTransitions"]],
                         ["Starting", "Downloading", "Training", "Failed"])
        self.assertIn("TrainingEndTime", d)

    def test_failure_in_an_earlier_phase(self):
        self.create("fail-2", emulator_outcome="Failed", emulator_fail_in="Downloading",
                    emulator_failure_reason="ClientError: no data", **FAST)
        self.assertTrue(wait_for(lambda: self.describe("fail-2")["TrainingJobStatus"] == "Failed"))
        self.assertEqual([x["Status"] for x in self.describe("fail-2")["SecondaryStatusTransitions"]],
                         ["Starting", "Downloading", "Failed"])

    def test_inf_holds_until_advanced(self):
        self.create("hold-1", emulator_starting_seconds=0, emulator_downloading_seconds=0,
                    emulator_training_seconds="inf", emulator_uploading_seconds="inf")
        time.sleep(0.2)
        self.assertEqual(self.describe("hold-1")["SecondaryStatus"], "Training")
        self.assertEqual(self.emu.ok("POST", "/jobs/hold-1/advance")["SecondaryStatus"], "Uploading")
        self.assertEqual(self.emu.ok("POST", "/jobs/hold-1/advance")["TrainingJobStatus"], "Completed")
        self.assertEqual(self.emu.control("POST", "/jobs/hold-1/advance")[0], 409)

    def test_control_complete_fail_hold_and_capacity_fail(self):
        for name in ("c-1", "c-2", "c-3", "c-4"):
            self.create(name, **HOLD)
        self.emu.ok("POST", "/jobs/c-1/complete")
        self.emu.ok("POST", "/jobs/c-2/fail", {"reason": "AlgorithmError: told to"})
        self.emu.ok("POST", "/jobs/c-3/capacity-fail")
        self.assertEqual(self.describe("c-1")["TrainingJobStatus"], "Completed")
        self.assertEqual(self.describe("c-2")["FailureReason"], "AlgorithmError: told to")
        self.assertTrue(self.describe("c-3")["FailureReason"].startswith("CapacityError"))
        self.emu.ok("POST", "/jobs/c-4/advance")
        self.emu.ok("POST", "/jobs/c-4/hold")    # Downloading, default 0.5 s, now held
        time.sleep(0.7)
        self.assertEqual(self.describe("c-4")["SecondaryStatus"], "Downloading")
        internal = self.emu.ok("GET", "/jobs/c-4")
        self.assertEqual(internal["_emulator"]["phase_seconds"], "inf")
        self.assertEqual(internal["_emulator"]["remaining_steps"],
                         ["Training", "Uploading", "Completed"])
        self.assertEqual(self.emu.control("POST", "/jobs/nobody/complete")[0], 404)
        self.assertEqual(self.emu.control("POST", "/jobs/c-4/explode")[0], 404)
        self.assertEqual(self.emu.control("POST", "/jobs/c-1/fail")[0], 409)
        self.assertEqual(self.emu.control("POST", "/jobs/c-4/fail", {"reason": 3})[0], 400)

    def test_runtime_defaults(self):
        self.assertEqual(self.emu.ok("GET", "/defaults")["training_seconds"], 2.0)
        self.emu.ok("POST", "/defaults", {"starting_seconds": 0, "downloading_seconds": 0,
                                          "training_seconds": "inf"})
        self.create("def-1")
        self.assertEqual(self.describe("def-1")["SecondaryStatus"], "Training")
        self.assertEqual(self.emu.control("POST", "/defaults", {"training": 1})[0], 400)
        self.emu.reset()
        self.assertEqual(self.emu.ok("GET", "/defaults")["training_seconds"], 2.0)

    def test_max_runtime_exceeded(self):
        req = job_request("maxrt-1", emulator_starting_seconds=0, emulator_downloading_seconds=0,
                          emulator_training_seconds=30, emulator_stopping_seconds=0.1)
        req["StoppingCondition"]["MaxRuntimeInSeconds"] = 1
        self.assertEqual(self.emu.call("CreateTrainingJob", req)[0], 200)
        self.assertTrue(wait_for(lambda: self.describe("maxrt-1")["TrainingJobStatus"] == "Stopped",
                                 timeout=4))
        d = self.describe("maxrt-1")
        self.assertEqual(d["SecondaryStatus"], "MaxRuntimeExceeded")
        self.assertAlmostEqual(d["SecondaryStatusTransitions"][-2]["StartTime"]
                               - d["TrainingStartTime"], 1.0, delta=0.003)


class TestCapacityAndLimits(EmulatorTest):
    def test_capacity_failure_per_instance_type(self):
        self.emu.ok("POST", "/capacity", {"ml.p5.48xlarge": "fail"})
        self.create("cap-p5", "ml.p5.48xlarge", 2, emulator_starting_seconds=0.2)
        self.create("cap-p4", "ml.p4d.24xlarge", 2, emulator_starting_seconds=0.2)
        time.sleep(0.1)
        self.assertEqual(self.describe("cap-p5")["SecondaryStatus"], "Starting")
        self.assertTrue(wait_for(lambda: self.describe("cap-p5")["TrainingJobStatus"] == "Failed"))
        d = self.describe("cap-p5")
        self.assertEqual(d["FailureReason"],
                         "CapacityError: Unable to provision requested ML compute capacity. "
                         "Please retry using a different ML instance type.")
        self.assertEqual([x["Status"] for x in d["SecondaryStatusTransitions"]],
                         ["Starting", "Failed"])
        self.assertNotIn("TrainingStartTime", d)
        self.assertAlmostEqual(d["TrainingEndTime"] - d["CreationTime"], 0.2, delta=0.003)
        self.assertEqual(self.describe("cap-p4")["TrainingJobStatus"], "InProgress")
        self.emu.ok("POST", "/capacity", {"ml.p5.48xlarge": None})
        self.assertEqual(self.emu.ok("GET", "/capacity"), {})
        self.assertEqual(self.emu.control("POST", "/capacity", {"p5": "fail"})[0], 400)

    def test_capacity_error_hyperparameter(self):
        self.create("cap-hp", emulator_capacity_error="true", emulator_starting_seconds=0)
        self.assertTrue(self.describe("cap-hp")["FailureReason"].startswith("CapacityError: "))

    def test_capacity_as_a_number_of_instances(self):
        self.emu.ok("POST", "/capacity", {"ml.p4d.24xlarge": 4})
        self.create("num-a", "ml.p4d.24xlarge", 3, **HOLD)
        self.create("num-b", "ml.p4d.24xlarge", 2, emulator_starting_seconds=0)
        self.assertTrue(self.describe("num-b")["FailureReason"].startswith("CapacityError"))
        self.create("num-c", "ml.p4d.24xlarge", 1, **HOLD)
        self.assertEqual(self.describe("num-c")["TrainingJobStatus"], "InProgress")
        self.emu.ok("POST", "/jobs/num-a/complete")
        self.create("num-d", "ml.p4d.24xlarge", 3, **HOLD)
        self.emu.ok("POST", "/jobs/num-d/advance")
        self.assertEqual(self.describe("num-d")["SecondaryStatus"], "Downloading")

    def test_resource_limit_exceeded(self):
        self.emu.ok("POST", "/limits", {"ml.g5.xlarge": 3})
        self.create("lim-a", "ml.g5.xlarge", 2, **HOLD)
        body = self.assertApiError(self.emu.call("CreateTrainingJob",
                                                 job_request("lim-b", "ml.g5.xlarge", 2)),
                                   "ResourceLimitExceeded")
        self.assertEqual(body["Message"][:120],
                         "The account-level service limit 'ml.g5.xlarge for training job usage' "
                         "is 3 Instances, with current utilization of 2 Instances and a request"[:120])
        self.create("lim-c", "ml.g5.xlarge", 1, **HOLD)
        self.emu.call("StopTrainingJob", {"TrainingJobName": "lim-a"})   # still counts
        self.assertApiError(self.emu.call("CreateTrainingJob", job_request("lim-d", "ml.g5.xlarge")),
                            "ResourceLimitExceeded")
        self.emu.ok("POST", "/jobs/lim-a/advance")                        # Stopped
        self.create("lim-e", "ml.g5.xlarge", 2, **HOLD)
        self.assertEqual(self.emu.stats()["creates"], {"lim-a": 1, "lim-c": 1, "lim-e": 1})

    def test_a_role_the_caller_may_not_pass(self):
        denied = job_request("role-a")
        denied["RoleArn"] = "arn:aws:iam::123456789012:role/not-ours"
        self.assertEqual(self.emu.ok("POST", "/roles", {denied["RoleArn"]: "deny"}),
                         {denied["RoleArn"]: "deny"})
        body = self.assertApiError(self.emu.call("CreateTrainingJob", denied), "AccessDeniedException")
        self.assertIn("iam:PassRole on resource: " + denied["RoleArn"], body["Message"])
        self.create("role-b")                       # other roles still pass
        self.assertEqual(self.emu.stats()["creates"], {"role-b": 1})
        self.emu.ok("POST", "/roles", {denied["RoleArn"]: None})
        self.emu.call("CreateTrainingJob", denied)
        self.assertEqual(self.emu.stats()["creates"], {"role-a": 1, "role-b": 1})
        self.assertEqual(self.emu.control("POST", "/roles", {"x": "allow"})[0], 400)


# ---------------------------------------------------------------------------
# Fault injection
# ---------------------------------------------------------------------------

DROPPED = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


class TestFaults(EmulatorTest):
    def faults(self, **config):
        return self.emu.ok("POST", "/faults", config)

    def test_throttling(self):
        self.faults(throttle_rate=1.0)
        body = self.assertApiError(self.emu.call("CreateTrainingJob", job_request("thr-1")),
                                   "ThrottlingException", 400, contains="Rate exceeded")
        self.assertEqual(body["__type"], "com.amazon.coral.availability#ThrottlingException")
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            self.emu.client().list_training_jobs()
        self.assertEqual(cm.exception.response["Error"]["Code"], "ThrottlingException")
        self.faults()
        self.assertApiError(self.emu.call("DescribeTrainingJob", {"TrainingJobName": "thr-1"}),
                            "ValidationException", contains="not found")
        self.assertEqual(self.emu.stats()["faults_injected"], {"throttle": 2})

    def test_5xx(self):
        self.faults(error_5xx_rate=1.0, seed=3)
        seen = set()
        for i in range(30):
            status, headers, body = self.emu.call("ListTrainingJobs", {})
            seen.add((status, error_type(body)))
        self.assertEqual(seen, {(500, "InternalFailure"), (503, "ServiceUnavailable")})

    def test_slow(self):
        self.faults(slow_rate=1.0, slow_seconds=0.4)
        started = time.time()
        self.assertEqual(self.emu.call("ListTrainingJobs", {})[0], 200)
        self.assertGreaterEqual(time.time() - started, 0.4)
        self.assertEqual(self.emu.stats()["faults_injected"], {"slow": 1})

    def test_drop_before_acting(self):
        self.faults(drop_rate=1.0, drop_mode="before")
        with self.assertRaises(DROPPED):
            self.emu.call("CreateTrainingJob", job_request("drop-1"))
        self.faults()
        self.assertApiError(self.emu.call("DescribeTrainingJob", {"TrainingJobName": "drop-1"}),
                            "ValidationException")
        stats = self.emu.stats()
        self.assertEqual(stats["creates"], {})
        self.assertEqual(stats["outcomes"]["CreateTrainingJob"], {"dropped_before": 1})

    def test_drop_after_create_creates_but_answers_nothing(self):
        self.faults(drop_rate=1.0, drop_mode="after")
        before = time.time()
        with self.assertRaises(DROPPED):
            self.emu.call("CreateTrainingJob", job_request("drop-2", **HOLD))
        self.faults()
        self.assertEqual(self.describe("drop-2")["TrainingJobStatus"], "InProgress")
        # The exactly-once retry: a second create says "already there".
        self.assertApiError(self.emu.call("CreateTrainingJob", job_request("drop-2")),
                            "ResourceInUse")
        stats = self.emu.stats()
        self.assertEqual(stats["creates"], {"drop-2": 1})
        self.assertGreaterEqual(stats["create_times"]["drop-2"], before)
        self.assertEqual(stats["outcomes"]["CreateTrainingJob"],
                         {"dropped_after": 1, "ResourceInUse": 1})
        self.assertEqual(stats["faults_injected"], {"drop_after": 1})

    def test_5xx_after_create_creates(self):
        self.faults(error_5xx_rate=1.0, error_5xx_mode="after", max_faults=1)
        status = self.emu.call("CreateTrainingJob", job_request("late-5xx", **HOLD))[0]
        self.assertIn(status, (500, 503))
        self.assertEqual(self.describe("late-5xx")["TrainingJobStatus"], "InProgress")
        self.assertApiError(self.emu.call("CreateTrainingJob", job_request("late-5xx")),
                            "ResourceInUse")
        stats = self.emu.stats()
        self.assertEqual(stats["creates"], {"late-5xx": 1})
        self.assertEqual(sum(stats["faults_injected"].values()), 1)
        self.assertIn(list(stats["faults_injected"])[0],
                      ("InternalFailure_after", "ServiceUnavailable_after"))

    def test_5xx_before_create_creates_nothing(self):
        self.faults(error_5xx_rate=1.0, max_faults=1)
        status = self.emu.call("CreateTrainingJob", job_request("early-5xx"))[0]
        self.assertIn(status, (500, 503))
        self.assertApiError(self.emu.call("DescribeTrainingJob", {"TrainingJobName": "early-5xx"}),
                            "ValidationException")
        self.assertEqual(self.emu.stats()["creates"], {})

    def test_drop_after_stop_stops(self):
        self.create("drop-3", **HOLD)
        self.faults(operations={"StopTrainingJob": {"drop_rate": 1.0, "drop_mode": "after"}})
        with self.assertRaises(DROPPED):
            self.emu.call("StopTrainingJob", {"TrainingJobName": "drop-3"})
        self.assertEqual(self.describe("drop-3")["TrainingJobStatus"], "Stopping")

    def test_drop_with_reset(self):
        self.faults(drop_rate=1.0, drop_style="reset")
        with self.assertRaises((ConnectionResetError, http.client.RemoteDisconnected)):
            self.emu.call("ListTrainingJobs", {})

    def test_partial_rates_are_statistically_right(self):
        self.create("stat-1", **HOLD)
        n = 600
        self.faults(throttle_rate=0.2, error_5xx_rate=0.1, drop_rate=0.1, seed=11)
        counts = {"ok": 0, "ThrottlingException": 0, "5xx": 0, "dropped": 0}
        conn = None
        for _ in range(n):
            conn = conn or http.client.HTTPConnection("127.0.0.1", self.emu.port, timeout=10)
            try:
                status, _, body = self.emu.call("DescribeTrainingJob",
                                                {"TrainingJobName": "stat-1"}, conn=conn)
            except DROPPED:
                counts["dropped"] += 1
                conn.close()
                conn = None
                continue
            if status == 200:
                counts["ok"] += 1
            elif status >= 500:
                counts["5xx"] += 1
            else:
                counts[error_type(body)] += 1
        if conn:
            conn.close()
        for key, p in (("ThrottlingException", 0.2), ("5xx", 0.1), ("dropped", 0.1), ("ok", 0.6)):
            sigma = (n * p * (1 - p)) ** 0.5
            with self.subTest(outcome=key):
                self.assertLess(abs(counts[key] - n * p), 5 * sigma, counts)
        stats = self.emu.stats()
        injected = stats["faults_injected"]
        self.assertEqual(injected["throttle"], counts["ThrottlingException"])
        self.assertEqual(injected["InternalFailure"] + injected["ServiceUnavailable"], counts["5xx"])
        self.assertEqual(injected["drop_before"] + injected["drop_after"], counts["dropped"])
        self.assertGreater(injected["drop_before"], 0)
        self.assertGreater(injected["drop_after"], 0)
        outcomes = stats["outcomes"]["DescribeTrainingJob"]
        self.assertEqual(outcomes["ok"], counts["ok"])

    def test_per_operation_rates_and_max_faults(self):
        self.faults(operations={"CreateTrainingJob": {"throttle_rate": 1.0, "max_faults": 2}})
        self.assertEqual(self.emu.call("ListTrainingJobs", {})[0], 200)
        for _ in range(2):
            self.assertApiError(self.emu.call("CreateTrainingJob", job_request("per-op")),
                                "ThrottlingException")
        self.create("per-op", **HOLD)
        config = self.emu.ok("GET", "/faults")
        self.assertEqual(config["operations"]["CreateTrainingJob"]["throttle_rate"], 1.0)
        self.assertEqual(config["injected"], {"throttle": 2})

    def test_faults_never_touch_the_control_api(self):
        self.faults(throttle_rate=0.5, drop_rate=0.5, slow_rate=1.0, slow_seconds=5)
        started = time.time()
        for _ in range(20):
            self.emu.stats()
        self.assertLess(time.time() - started, 2)

    def test_bad_fault_configurations(self):
        for config in ({"throttle_rate": 2}, {"throttle_rate": 0.6, "drop_rate": 0.6},
                       {"bogus": 1}, {"drop_mode": "sideways"}, {"error_5xx_mode": "random"},
                       {"operations": {"DeleteTrainingJob": {}}}, {"max_faults": -1}):
            with self.subTest(config=config):
                self.assertEqual(self.emu.control("POST", "/faults", config)[0], 400)


# ---------------------------------------------------------------------------
# Counters, reset, concurrency and load
# ---------------------------------------------------------------------------

def run_threads(n, target):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except Exception as e:  # surfaced in the test, not lost in a thread
            errors.append(repr(e))
    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return errors


class TestStatsAndLoad(EmulatorTest):
    def test_counters_and_reset(self):
        before = time.time()
        self.create("cnt-1", **HOLD)
        self.create("cnt-2", **HOLD)
        after = time.time()
        self.emu.call("CreateTrainingJob", job_request("cnt-1"))
        self.describe("cnt-1")
        self.emu.call("DescribeTrainingJob", {"TrainingJobName": "cnt-9"})
        self.emu.call("StopTrainingJob", {"TrainingJobName": "cnt-2"})
        self.emu.call("ListTrainingJobs", {})
        s = self.emu.stats()
        self.assertEqual(s["calls"], {"CreateTrainingJob": 3, "DescribeTrainingJob": 2,
                                      "StopTrainingJob": 1, "ListTrainingJobs": 1})
        self.assertEqual(s["outcomes"]["CreateTrainingJob"], {"ok": 2, "ResourceInUse": 1})
        self.assertEqual(s["outcomes"]["DescribeTrainingJob"], {"ok": 1, "ValidationException": 1})
        self.assertEqual(s["totals"], {"ok": 5, "ResourceInUse": 1, "ValidationException": 1})
        self.assertEqual(s["creates"], {"cnt-1": 1, "cnt-2": 1})
        for name in ("cnt-1", "cnt-2"):
            self.assertTrue(before <= s["create_times"][name] <= after)
            self.assertTrue(before <= s["create_arrival_times"][name] <= s["create_times"][name])
        self.assertEqual(set(s["create_arrival_times"]), {"cnt-1", "cnt-2"})
        self.assertLess(s["create_times"]["cnt-1"], s["create_times"]["cnt-2"])
        self.assertEqual(s["jobs"]["cnt-2"]["status"], "Stopping")
        self.assertEqual(s["job_counts"], {"InProgress": 1, "Stopping": 1})
        self.assertEqual((s["requests"], s["in_flight"]), (7, 0))
        self.assertNotIn("jobs", self.emu.ok("GET", "/stats?jobs=0"))
        self.emu.ok("POST", "/faults", {"throttle_rate": 0.5})
        self.emu.ok("POST", "/capacity", {"ml.p5.48xlarge": "fail"})
        self.emu.ok("POST", "/limits", {"ml.p5.48xlarge": 8})
        self.emu.ok("POST", "/roles", {ROLE: "deny"})
        self.emu.reset()
        self.assertEqual((self.emu.ok("GET", "/capacity"), self.emu.ok("GET", "/limits"),
                          self.emu.ok("GET", "/roles")), ({}, {}, {}))
        s = self.emu.stats()
        self.assertEqual((s["calls"], s["creates"], s["jobs"], s["requests"], s["max_in_flight"]),
                         ({}, {}, {}, 0, 0))
        self.assertEqual(self.emu.ok("GET", "/faults")["throttle_rate"], 0.0)
        self.create("cnt-1", **HOLD)  # the name is free again

    def test_reset_while_requests_are_in_flight(self):
        self.emu.ok("POST", "/faults", {"slow_rate": 1.0, "slow_seconds": 0.4})
        worker = threading.Thread(target=self.emu.call, args=("ListTrainingJobs", {}))
        worker.start()
        time.sleep(0.15)
        self.emu.reset()
        self.assertEqual(self.emu.stats()["in_flight"], 1)
        worker.join(5)
        s = self.emu.stats()
        self.assertEqual((s["in_flight"], s["calls"]), (0, {"ListTrainingJobs": 1}))

    def test_unknown_control_endpoints(self):
        self.assertEqual(self.emu.control("GET", "/nothing")[0], 404)
        self.assertEqual(self.emu.control("GET", "/reset")[0], 405)
        for path in ("/faults", "/capacity", "/limits", "/defaults", "/roles"):
            self.assertEqual(self.emu.control("PUT", path, {})[0], 405, path)

    def test_max_in_flight(self):
        self.emu.ok("POST", "/faults", {"slow_rate": 1.0, "slow_seconds": 0.5})
        errors = run_threads(12, lambda i: self.emu.call("ListTrainingJobs", {}))
        self.assertEqual(errors, [])
        self.assertGreaterEqual(self.emu.stats()["max_in_flight"], 10)

    def test_fifty_concurrent_clients(self):
        def client(i):
            conn = http.client.HTTPConnection("127.0.0.1", self.emu.port, timeout=30)
            for j in range(10):
                name = "conc-%02d-%02d" % (i, j)
                status, _, body = self.emu.call("CreateTrainingJob", job_request(name, **FAST),
                                                conn=conn)
                assert status == 200, body
                status, _, body = self.emu.call("DescribeTrainingJob",
                                                {"TrainingJobName": name}, conn=conn)
                assert status == 200 and body["TrainingJobName"] == name, body
            conn.close()
        self.assertEqual(run_threads(50, client), [])
        s = self.emu.stats()
        self.assertEqual(len(s["creates"]), 500)
        self.assertEqual(set(s["creates"].values()), {1})
        self.assertEqual(s["outcomes"]["DescribeTrainingJob"], {"ok": 500})
        self.assertGreater(s["max_in_flight"], 1)

    def test_racing_creates_of_one_name(self):
        barrier = threading.Barrier(50)
        results = []

        def client(i):
            method, path, headers, data = self.emu.signed("CreateTrainingJob",
                                                          job_request("race-1", **HOLD))
            conn = http.client.HTTPConnection("127.0.0.1", self.emu.port, timeout=30)
            conn.connect()
            barrier.wait()
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            results.append((resp.status, error_type(json.loads(resp.read()))
                            if resp.status != 200 else "ok"))
            conn.close()
        self.assertEqual(run_threads(50, client), [])
        self.assertEqual(sorted(results).count((200, "ok")), 1)
        self.assertEqual(sorted(results).count((400, "ResourceInUse")), 49)
        self.assertEqual(self.emu.stats()["creates"], {"race-1": 1})

    def test_throughput_and_thousands_of_jobs(self):
        n_jobs, threads = 2000, 20
        started = time.time()

        def creator(i):
            conn = http.client.HTTPConnection("127.0.0.1", self.emu.port, timeout=30)
            for j in range(i, n_jobs, threads):
                status, _, body = self.emu.call("CreateTrainingJob",
                                                job_request("bulk-%05d" % j), conn=conn)
                assert status == 200, body
            conn.close()
        self.assertEqual(run_threads(threads, creator), [])
        elapsed = time.time() - started
        rate = n_jobs / elapsed
        print("\n  %d creates from %d threads in %.2f s: %.0f requests/s"
              % (n_jobs, threads, elapsed, rate), file=sys.stderr)
        self.assertGreater(rate, 150)
        names, token, pages = set(), None, 0
        started = time.time()
        while True:
            body = {"MaxResults": 100, "NameContains": "bulk"}
            if token:
                body["NextToken"] = token
            status, _, out = self.emu.call("ListTrainingJobs", body)
            self.assertEqual(status, 200, out)
            names.update(s["TrainingJobName"] for s in out["TrainingJobSummaries"])
            pages += 1
            token = out.get("NextToken")
            if not token:
                break
        self.assertEqual((len(names), pages), (n_jobs, n_jobs // 100))
        s = self.emu.stats()
        self.assertEqual(len(s["jobs"]), n_jobs)
        self.assertLess(time.time() - started, 10)


def main():
    argv = sys.argv[1:]
    loader = unittest.TestLoader()
    if "-k" in argv:
        loader.testNamePatterns = ["*%s*" % argv[argv.index("-k") + 1]]
    suite = loader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stderr).run(suite)
    for proc in _children:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    sys.stderr.flush()
    # Sub-test failures count one each; a test with failing sub-tests is not "passed".
    failed_tests = {id(getattr(t, "test_case", t)) for t, _ in result.failures + result.errors}
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - len(failed_tests) - skipped - len(result.expectedFailures)
    if skipped:
        print("%d skipped" % skipped)
    print("%d passed, %d failed" % (max(passed, 0), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
