#!/usr/bin/python3
"""A local Amazon SageMaker training-job emulator for fairshare's tests and demo.

fairshare's background worker talks to SageMaker over the JSON 1.1 protocol
with SigV4-signed requests.  Tests and the demo cannot reach AWS, so this
single-file server (Python standard library only) speaks the same wire
protocol on 127.0.0.1:

* CreateTrainingJob, DescribeTrainingJob, StopTrainingJob, ListTrainingJobs,
  ListTags (the Tags of the create request, which fairshare reads to prove a
  training job is its own before adopting it),
  with SageMaker's validation rules, error names, status codes and messages;
* an independent SigV4 verifier (``verify_sigv4``) that checks every API
  request against the configured credentials -- it does not use botocore, so
  it is a second opinion on the project's own C signer;
* training jobs that move through InProgress (Starting, Downloading,
  Training, Uploading) to Completed or Failed on a timeline the caller sets
  with hyperparameters, CLI defaults or control endpoints; StopTrainingJob
  goes through Stopping to Stopped; capacity failures per instance type;
  per-type account limits (ResourceLimitExceeded);
* one region, or several at one endpoint (``--also-region``): a request
  sees only the training jobs of the region it is signed for;
* fault injection (throttling, 5xx, slow answers, dropped connections before
  or *after* acting) at configurable rates;
* counters for tests and benchmarks under ``GET /_emulator/stats``.

Control endpoints live under ``/_emulator/`` and are neither signed nor
subject to faults.  README.md next to this file documents the CLI, the
control API and the hyperparameters.

Run:  /usr/bin/python3 sagemaker_emulator.py --port 0 --port-file /tmp/port \
          --access-key-id AKID --secret-access-key SECRET
"""

import argparse
import base64
import calendar
import email.utils
import hashlib
import hmac
import json
import math
import os
import random
import re
import signal
import socket
import struct
import sys
import threading
import time
import traceback
import urllib.parse
import uuid
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ACCOUNT_ID = "123456789012"
SERVICE = "sagemaker"
TARGET_PREFIX = "SageMaker."
OPERATIONS = ("CreateTrainingJob", "DescribeTrainingJob", "StopTrainingJob",
              "ListTrainingJobs", "ListTags")
CONTROL_PREFIX = "/_emulator"
MAX_BODY_BYTES = 8 * 1024 * 1024
INF = float("inf")

# ---------------------------------------------------------------------------
# Errors: the names, HTTP statuses, __type prefixes and message keys that the
# real service uses.  SageMaker's own modelled exceptions carry "Message";
# the framework's carry "message".
# ---------------------------------------------------------------------------

ERRORS = {
    # name: (HTTP status, __type prefix, message key)
    "ValidationException": (400, "com.amazonaws.sagemaker#", "message"),
    "ResourceInUse": (400, "com.amazonaws.sagemaker#", "Message"),
    "ResourceNotFound": (400, "com.amazonaws.sagemaker#", "Message"),
    "ResourceLimitExceeded": (400, "com.amazonaws.sagemaker#", "Message"),
    "ThrottlingException": (400, "com.amazon.coral.availability#", "message"),
    "SerializationException": (400, "com.amazon.coral.service#", "Message"),
    "UnknownOperationException": (400, "com.amazon.coral.service#", "message"),
    "InternalFailure": (500, "com.amazon.coral.service#", "message"),
    "ServiceUnavailable": (503, "com.amazon.coral.service#", "message"),
    "InvalidSignatureException": (403, "", "message"),
    "IncompleteSignatureException": (400, "", "message"),
    "UnrecognizedClientException": (403, "", "message"),
    "AccessDeniedException": (400, "", "Message"),
    "MissingAuthenticationTokenException": (403, "", "message"),
}


class ApiError(Exception):
    """An error answered to an API client as SageMaker would answer it."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = ERRORS[code][0]

    def body(self):
        _, prefix, key = ERRORS[self.code]
        return {"__type": prefix + self.code, key: self.message}


def validation_error(problems):
    """ValidationException in the service's "N validation errors" style."""
    if isinstance(problems, str):
        problems = [problems]
    n = len(problems)
    return ApiError("ValidationException", "%d validation error%s detected: %s"
                    % (n, "" if n == 1 else "s", "; ".join(problems)))


# ---------------------------------------------------------------------------
# SigV4 verification (hashlib and hmac only)
# ---------------------------------------------------------------------------

SIGV4_ALGORITHM = "AWS4-HMAC-SHA256"
MAX_CLOCK_SKEW_SECONDS = 15 * 60
AMZ_DATE_FORMAT = "%Y%m%dT%H%M%SZ"
INVALID_TOKEN = "The security token included in the request is invalid."


def _sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def _hmac_sha256(key, msg):
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def _canonical_uri(raw_path):
    """The path as received, dot segments removed, URI-encoded once more
    (AWS encodes non-S3 paths twice; the client did the first pass)."""
    segments = []
    for segment in raw_path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if segments:
                segments.pop()
            continue
        segments.append(segment)
    path = "/" + "/".join(segments)
    if raw_path.endswith("/") and segments:
        path += "/"
    return urllib.parse.quote(path, safe="/~")


def _canonical_query(raw_query):
    """Each name and value decoded then strictly encoded, sorted."""
    pairs = []
    for part in raw_query.split("&") if raw_query else []:
        if not part:
            continue
        name, _, value = part.partition("=")
        pairs.append((urllib.parse.quote(urllib.parse.unquote(name), safe="-_.~"),
                      urllib.parse.quote(urllib.parse.unquote(value), safe="-_.~")))
    pairs.sort()
    return "&".join("%s=%s" % pair for pair in pairs)


def _format_amz(epoch):
    return time.strftime(AMZ_DATE_FORMAT, time.gmtime(epoch))


def verify_sigv4(method, raw_target, headers, body, access_key_id,
                 secret_access_key, session_token, region, service=SERVICE,
                 now=None, check_clock=True):
    """Check one request's AWS Signature Version 4 (Authorization header form).

    method, raw_target (path and query exactly as on the request line),
    headers (a list of (name, value) pairs as received) and body (bytes)
    describe the request.  The canonical request is rebuilt from what
    arrived, the credential scope and clock are checked, the signature is
    recomputed with the configured secret and compared in constant time.
    region is the region requests must be signed for, or a collection of
    them (an emulator that plays several regions at one endpoint).
    Returns None when the request is authentic; raises ApiError with the
    error AWS would answer otherwise.
    """
    by_name = defaultdict(list)
    for name, value in headers:
        by_name[name.lower()].append(value)

    def first(name):
        values = by_name.get(name)
        return values[0] if values else None

    authorization = first("authorization")
    if authorization is None:
        raise ApiError("MissingAuthenticationTokenException",
                       "Missing Authentication Token")
    algorithm, _, rest = authorization.strip().partition(" ")
    if algorithm != SIGV4_ALGORITHM:
        raise ApiError("IncompleteSignatureException",
                       "Unsupported AWS 'algorithm': '%s'" % algorithm)
    fields = {}
    for item in rest.split(","):
        key, sep, value = item.strip().partition("=")
        if sep:
            fields[key] = value
    missing = [k for k in ("Credential", "SignedHeaders", "Signature") if k not in fields]
    if missing:
        raise ApiError("IncompleteSignatureException", " ".join(
            "Authorization header requires '%s' parameter." % k for k in missing)
            + " Authorization=" + authorization)

    credential = fields["Credential"].split("/")
    if len(credential) != 5:
        raise ApiError("IncompleteSignatureException",
                       "Credential must have exactly 5 slash-delimited elements, "
                       "e.g. keyid/date/region/service/term, got '%s'" % fields["Credential"])
    key_id, scope_date, scope_region, scope_service, terminator = credential
    if key_id != access_key_id:
        raise ApiError("UnrecognizedClientException", INVALID_TOKEN)

    # The request's time: X-Amz-Date, else Date (RFC 1123), as botocore does.
    amz_date = first("x-amz-date")
    date_source = "x-amz-date"
    if amz_date is None and first("date") is not None:
        date_source = "date"
        try:
            amz_date = _format_amz(email.utils.parsedate_to_datetime(first("date")).timestamp())
        except (TypeError, ValueError):
            raise ApiError("IncompleteSignatureException",
                           "Date must be in RFC 1123 format. Got '%s'" % first("date"))
    if amz_date is None:
        raise ApiError("IncompleteSignatureException",
                       "Authorization header requires existence of either a "
                       "'X-Amz-Date' or a 'Date' header. Authorization=" + authorization)
    try:
        request_time = float(calendar.timegm(time.strptime(amz_date, AMZ_DATE_FORMAT)))
    except ValueError:
        raise ApiError("IncompleteSignatureException",
                       "Date must be in ISO-8601 'basic format'. Got '%s'. See "
                       "http://en.wikipedia.org/wiki/ISO_8601" % amz_date)

    problems = []
    if scope_date != amz_date[:8]:
        problems.append("Date in Credential scope does not match YYYYMMDD from "
                        "ISO-8601 version of date from HTTP: '%s' != '%s', from '%s'."
                        % (scope_date, amz_date[:8], date_source))
    if scope_region not in ((region,) if isinstance(region, str) else tuple(region)):
        problems.append("Credential should be scoped to a valid region, not '%s'."
                        % scope_region)
    if scope_service != service:
        problems.append("Credential should be scoped to correct service: '%s'."
                        % service)
    if terminator != "aws4_request":
        problems.append("Credential should be scoped with a valid terminator: "
                        "'aws4_request', not '%s'." % terminator)
    if problems:
        raise ApiError("InvalidSignatureException", " ".join(problems))

    if check_clock:
        now = time.time() if now is None else now
        if request_time < now - MAX_CLOCK_SKEW_SECONDS:
            raise ApiError("InvalidSignatureException",
                           "Signature expired: %s is now earlier than %s (%s - 15 min.)"
                           % (amz_date, _format_amz(now - MAX_CLOCK_SKEW_SECONDS),
                              _format_amz(now)))
        if request_time > now + MAX_CLOCK_SKEW_SECONDS:
            raise ApiError("InvalidSignatureException",
                           "Signature not yet current: %s is still later than %s (%s + 15 min.)"
                           % (amz_date, _format_amz(now + MAX_CLOCK_SKEW_SECONDS),
                              _format_amz(now)))

    signed_headers = fields["SignedHeaders"].split(";")
    if "host" not in signed_headers:
        raise ApiError("InvalidSignatureException",
                       "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.")

    # Session tokens: required (and signed) when configured, refused otherwise.
    token = first("x-amz-security-token")
    if session_token is not None:
        if token is None or not hmac.compare_digest(token.encode(), session_token.encode()):
            raise ApiError("UnrecognizedClientException", INVALID_TOKEN)
        if "x-amz-security-token" not in signed_headers:
            raise ApiError("InvalidSignatureException",
                           "'X-Amz-Security-Token' must be a 'SignedHeader' in the AWS Authorization.")
    elif token is not None:
        raise ApiError("UnrecognizedClientException", INVALID_TOKEN)

    payload_hash = _sha256_hex(body)
    declared_hash = first("x-amz-content-sha256")
    if declared_hash is not None and declared_hash != payload_hash:
        raise ApiError("InvalidSignatureException",
                       "The provided 'x-amz-content-sha256' header does not match "
                       "what was computed.")

    path, _, query = raw_target.partition("?")
    canonical_headers = "".join(
        "%s:%s\n" % (name, ",".join(" ".join(v.split()) for v in by_name.get(name, [])))
        for name in signed_headers)
    canonical_request = "\n".join([
        method, _canonical_uri(path), _canonical_query(query), canonical_headers,
        fields["SignedHeaders"], payload_hash])
    scope = "/".join(credential[1:])
    string_to_sign = "\n".join([SIGV4_ALGORITHM, amz_date, scope,
                                _sha256_hex(canonical_request.encode("utf-8"))])
    key = _hmac_sha256(("AWS4" + secret_access_key).encode("utf-8"), scope_date)
    for part in (scope_region, scope_service, "aws4_request"):
        key = _hmac_sha256(key, part)
    expected = hmac.new(key, string_to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), fields["Signature"].encode()):
        raise ApiError("InvalidSignatureException",
                       "The request signature we calculated does not match the signature "
                       "you provided. Check your AWS Secret Access Key and signing method. "
                       "Consult the service documentation for details.\n\n"
                       "The Canonical String for this request should have been\n'%s'\n\n"
                       "The String-to-Sign should have been\n'%s'\n"
                       % (canonical_request, string_to_sign))
    return None


# ---------------------------------------------------------------------------
# Request validation (CreateTrainingJob), in SageMaker's words
# ---------------------------------------------------------------------------

NAME_RE = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}")
NAME_PATTERN = "^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}"
ROLE_ARN_RE = re.compile(r"arn:aws[a-z\-]*:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+")
ROLE_ARN_PATTERN = r"^arn:aws[a-z\-]*:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+$"
S3_URI_RE = re.compile(r"(https|s3)://([^/]+)/?(.*)")
S3_URI_PATTERN = "^(https|s3)://([^/]+)/?(.*)$"
INSTANCE_TYPE_RE = re.compile(r"ml\.[a-z0-9]+\.[a-z0-9]+")
NAME_CONTAINS_RE = re.compile(r"[a-zA-Z0-9\-]+")
INPUT_MODES = ("Pipe", "File", "FastFile")
JOB_STATUSES = ("InProgress", "Completed", "Failed", "Stopping", "Stopped")
SORT_BY = ("Name", "CreationTime", "Status")
SORT_ORDERS = ("Ascending", "Descending")
PHASES = ("Starting", "Downloading", "Training", "Uploading")
CAPACITY_ERROR = ("CapacityError: Unable to provision requested ML compute capacity. "
                  "Please retry using a different ML instance type.")
DEFAULT_FAILURE_REASON = "AlgorithmError: the emulator was told to fail this job"

# Hyperparameters the emulator reads (all values are strings, as in SageMaker).
HP_PREFIX = "emulator_"
HP_SECONDS = {"emulator_%s_seconds" % p.lower(): p for p in PHASES + ("Stopping",)}
HP_OUTCOME = "emulator_outcome"
HP_FAILURE_REASON = "emulator_failure_reason"
HP_FAIL_IN = "emulator_fail_in"
HP_CAPACITY_ERROR = "emulator_capacity_error"
HP_KNOWN = set(HP_SECONDS) | {HP_OUTCOME, HP_FAILURE_REASON, HP_FAIL_IN, HP_CAPACITY_ERROR}


def _show(value):
    """How AWS quotes a value in a validation message."""
    if value is None:
        return "null"
    text = value if isinstance(value, str) else json.dumps(value)
    return "'%s'" % (text if len(text) <= 256 else text[:256] + "...")


def _camel(member):
    return member[0].lower() + member[1:]


class Checker:
    """Collects "Value X at 'path' failed to satisfy constraint" problems."""

    def __init__(self):
        self.problems = []

    def fail(self, value, path, constraint):
        self.problems.append("Value %s at '%s' failed to satisfy constraint: %s"
                             % (_show(value), path, constraint))
        return None

    def struct(self, obj, member, path, required=True):
        value = obj.get(member) if isinstance(obj, dict) else None
        if value is None:
            return self.fail(None, path, "Member must not be null") if required else None
        if not isinstance(value, dict):
            return self.fail(value, path, "Member must be a structure")
        return value

    def string(self, obj, member, path, required=True, min_len=None, max_len=None,
               regex=None, pattern=None, enum=None):
        value = obj.get(member) if isinstance(obj, dict) else None
        if value is None:
            return self.fail(None, path, "Member must not be null") if required else None
        if not isinstance(value, str):
            return self.fail(value, path, "Member must be a string")
        if min_len is not None and len(value) < min_len:
            return self.fail(value, path, "Member must have length greater than or equal to %d" % min_len)
        if max_len is not None and len(value) > max_len:
            return self.fail(value, path, "Member must have length less than or equal to %d" % max_len)
        if regex is not None and not regex.fullmatch(value):
            return self.fail(value, path, "Member must satisfy regular expression pattern: %s" % pattern)
        if enum is not None and value not in enum:
            return self.fail(value, path, "Member must satisfy enum value set: [%s]" % ", ".join(enum))
        return value

    def integer(self, obj, member, path, required=True, minimum=None):
        value = obj.get(member) if isinstance(obj, dict) else None
        if value is None:
            return self.fail(None, path, "Member must not be null") if required else None
        if isinstance(value, bool) or not isinstance(value, int):
            return self.fail(value, path, "Member must be an integer")
        if minimum is not None and value < minimum:
            return self.fail(value, path, "Member must have value greater than or equal to %d" % minimum)
        return value


def validate_create_request(req):
    """Check a CreateTrainingJob body.  Returns (name, {instance type: count});
    raises ApiError(ValidationException) listing every problem found."""
    if not isinstance(req, dict):
        raise ApiError("SerializationException", "Start of structure or map found where not expected.")
    c = Checker()
    name = c.string(req, "TrainingJobName", "trainingJobName", min_len=1, max_len=63,
                    regex=NAME_RE, pattern=NAME_PATTERN)
    c.string(req, "RoleArn", "roleArn", min_len=20, max_len=2048,
             regex=ROLE_ARN_RE, pattern=ROLE_ARN_PATTERN)
    output = c.struct(req, "OutputDataConfig", "outputDataConfig")
    if output is not None:
        c.string(output, "S3OutputPath", "outputDataConfig.s3OutputPath", max_len=1024,
                 regex=S3_URI_RE, pattern=S3_URI_PATTERN)
    algorithm = c.struct(req, "AlgorithmSpecification", "algorithmSpecification")
    if algorithm is not None:
        c.string(algorithm, "TrainingInputMode", "algorithmSpecification.trainingInputMode",
                 enum=INPUT_MODES)
        c.string(algorithm, "TrainingImage", "algorithmSpecification.trainingImage",
                 required=False, max_len=255)
        c.string(algorithm, "AlgorithmName", "algorithmSpecification.algorithmName",
                 required=False, min_len=1, max_len=170)
    resources = c.struct(req, "ResourceConfig", "resourceConfig")
    instances = {}
    if resources is not None:
        c.integer(resources, "VolumeSizeInGB", "resourceConfig.volumeSizeInGB", minimum=1)
        groups = resources.get("InstanceGroups")
        if groups is not None:
            if not isinstance(groups, list) or not 1 <= len(groups) <= 5:
                c.fail(groups, "resourceConfig.instanceGroups",
                       "Member must be a list of 1 to 5 instance groups")
            else:
                for i, group in enumerate(groups, 1):
                    path = "resourceConfig.instanceGroups.%d" % i
                    if not isinstance(group, dict):
                        c.fail(group, path, "Member must be a structure")
                        continue
                    c.string(group, "InstanceGroupName", path + ".instanceGroupName",
                             min_len=1, max_len=64)
                    itype = c.string(group, "InstanceType", path + ".instanceType",
                                     regex=INSTANCE_TYPE_RE, pattern="ml.<family>.<size>")
                    count = c.integer(group, "InstanceCount", path + ".instanceCount", minimum=1)
                    if itype and count:
                        instances[itype] = instances.get(itype, 0) + count
        else:
            itype = c.string(resources, "InstanceType", "resourceConfig.instanceType",
                             regex=INSTANCE_TYPE_RE, pattern="ml.<family>.<size>")
            count = c.integer(resources, "InstanceCount", "resourceConfig.instanceCount", minimum=1)
            if itype and count:
                instances[itype] = count
    stopping = c.struct(req, "StoppingCondition", "stoppingCondition")
    if stopping is not None:
        c.integer(stopping, "MaxRuntimeInSeconds", "stoppingCondition.maxRuntimeInSeconds",
                  required=False, minimum=1)
        c.integer(stopping, "MaxWaitTimeInSeconds", "stoppingCondition.maxWaitTimeInSeconds",
                  required=False, minimum=1)
    hyper = req.get("HyperParameters")
    if hyper is not None:
        if not isinstance(hyper, dict):
            c.fail(hyper, "hyperParameters", "Member must be a map")
        elif len(hyper) > 100:
            c.fail(None, "hyperParameters", "Member must have length less than or equal to 100")
        else:
            for key, value in hyper.items():
                if len(key) > 256:
                    c.fail(key, "hyperParameters", "Map keys must satisfy constraint: "
                           "[Member must have length less than or equal to 256]")
                if not isinstance(value, str):
                    c.fail(value, "hyperParameters.%s" % key, "Member must be a string")
                elif len(value) > 2500:
                    c.fail(value, "hyperParameters.%s" % key,
                           "Member must have length less than or equal to 2500")
    channels = req.get("InputDataConfig")
    if channels is not None:
        if not isinstance(channels, list) or not 1 <= len(channels) <= 20:
            c.fail(channels, "inputDataConfig", "Member must be a list of 1 to 20 channels")
        else:
            for i, channel in enumerate(channels, 1):
                c.string(channel if isinstance(channel, dict) else {}, "ChannelName",
                         "inputDataConfig.%d.member.channelName" % i, min_len=1, max_len=64)
                c.struct(channel if isinstance(channel, dict) else {}, "DataSource",
                         "inputDataConfig.%d.member.dataSource" % i)
    tags = req.get("Tags")
    if tags is not None and (not isinstance(tags, list) or len(tags) > 50):
        c.fail(tags, "tags", "Member must be a list of at most 50 tags")
    if c.problems:
        raise validation_error(c.problems)

    # Rules the service checks once the shapes are right.
    if not algorithm.get("TrainingImage") and not algorithm.get("AlgorithmName"):
        raise ApiError("ValidationException",
                       "You must specify either AlgorithmSpecification.TrainingImage "
                       "or AlgorithmSpecification.AlgorithmName.")
    if not instances:
        raise ApiError("ValidationException",
                       "ResourceConfig must specify InstanceType and InstanceCount, "
                       "or InstanceGroups.")
    return name, instances


def parse_timeline(hyper, defaults, time_scale):
    """The emulator_* hyperparameters (falling back to the defaults) as a
    timeline: scaled durations, outcome, failure reason and phase."""
    problems = []
    hyper = hyper or {}
    durations = {}
    for key, phase in HP_SECONDS.items():
        raw = hyper.get(key)
        value = defaults[phase.lower() + "_seconds"]
        if raw is not None:
            text = raw.strip().lower()
            if text in ("inf", "infinity", "hold"):
                value = INF
            else:
                try:
                    value = float(text)
                except ValueError:
                    value = -1.0
                if not math.isfinite(value) or value < 0:
                    problems.append("Value %s at 'hyperParameters.%s' failed to satisfy "
                                    "constraint: Member must be a number of seconds >= 0 "
                                    "or 'inf'" % (_show(raw), key))
                    continue
        durations[phase] = value * time_scale if value != INF else INF
    outcome = hyper.get(HP_OUTCOME, defaults["outcome"])
    if outcome not in ("Completed", "Failed"):
        problems.append("Value %s at 'hyperParameters.%s' failed to satisfy constraint: "
                        "Member must satisfy enum value set: [Completed, Failed]"
                        % (_show(outcome), HP_OUTCOME))
    fail_in = hyper.get(HP_FAIL_IN, "Training")
    if fail_in not in PHASES:
        problems.append("Value %s at 'hyperParameters.%s' failed to satisfy constraint: "
                        "Member must satisfy enum value set: [%s]"
                        % (_show(fail_in), HP_FAIL_IN, ", ".join(PHASES)))
    capacity = hyper.get(HP_CAPACITY_ERROR, "false").lower()
    if capacity not in ("true", "false"):
        problems.append("Value %s at 'hyperParameters.%s' failed to satisfy constraint: "
                        "Member must satisfy enum value set: [true, false]"
                        % (_show(capacity), HP_CAPACITY_ERROR))
    if problems:
        raise validation_error(problems)
    # The six characters \u0000 in the reason stand for a NUL, which a
    # training script may write into /opt/ml/output/failure (and which no
    # jsonb, so no hyperparameter fairshare sends, can hold).
    reason = hyper.get(HP_FAILURE_REASON, defaults["failure_reason"]).replace("\\u0000", "\x00")
    return {"durations": durations, "outcome": outcome, "fail_in": fail_in,
            "failure_reason": reason, "capacity_error": capacity == "true"}


# ---------------------------------------------------------------------------
# Training jobs and their timelines
# ---------------------------------------------------------------------------

STATUS_MESSAGES = {
    "Starting": "Launching requested ML instances",
    "Downloading": "Downloading input data",
    "Training": "Training image download completed. Training in progress.",
    "Uploading": "Uploading generated training model",
    "Completed": "Training job completed",
    "Stopping": "Stopping the training job",
    "Stopped": "Training job stopped",
    "MaxRuntimeExceeded": "Training job stopped: it exceeded the maximum allowed runtime",
}
DESCRIBE_ECHO = ("HyperParameters", "AlgorithmSpecification", "RoleArn", "InputDataConfig",
                 "OutputDataConfig", "ResourceConfig", "VpcConfig", "StoppingCondition",
                 "CheckpointConfig", "DebugHookConfig", "ExperimentConfig", "ProfilerConfig",
                 "TensorBoardOutputConfig", "RetryStrategy", "Environment")


def _ts(epoch):
    """Timestamps as the JSON protocol sends them: epoch seconds, ms precision."""
    return None if epoch is None else round(epoch, 3)


class TrainingJob:
    """One training job.  Its state is advanced lazily: every read first
    applies the transitions whose time has come, stamped with the time they
    were due, so answers do not depend on how often anyone polls."""

    def __init__(self, name, request, region, instances, timeline, stopping_seconds,
                 time_scale, now, capacity_doomed):
        self.name = name
        self.region = region
        self.arn = "arn:aws:sagemaker:%s:%s:training-job/%s" % (region, ACCOUNT_ID, name.lower())
        self.request = request
        self.instances = instances
        self.capacity_doomed = capacity_doomed
        now = round(now, 3)  # the service keeps milliseconds; so do filters on them
        self.creation_time = now
        self.stopping_seconds = stopping_seconds
        max_runtime = (request.get("StoppingCondition") or {}).get("MaxRuntimeInSeconds")
        self.max_runtime = max_runtime * time_scale if max_runtime else None
        self.training_start = None
        self.training_end = None
        self.failure_reason = None
        self.transitions = []
        self.steps = self._plan(timeline, capacity_doomed)
        self.status = None
        self.secondary = None
        self._enter_next(now)

    @staticmethod
    def _plan(timeline, capacity_doomed):
        """[(TrainingJobStatus, SecondaryStatus, seconds or None, message)]."""
        durations = timeline["durations"]
        if capacity_doomed:
            return [("InProgress", "Starting", durations["Starting"], STATUS_MESSAGES["Starting"]),
                    ("Failed", "Failed", None, CAPACITY_ERROR)]
        steps = []
        for phase in PHASES:
            steps.append(("InProgress", phase, durations[phase], STATUS_MESSAGES[phase]))
            if timeline["outcome"] == "Failed" and phase == timeline["fail_in"]:
                steps.append(("Failed", "Failed", None, timeline["failure_reason"]))
                return steps
        steps.append(("Completed", "Completed", None, STATUS_MESSAGES["Completed"]))
        return steps

    @property
    def terminal(self):
        return self.status in ("Completed", "Failed", "Stopped")

    @property
    def active(self):
        """Holds (or is being given) instances: InProgress or Stopping."""
        return self.status in ("InProgress", "Stopping")

    def _enter_next(self, at):
        status, secondary, duration, message = self.steps.pop(0)
        if self.transitions:
            self.transitions[-1]["EndTime"] = at
        transition = {"Status": secondary, "StartTime": at, "StatusMessage": message}
        self.transitions.append(transition)
        self.status, self.secondary = status, secondary
        self.entered_at, self.duration = at, duration
        self.last_modified = at
        if secondary == "Downloading" and self.training_start is None:
            self.training_start = at
        if status == "Failed":
            self.failure_reason = message
        if self.terminal:
            self.training_end = at
            transition["EndTime"] = at

    def advance(self, now):
        """Apply every transition due by `now`."""
        while not self.terminal:
            due = self.entered_at + self.duration if self.duration is not None else INF
            deadline = INF
            if (self.status == "InProgress" and self.max_runtime is not None
                    and self.training_start is not None):
                deadline = self.training_start + self.max_runtime
            if min(due, deadline) > now:
                return
            if deadline < due:
                self.begin_stop(deadline, "MaxRuntimeExceeded")
            else:
                self._enter_next(due)

    def begin_stop(self, at, final="Stopped"):
        self.steps = [("Stopping", "Stopping", self.stopping_seconds, STATUS_MESSAGES["Stopping"]),
                      ("Stopped", final, None, STATUS_MESSAGES[final])]
        self._enter_next(at)

    # Control-API moves -------------------------------------------------
    def force_next(self, now):
        self._enter_next(now)

    def force_end(self, now, status, reason=None):
        message = reason if status == "Failed" else STATUS_MESSAGES[status]
        self.steps = [(status, status, None, message)]
        self._enter_next(now)

    def hold(self):
        self.duration = INF

    # Answers -----------------------------------------------------------
    def describe(self):
        out = {
            "TrainingJobName": self.name,
            "TrainingJobArn": self.arn,
            "ModelArtifacts": {"S3ModelArtifacts": "%s/%s/output/model.tar.gz" % (
                self.request["OutputDataConfig"]["S3OutputPath"].rstrip("/"), self.name)},
            "TrainingJobStatus": self.status,
            "SecondaryStatus": self.secondary,
        }
        if self.failure_reason is not None:
            out["FailureReason"] = self.failure_reason
        for member in DESCRIBE_ECHO:
            if member in self.request:
                out[member] = self.request[member]
        out["EnableNetworkIsolation"] = bool(self.request.get("EnableNetworkIsolation", False))
        out["EnableInterContainerTrafficEncryption"] = bool(
            self.request.get("EnableInterContainerTrafficEncryption", False))
        out["EnableManagedSpotTraining"] = bool(self.request.get("EnableManagedSpotTraining", False))
        out["CreationTime"] = _ts(self.creation_time)
        if self.training_start is not None:
            out["TrainingStartTime"] = _ts(self.training_start)
        if self.training_end is not None:
            out["TrainingEndTime"] = _ts(self.training_end)
            if self.training_start is not None:
                seconds = max(0, math.ceil(self.training_end - self.training_start))
                out["TrainingTimeInSeconds"] = seconds
                out["BillableTimeInSeconds"] = seconds * sum(self.instances.values())
        out["LastModifiedTime"] = _ts(self.last_modified)
        out["SecondaryStatusTransitions"] = [
            {k: (_ts(v) if k.endswith("Time") else v) for k, v in t.items()}
            for t in self.transitions]
        return out

    def summary(self):
        out = {"TrainingJobName": self.name, "TrainingJobArn": self.arn,
               "CreationTime": _ts(self.creation_time),
               "LastModifiedTime": _ts(self.last_modified),
               "TrainingJobStatus": self.status}
        if self.training_end is not None:
            out["TrainingEndTime"] = _ts(self.training_end)
        return out

    def brief(self):
        """The one-line view in /_emulator/stats."""
        out = {"status": self.status, "secondary_status": self.secondary,
               "instances": self.instances, "creation_time": self.creation_time}
        if self.failure_reason is not None:
            out["failure_reason"] = self.failure_reason
        return out


# ---------------------------------------------------------------------------
# Fault injection
# ---------------------------------------------------------------------------

FAULT_DEFAULTS = {"throttle_rate": 0.0, "error_5xx_rate": 0.0, "error_5xx_mode": "before",
                  "drop_rate": 0.0, "drop_mode": "random", "drop_style": "close", "slow_rate": 0.0,
                  "slow_seconds": 3.0, "max_faults": None}
FAULT_RATES = ("throttle_rate", "error_5xx_rate", "drop_rate", "slow_rate")
DROP_MODES = ("before", "after", "random")
ERROR_5XX_MODES = ("before", "after")
DROP_STYLES = ("close", "reset")


def check_fault_settings(settings, where="faults"):
    """Validate one level of a fault configuration; returns a clean dict."""
    if not isinstance(settings, dict):
        raise ValueError("%s must be a JSON object" % where)
    clean = {}
    for key, value in settings.items():
        if key not in FAULT_DEFAULTS:
            raise ValueError("unknown key %r in %s" % (key, where))
        if key in FAULT_RATES:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError("%s.%s must be a number from 0 to 1" % (where, key))
            value = float(value)
        elif key == "slow_seconds":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError("%s.slow_seconds must be a number >= 0" % where)
            value = float(value)
        elif key == "max_faults":
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError("%s.max_faults must be null or an integer >= 0" % where)
        elif key == "error_5xx_mode" and value not in ERROR_5XX_MODES:
            raise ValueError("%s.error_5xx_mode must be one of %s" % (where, ", ".join(ERROR_5XX_MODES)))
        elif key == "drop_mode" and value not in DROP_MODES:
            raise ValueError("%s.drop_mode must be one of %s" % (where, ", ".join(DROP_MODES)))
        elif key == "drop_style" and value not in DROP_STYLES:
            raise ValueError("%s.drop_style must be one of %s" % (where, ", ".join(DROP_STYLES)))
        clean[key] = value
    return clean


def check_fault_config(config):
    """{"seed": n, <settings>, "operations": {op: <settings>}} -> clean copy."""
    if not isinstance(config, dict):
        raise ValueError("the fault configuration must be a JSON object")
    config = dict(config)
    seed = config.pop("seed", None)
    operations = config.pop("operations", {}) or {}
    clean = {"seed": seed, "operations": {}}
    clean.update(check_fault_settings(config))
    if not isinstance(operations, dict):
        raise ValueError("faults.operations must be a JSON object")
    for op, settings in operations.items():
        if op not in OPERATIONS:
            raise ValueError("unknown operation %r in faults.operations" % op)
        clean["operations"][op] = check_fault_settings(settings, "faults.operations.%s" % op)
    for op in (None,) + tuple(clean["operations"]):
        eff = effective_faults(clean, op)
        if eff["throttle_rate"] + eff["error_5xx_rate"] + eff["drop_rate"] > 1.0 + 1e-9:
            raise ValueError("throttle_rate + error_5xx_rate + drop_rate must not exceed 1"
                             + ("" if op is None else " (for %s)" % op))
    return clean


def effective_faults(config, op):
    """Defaults < global settings < the operation's own settings."""
    eff = dict(FAULT_DEFAULTS)
    eff.update({k: v for k, v in config.items() if k in FAULT_DEFAULTS})
    if op is not None:
        eff.update(config.get("operations", {}).get(op, {}))
    return eff


def _fault_error(fault):
    """The 5xx a fault answers with."""
    return ApiError(fault.error, "We encountered an internal error. Please try again."
                    if fault.error == "InternalFailure" else "Service Unavailable")


class Fault:
    """What to do to one request: sleep first, then at most one of
    throttle / error_5xx / drop."""

    def __init__(self, slow=0.0, kind=None, error=None, drop_after=False, drop_style="close",
                 error_after=False):
        self.slow, self.kind, self.error = slow, kind, error
        self.drop_after, self.drop_style = drop_after, drop_style
        self.error_after = error_after


# ---------------------------------------------------------------------------
# The emulator's state
# ---------------------------------------------------------------------------

DEFAULT_TIMELINE = {"starting_seconds": 0.5, "downloading_seconds": 0.5,
                    "training_seconds": 2.0, "uploading_seconds": 0.5,
                    "stopping_seconds": 0.5, "outcome": "Completed",
                    "failure_reason": DEFAULT_FAILURE_REASON}


class Stats:
    """Counters that tests and benchmarks read through /_emulator/stats."""

    def __init__(self):
        self.started_at = time.time()
        self.requests = 0
        self.control_requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.calls = defaultdict(int)
        self.outcomes = defaultdict(lambda: defaultdict(int))
        self.faults = defaultdict(int)
        self.creates = defaultdict(int)
        self.create_calls = defaultdict(int)
        self.create_times = {}
        self.create_arrival_times = {}
        self.duplicate_creates = defaultdict(int)
        self.stops = defaultdict(int)

    def totals(self):
        out = defaultdict(int)
        for per_op in self.outcomes.values():
            for outcome, n in per_op.items():
                out[outcome] += n
        return dict(out)


class ControlError(Exception):
    """A control-API error: HTTP status and message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Emulator:
    """All state behind one lock: jobs, counters, fault, capacity and limit
    settings.  Each public method is one API operation or control action."""

    def __init__(self, options):
        self.options = options
        self.lock = threading.Lock()
        self.log = lambda record: None   # main() installs the --log writer
        self.reset()

    def reset(self):
        """Back to the state right after start-up (CLI settings included)."""
        with self.lock:
            in_flight = self.stats.in_flight if hasattr(self, "stats") else 0
            self.jobs = {}           # lower-cased name -> TrainingJob
            self.active = set()      # names of jobs not yet terminal
            self.stats = Stats()
            self.stats.in_flight = self.stats.max_in_flight = in_flight  # still being served
            self.faults = check_fault_config(self.options.faults)
            self.rng = random.Random(self.faults.get("seed"))
            self.fault_counts = defaultdict(int)
            self.capacity = dict(self.options.capacity)
            self.limits = dict(self.options.limits)
            self.defaults = dict(self.options.defaults)
            self.roles = {}          # RoleArn -> "deny": the caller may not pass it

    # Helpers (caller holds the lock) -----------------------------------
    def _advance_all(self, now):
        for key in list(self.active):
            job = self.jobs[key]
            job.advance(now)
            if job.terminal:
                self.active.discard(key)

    def _in_use(self, instance_type, now, count_doomed):
        self._advance_all(now)
        total = 0
        for key in self.active:
            job = self.jobs[key]
            if job.active and (count_doomed or not job.capacity_doomed):
                total += job.instances.get(instance_type, 0)
        return total

    def _job(self, name, now, region):
        """The training job of that name in region (a request's region sees
        only its own, as at SageMaker)."""
        job = self.jobs.get(name.lower()) if isinstance(name, str) else None
        if job is not None and job.region != region:
            job = None
        if job is None:
            if self.options.not_found_error == "ResourceNotFound":
                raise ApiError("ResourceNotFound", "Training job %s does not exist." % name)
            raise ApiError("ValidationException", "Requested resource not found.")
        job.advance(now)
        if job.terminal:
            self.active.discard(name.lower())
        return job

    # Request accounting ------------------------------------------------
    def request_started(self):
        with self.lock:
            self.stats.requests += 1
            self.stats.in_flight += 1
            self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)

    def request_finished(self, op, outcome):
        with self.lock:
            self.stats.in_flight -= 1
            self.stats.calls[op] += 1
            self.stats.outcomes[op][outcome] += 1

    def decide_fault(self, op):
        """Draw this request's fault, if any, from the seeded generator."""
        with self.lock:
            cfg = effective_faults(self.faults, op)
            own = self.faults["operations"].get(op, {})
            scope = op if "max_faults" in own else "*"
            if cfg["max_faults"] is not None and self.fault_counts[scope] >= cfg["max_faults"]:
                return Fault()
            fault = Fault(drop_style=cfg["drop_style"])
            if self.rng.random() < cfg["slow_rate"]:
                fault.slow = cfg["slow_seconds"]
                self.stats.faults["slow"] += 1
                self.fault_counts[scope] += 1
            r = self.rng.random()
            throttle, err, drop = cfg["throttle_rate"], cfg["error_5xx_rate"], cfg["drop_rate"]
            if r < throttle:
                fault.kind = "throttle"
            elif r < throttle + err:
                fault.kind = "error_5xx"
                fault.error = self.rng.choice(("InternalFailure", "ServiceUnavailable"))
                fault.error_after = cfg["error_5xx_mode"] == "after"
            elif r < throttle + err + drop:
                mode = cfg["drop_mode"]
                if mode == "random":
                    mode = self.rng.choice(("before", "after"))
                fault.kind = "drop"
                fault.drop_after = mode == "after"
            if fault.kind is not None:
                label = fault.kind
                if fault.kind == "error_5xx":
                    label = fault.error + ("_after" if fault.error_after else "")
                elif fault.kind == "drop":
                    label = "drop_after" if fault.drop_after else "drop_before"
                self.stats.faults[label] += 1
                self.fault_counts[scope] += 1
            return fault

    # API operations ----------------------------------------------------
    def create_training_job(self, req, region):
        name_for_count = req.get("TrainingJobName") if isinstance(req, dict) else None
        if isinstance(name_for_count, str):
            with self.lock:
                self.stats.create_calls[name_for_count] += 1
        name, instances = validate_create_request(req)
        with self.lock:
            if self.roles.get(req["RoleArn"]) == "deny":
                raise ApiError("AccessDeniedException",
                               "User: arn:aws:sts::%s:assumed-role/fairshare/emulator is not "
                               "authorized to perform: iam:PassRole on resource: %s because no "
                               "identity-based policy allows the iam:PassRole action"
                               % (ACCOUNT_ID, req["RoleArn"]))
            timeline = parse_timeline(req.get("HyperParameters"), self.defaults,
                                      self.options.time_scale)
            now = time.time()
            key = name.lower()
            existing = self.jobs.get(key)
            if existing is not None:
                self.stats.duplicate_creates[name] += 1
                raise ApiError("ResourceInUse",
                               "Training job names must be unique within an AWS account and "
                               "region, and a training job with this name already exists (%s)"
                               % existing.arn)
            for itype, count in sorted(instances.items()):
                limit = self.limits.get(itype)
                if limit is not None:
                    used = self._in_use(itype, now, count_doomed=True)
                    if used + count > limit:
                        raise ApiError(
                            "ResourceLimitExceeded",
                            "The account-level service limit '%s for training job usage' is "
                            "%d Instances, with current utilization of %d Instances and a "
                            "request delta of %d Instances. Please use AWS Service Quotas to "
                            "request an increase for this quota. If AWS Service Quotas is not "
                            "available, contact AWS support to request an increase for this "
                            "quota." % (itype, limit, used, count))
            doomed = timeline["capacity_error"]
            for itype, count in sorted(instances.items()):
                available = self.capacity.get(itype)
                if available == "fail":
                    doomed = True
                elif isinstance(available, int):
                    if self._in_use(itype, now, count_doomed=False) + count > available:
                        doomed = True
            job = TrainingJob(name, req, region, instances, timeline,
                              timeline["durations"]["Stopping"], self.options.time_scale,
                              now, doomed)
            self.jobs[key] = job
            self.active.add(key)
            self.stats.creates[name] += 1
            self.stats.create_times[name] = now
            return {"TrainingJobArn": job.arn}

    def describe_training_job(self, req, region):
        name = self._name_arg(req)
        with self.lock:
            return self._job(name, time.time(), region).describe()

    def stop_training_job(self, req, region):
        name = self._name_arg(req)
        with self.lock:
            now = time.time()
            job = self._job(name, now, region)
            if job.status != "InProgress":
                raise ApiError("ValidationException",
                               "The request was rejected because the training job is in "
                               "status %s." % job.status)
            job.begin_stop(now)
            self.stats.stops[job.name] += 1
            return {}

    @staticmethod
    def _name_arg(req):
        if not isinstance(req, dict):
            raise ApiError("SerializationException", "Start of structure or map found where not expected.")
        c = Checker()
        name = c.string(req, "TrainingJobName", "trainingJobName", min_len=1, max_len=63,
                        regex=NAME_RE, pattern=NAME_PATTERN)
        if c.problems:
            raise validation_error(c.problems)
        return name

    def list_tags(self, req, region):
        """ListTags of a training job, by its ARN: the Tags of its create
        request, in order, paged as SageMaker pages them."""
        if not isinstance(req, dict):
            raise ApiError("SerializationException", "Start of structure or map found where not expected.")
        c = Checker()
        arn = c.string(req, "ResourceArn", "resourceArn", min_len=1, max_len=256)
        max_results = c.integer(req, "MaxResults", "maxResults", required=False, minimum=50)
        if isinstance(max_results, int) and max_results > 100:
            c.fail(max_results, "maxResults", "Member must have value less than or equal to 100")
        token = c.string(req, "NextToken", "nextToken", required=False, max_len=8192)
        if c.problems:
            raise validation_error(c.problems)
        with self.lock:
            job = next((j for j in self.jobs.values() if j.arn == arn and j.region == region), None)
            if job is None:
                raise ApiError("ValidationException",
                               "Requested resource not found: %s" % arn)
            tags = list(job.request.get("Tags") or [])
        start = 0
        if token:
            try:
                start = int(base64.urlsafe_b64decode(token.encode()).decode())
            except (ValueError, TypeError):
                raise ApiError("ValidationException", "Invalid pagination token: %s" % token)
        end = start + (max_results or 50)
        answer = {"Tags": tags[start:end]}
        if end < len(tags):
            answer["NextToken"] = base64.urlsafe_b64encode(str(end).encode()).decode()
        return answer

    def list_training_jobs(self, req, region):
        if not isinstance(req, dict):
            raise ApiError("SerializationException", "Start of structure or map found where not expected.")
        c = Checker()
        max_results = c.integer(req, "MaxResults", "maxResults", required=False, minimum=1)
        if isinstance(max_results, int) and max_results > 100:
            c.fail(max_results, "maxResults", "Member must have value less than or equal to 100")
        contains = c.string(req, "NameContains", "nameContains", required=False, max_len=63,
                            regex=NAME_CONTAINS_RE, pattern="[a-zA-Z0-9\\-]+")
        status = c.string(req, "StatusEquals", "statusEquals", required=False, enum=JOB_STATUSES)
        sort_by = c.string(req, "SortBy", "sortBy", required=False, enum=SORT_BY)
        order = c.string(req, "SortOrder", "sortOrder", required=False, enum=SORT_ORDERS)
        token = c.string(req, "NextToken", "nextToken", required=False, max_len=8192)
        bounds = {}
        for member in ("CreationTimeAfter", "CreationTimeBefore",
                       "LastModifiedTimeAfter", "LastModifiedTimeBefore"):
            if req.get(member) is not None:
                bounds[member] = _parse_timestamp(req[member], c, _camel(member))
        if c.problems:
            raise validation_error(c.problems)
        max_results = max_results or 10
        sort_by = sort_by or "CreationTime"
        order = order or "Descending"
        after = None
        if token:
            try:
                decoded = json.loads(base64.urlsafe_b64decode(token.encode()).decode())
                if decoded["s"] != sort_by or decoded["o"] != order:
                    raise ValueError
                after = tuple(decoded["k"])
            except (ValueError, KeyError, TypeError):
                raise ApiError("ValidationException", "Invalid pagination token: %s" % token)

        def key_of(job):
            value = {"Name": job.name, "CreationTime": job.creation_time,
                     "Status": job.status}[sort_by]
            return (value, job.name)

        with self.lock:
            now = time.time()
            self._advance_all(now)
            jobs = []
            for job in self.jobs.values():
                if job.region != region:
                    continue
                if contains and contains.lower() not in job.name.lower():
                    continue
                if "CreationTimeAfter" in bounds and not job.creation_time > bounds["CreationTimeAfter"]:
                    continue
                if "CreationTimeBefore" in bounds and not job.creation_time < bounds["CreationTimeBefore"]:
                    continue
                if "LastModifiedTimeAfter" in bounds and not job.last_modified > bounds["LastModifiedTimeAfter"]:
                    continue
                if "LastModifiedTimeBefore" in bounds and not job.last_modified < bounds["LastModifiedTimeBefore"]:
                    continue
                jobs.append((key_of(job), job))
            descending = order == "Descending"
            jobs.sort(key=lambda item: item[0], reverse=descending)
            if after is not None:
                jobs = [item for item in jobs
                        if (item[0] < after if descending else item[0] > after)]
            page = jobs[:max_results]
            out = {"TrainingJobSummaries": [job.summary() for _, job in page
                                            # As documented: StatusEquals filters the page
                                            # of MaxResults jobs, after it was cut.
                                            if status is None or job.status == status]}
        if len(jobs) > max_results:
            out["NextToken"] = base64.urlsafe_b64encode(json.dumps(
                {"s": sort_by, "o": order, "k": list(page[-1][0])}).encode()).decode()
        return out

    # Control actions ---------------------------------------------------
    def stats_snapshot(self, with_jobs=True):
        with self.lock:
            now = time.time()
            self._advance_all(now)
            s = self.stats
            counts = defaultdict(int)
            for job in self.jobs.values():
                counts[job.status] += 1
            out = {
                "now": now, "started_at": s.started_at, "requests": s.requests,
                "control_requests": s.control_requests,
                "in_flight": s.in_flight, "max_in_flight": s.max_in_flight,
                "calls": dict(s.calls),
                "outcomes": {op: dict(v) for op, v in s.outcomes.items()},
                "totals": s.totals(),
                "faults_injected": dict(s.faults),
                "creates": dict(s.creates),
                "create_calls": dict(s.create_calls),
                "create_times": dict(s.create_times),
                "create_arrival_times": dict(s.create_arrival_times),
                "duplicate_creates": dict(s.duplicate_creates),
                "stops": dict(s.stops),
                "job_counts": dict(counts),
            }
            if with_jobs:
                out["jobs"] = {job.name: job.brief() for job in self.jobs.values()}
            return out

    def control_job(self, name, action, body):
        with self.lock:
            now = time.time()
            job = self.jobs.get(name.lower())
            if job is None:
                raise ControlError(404, "no training job named %r" % name)
            job.advance(now)
            if action == "describe":
                out = job.describe()
                out["_emulator"] = {"request": job.request, "instances": job.instances,
                                    "capacity_doomed": job.capacity_doomed,
                                    "phase_entered_at": job.entered_at,
                                    "phase_seconds": job.duration,
                                    "remaining_steps": [s[1] for s in job.steps]}
                return out
            if action == "backdate":
                seconds = body.get("seconds")
                if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
                    raise ControlError(400, "seconds must be a positive number")
                job.creation_time -= seconds
                return {"TrainingJobName": job.name, "CreationTime": _ts(job.creation_time)}
            if job.terminal:
                raise ControlError(409, "training job %s is already %s" % (job.name, job.status))
            if action == "advance":
                job.force_next(now)
            elif action == "complete":
                if job.status != "InProgress":
                    raise ControlError(409, "training job %s is %s, not InProgress"
                                       % (job.name, job.status))
                job.force_end(now, "Completed")
            elif action == "fail":
                reason = body.get("reason", DEFAULT_FAILURE_REASON)
                if not isinstance(reason, str) or not reason:
                    raise ControlError(400, "reason must be a non-empty string")
                job.force_end(now, "Failed", reason)
            elif action == "capacity-fail":
                job.force_end(now, "Failed", CAPACITY_ERROR)
            elif action == "hold":
                job.hold()
            else:
                raise ControlError(404, "unknown job action %r" % action)
            if job.terminal:
                self.active.discard(job.name.lower())
            return {"TrainingJobName": job.name, "TrainingJobStatus": job.status,
                    "SecondaryStatus": job.secondary}

    def set_faults(self, body):
        try:
            clean = check_fault_config(body)
        except ValueError as e:
            raise ControlError(400, str(e))
        with self.lock:
            self.faults = clean
            self.rng = random.Random(clean.get("seed"))
            self.fault_counts = defaultdict(int)
            return self.faults

    def get_faults(self):
        with self.lock:
            return dict(self.faults, injected=dict(self.stats.faults))

    def update_map(self, which, body):
        """POST /_emulator/capacity|limits|defaults: merge, null deletes."""
        if not isinstance(body, dict):
            raise ControlError(400, "the body must be a JSON object")
        with self.lock:
            target = {"capacity": self.capacity, "limits": self.limits,
                      "defaults": self.defaults, "roles": self.roles}[which]
            staged = dict(target)
            for key, value in body.items():
                try:
                    if which == "defaults":
                        staged[key] = check_default(key, value)
                    elif value is None:
                        staged.pop(key, None)
                    elif which == "capacity":
                        staged[check_instance_type(key)] = check_capacity(value)
                    elif which == "roles":
                        if value != "deny":
                            raise ValueError('a role is "deny" or null, not %r' % (value,))
                        staged[key] = value
                    else:
                        staged[check_instance_type(key)] = check_limit(value)
                except ValueError as e:
                    raise ControlError(400, str(e))
            target.clear()
            target.update(staged)
            return dict(target)

    def get_map(self, which):
        with self.lock:
            return dict({"capacity": self.capacity, "limits": self.limits,
                         "defaults": self.defaults, "roles": self.roles}[which])


def _parse_timestamp(value, checker, path):
    """Timestamps arrive as epoch seconds (botocore) or ISO 8601 strings."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
        try:
            from datetime import datetime, timezone
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=timezone.utc)
            return parsed.timestamp()
        except ValueError:
            pass
    checker.fail(value, path, "Member must be a timestamp")
    return None


def check_instance_type(value):
    if not isinstance(value, str) or not INSTANCE_TYPE_RE.fullmatch(value):
        raise ValueError("%r is not an instance type like ml.p4d.24xlarge" % (value,))
    return value


def check_capacity(value):
    if value in ("fail", "ok"):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ValueError("capacity must be \"fail\", \"ok\" or a number of instances >= 0, not %r"
                     % (value,))


def check_limit(value):
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ValueError("a limit must be a number of instances >= 0, not %r" % (value,))


def check_default(key, value):
    if key not in DEFAULT_TIMELINE:
        raise ValueError("unknown default %r (known: %s)" % (key, ", ".join(DEFAULT_TIMELINE)))
    if key == "outcome":
        if value not in ("Completed", "Failed"):
            raise ValueError("outcome must be Completed or Failed")
    elif key == "failure_reason":
        if not isinstance(value, str) or not value:
            raise ValueError("failure_reason must be a non-empty string")
    elif value == "inf":
        value = INF
    elif isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError("%s must be a number of seconds >= 0 or \"inf\"" % key)
    return value if key in ("outcome", "failure_reason") else float(value)


# ---------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------

API_METHODS = {"CreateTrainingJob": Emulator.create_training_job,
               "DescribeTrainingJob": Emulator.describe_training_job,
               "StopTrainingJob": Emulator.stop_training_job,
               "ListTrainingJobs": Emulator.list_training_jobs,
               "ListTags": Emulator.list_tags}
JSON_CONTENT_TYPE = "application/x-amz-json-1.1"


def _plain(obj):
    """JSON-safe copy: infinite durations become the string "inf"."""
    if isinstance(obj, float) and math.isinf(obj):
        return "inf"
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def _signed_region(headers):
    """The region of a request's credential scope (verify_sigv4 checked it)."""
    authorization = headers.get("Authorization") or ""
    match = re.search(r"Credential=[^/,]*/[^/,]*/([^/,]*)/", authorization)
    return match.group(1) if match else None


class Handler(BaseHTTPRequestHandler):
    """One connection; HTTP/1.1 keep-alive, so a client may reuse it."""

    protocol_version = "HTTP/1.1"
    server_version = "SageMakerEmulator/1.0"
    sys_version = ""
    timeout = 120  # idle keep-alive connections are closed after this
    # Small answers on keep-alive connections must not wait for delayed ACKs
    # (40 ms each): no Nagle, and each answer goes out in a single send.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def version_string(self):
        return self.server_version

    def do_POST(self):
        self._dispatch()

    do_GET = do_PUT = do_DELETE = do_PATCH = do_POST

    def _dispatch(self):
        path = urllib.parse.urlsplit(self.path).path
        if path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/"):
            self._control(path)
        else:
            self._api(path)

    # Plumbing ----------------------------------------------------------
    def _read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            raise ValueError("request body too large")
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, status, obj, content_type, error_code=None):
        data = json.dumps(obj, separators=(",", ":")).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        if error_code:
            self.send_header("x-amzn-ErrorType", error_code)
        self._headers_buffer.append(b"\r\n" + data)  # end_headers(), with the body
        self.flush_headers()

    def _drop(self, style):
        """Close the connection without a byte of answer."""
        self.close_connection = True
        if style == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.connection.close()

    # The SageMaker API -------------------------------------------------
    def _api(self, path):
        """Serve one API request.  The counters are updated before the answer
        leaves, so a client that reads /_emulator/stats as soon as it has its
        answer finds its request counted."""
        emu = self.server.emulator
        started = time.time()
        emu.request_started()
        label, name, drop = "<unknown>", None, None
        try:
            label, name, status, payload, error_code, drop = self._answer(emu, path, started)
        except Exception:  # an emulator bug: say so, as the service would
            traceback.print_exc()
            status, error_code = 500, "InternalFailure"
            payload = ApiError("InternalFailure", "emulator error").body()
        if drop is not None:
            outcome = "dropped_" + drop[0]
        else:
            outcome = "ok" if status == 200 else error_code
        emu.request_finished(label, outcome)
        emu.log({"t": started, "ms": round((time.time() - started) * 1000, 3),
                 "op": label, "name": name, "outcome": outcome,
                 "status": None if drop else status,
                 "client": "%s:%s" % self.client_address[:2],
                 "server": self.server.server_address[0],
                 "user_agent": self.headers.get("User-Agent")})
        try:
            if drop is not None:
                self._drop(drop[1])
            else:
                self._send(status, payload, JSON_CONTENT_TYPE, error_code)
        except OSError:  # the client went away first
            self.close_connection = True

    def _answer(self, emu, path, started):
        """Decide the answer: (operation, job name, HTTP status, body, error
        code, drop), drop being None or ("before"|"after", style)."""
        opts = emu.options
        body = self._read_body()
        target = self.headers.get("X-Amz-Target") or ""
        op = target[len(TARGET_PREFIX):] if target.startswith(TARGET_PREFIX) else None
        if op not in API_METHODS:
            op = None
        label, name, fault = op or "<unknown>", None, None
        try:
            verify_sigv4(self.command, self.path, self.headers.items(), body,
                         opts.access_key_id, opts.secret_access_key, opts.session_token,
                         opts.regions, now=started, check_clock=opts.check_clock)
            if op is None or self.command != "POST" or path != "/":
                raise ApiError("UnknownOperationException",
                               "Unknown operation: %s %s %s"
                               % (self.command, path, target or "(no X-Amz-Target)"))
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype != JSON_CONTENT_TYPE:
                raise ApiError("UnknownOperationException",
                               "Unsupported Content-Type '%s': SageMaker expects %s"
                               % (ctype, JSON_CONTENT_TYPE))
            fault = emu.decide_fault(op)
            if fault.slow:
                time.sleep(fault.slow)
            if fault.kind == "throttle":
                raise ApiError("ThrottlingException", "Rate exceeded")
            if fault.kind == "error_5xx" and not fault.error_after:
                raise _fault_error(fault)
            if fault.kind == "drop" and not fault.drop_after:
                return label, name, None, None, None, ("before", fault.drop_style)
            try:
                req = json.loads(body.decode("utf-8")) if body.strip() else {}
            except (ValueError, UnicodeDecodeError):
                raise ApiError("SerializationException", "The request body is not valid JSON.")
            if isinstance(req, dict) and isinstance(req.get("TrainingJobName"), str):
                name = req["TrainingJobName"]
            status, payload, error_code = 200, API_METHODS[op](emu, req, _signed_region(self.headers)), None
            if op == "CreateTrainingJob":
                with emu.lock:
                    emu.stats.create_arrival_times[name] = started
        except ApiError as e:
            status, payload, error_code = e.status, e.body(), e.code
        if fault is not None and fault.kind == "error_5xx" and fault.error_after:
            # carried out (or refused) as asked; the answer is a 5xx all the same
            e = _fault_error(fault)
            status, payload, error_code = e.status, e.body(), e.code
        drop = None
        if fault is not None and fault.kind == "drop" and fault.drop_after:
            drop = ("after", fault.drop_style)
        return label, name, status, payload, error_code, drop

    # The control API ---------------------------------------------------
    def _control(self, path):
        emu = self.server.emulator
        with emu.lock:
            emu.stats.control_requests += 1
        try:
            raw = self._read_body()
            try:
                body = json.loads(raw.decode("utf-8")) if raw.strip() else {}
            except (ValueError, UnicodeDecodeError):
                raise ControlError(400, "the body must be JSON")
            result = self._route(emu, path, body)
            self._send(200, _plain(result), "application/json")
        except ControlError as e:
            self._send(e.status, {"error": str(e)}, "application/json")
        except Exception as e:
            traceback.print_exc()
            self._send(500, {"error": "emulator error: %s" % e}, "application/json")

    def _route(self, emu, path, body):
        parts = [urllib.parse.unquote(p) for p in path[len(CONTROL_PREFIX):].split("/") if p]
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        method = self.command

        def need(expected):
            if method != expected:
                raise ControlError(405, "use %s for %s" % (expected, path))

        if parts == ["health"]:
            need("GET")
            return {"ok": True, "port": self.server.server_address[1],
                    "region": emu.options.region}
        if parts == ["stats"]:
            need("GET")
            return emu.stats_snapshot(with_jobs=query.get("jobs", ["1"])[0] not in ("0", "false"))
        if parts == ["reset"]:
            need("POST")
            emu.reset()
            return {"ok": True}
        if parts == ["faults"] or (len(parts) == 1 and parts[0] in ("capacity", "limits", "defaults", "roles")):
            if method not in ("GET", "POST"):
                raise ControlError(405, "use GET or POST for %s" % path)
        if parts == ["faults"]:
            return emu.set_faults(body) if method == "POST" else emu.get_faults()
        if len(parts) == 1 and parts[0] in ("capacity", "limits", "defaults", "roles"):
            if method == "POST":
                return emu.update_map(parts[0], body)
            return emu.get_map(parts[0])
        if parts == ["jobs"]:
            need("GET")
            return emu.stats_snapshot()["jobs"]
        if len(parts) == 2 and parts[0] == "jobs":
            need("GET")
            return emu.control_job(parts[1], "describe", body)
        if len(parts) == 3 and parts[0] == "jobs":
            need("POST")
            if not isinstance(body, dict):
                raise ControlError(400, "the body must be a JSON object")
            return emu.control_job(parts[1], parts[2], body)
        raise ControlError(404, "no control endpoint %s %s" % (method, path))


class EmulatorServer(ThreadingHTTPServer):
    """One thread per connection, a deep listen queue, quiet about clients
    that hang up."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError, socket.timeout)):
            return
        super().handle_error(request, client_address)


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

class Options:
    """Start-up settings; reset returns to these."""

    def __init__(self, args):
        self.region = args.region
        self.regions = (args.region,) + tuple(r for r in args.also_region if r != args.region)
        self.access_key_id = args.access_key_id
        self.secret_access_key = args.secret_access_key
        self.session_token = args.session_token
        self.check_clock = not args.no_clock_check
        if not args.time_scale >= 0:
            raise ValueError("--time-scale must be >= 0")
        self.time_scale = args.time_scale
        self.not_found_error = args.not_found_error
        self.defaults = dict(DEFAULT_TIMELINE)
        for key in DEFAULT_TIMELINE:
            value = getattr(args, "default_" + key)
            if value is not None:
                self.defaults[key] = check_default(key, value)
        self.capacity = {}
        for item in args.capacity:
            itype, value = _split_setting(item, "--capacity")
            self.capacity[check_instance_type(itype)] = check_capacity(
                int(value) if value.isdigit() else value)
        self.limits = {}
        for item in args.limit:
            itype, value = _split_setting(item, "--limit")
            self.limits[check_instance_type(itype)] = check_limit(int(value))
        faults = {"throttle_rate": args.throttle_rate, "error_5xx_rate": args.error_5xx_rate,
                  "error_5xx_mode": args.error_5xx_mode, "drop_rate": args.drop_rate, "drop_mode": args.drop_mode,
                  "drop_style": args.drop_style, "slow_rate": args.slow_rate,
                  "slow_seconds": args.slow_seconds, "max_faults": args.max_faults,
                  "seed": args.fault_seed}
        self.faults = check_fault_config(faults)
        self.log_path = args.log


def _split_setting(item, flag):
    itype, sep, value = item.partition("=")
    if not sep:
        raise ValueError("%s wants TYPE=VALUE, not %r" % (flag, item))
    return itype, value


def _seconds_arg(text):
    return "inf" if text.strip().lower() == "inf" else float(text)


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Local Amazon SageMaker training-job emulator (JSON 1.1, SigV4) "
                    "for fairshare's tests and demo.")
    p.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: any free one)")
    p.add_argument("--port-file", help="write the bound port here (atomically) once listening")
    p.add_argument("--region", default="us-east-1")
    p.add_argument("--also-region", action="append", default=[], metavar="REGION",
                   help="also accept requests signed for this region (repeatable): each region "
                        "sees only the training jobs created in it, as at SageMaker")
    p.add_argument("--access-key-id", default="AKIAEMULATOR00000000")
    p.add_argument("--secret-access-key", default="emulator/secret/access/key")
    p.add_argument("--session-token", help="if given, every request must carry and sign it")
    p.add_argument("--no-clock-check", action="store_true",
                   help="accept X-Amz-Date more than 15 minutes from now")
    p.add_argument("--log", help="append one JSON line per request to this file")
    p.add_argument("--also-listen", action="append", default=[], metavar="ADDR",
                   help="listen on this other loopback address too, same port (repeatable); "
                        "the log's 'server' says which address a request came in on")
    p.add_argument("--time-scale", type=float, default=1.0,
                   help="multiply every timeline duration by this (0.1 = ten times faster)")
    p.add_argument("--not-found-error", choices=("ValidationException", "ResourceNotFound"),
                   default="ValidationException",
                   help="error for an unknown job name (real SageMaker: ValidationException "
                        "'Requested resource not found.')")
    for key in ("starting", "downloading", "training", "uploading", "stopping"):
        p.add_argument("--default-%s-seconds" % key, type=_seconds_arg,
                       dest="default_%s_seconds" % key, metavar="S",
                       help="default %s phase (%.1f s; 'inf' = until told)"
                            % (key, DEFAULT_TIMELINE[key + "_seconds"]))
    p.add_argument("--default-outcome", choices=("Completed", "Failed"))
    p.add_argument("--default-failure-reason")
    p.add_argument("--capacity", action="append", default=[], metavar="TYPE=fail|ok|N",
                   help="capacity of an instance type: fail always, or N instances at once")
    p.add_argument("--limit", action="append", default=[], metavar="TYPE=N",
                   help="account limit: ResourceLimitExceeded past N instances in use")
    p.add_argument("--throttle-rate", type=float, default=0.0)
    p.add_argument("--error-5xx-rate", type=float, default=0.0)
    p.add_argument("--error-5xx-mode", choices=ERROR_5XX_MODES, default="before")
    p.add_argument("--drop-rate", type=float, default=0.0)
    p.add_argument("--drop-mode", choices=DROP_MODES, default="random")
    p.add_argument("--drop-style", choices=DROP_STYLES, default="close")
    p.add_argument("--slow-rate", type=float, default=0.0)
    p.add_argument("--slow-seconds", type=float, default=3.0)
    p.add_argument("--fault-seed", type=int)
    p.add_argument("--max-faults", type=int)
    return p.parse_args(argv)


def _write_port_file(path, port):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.replace(tmp, path)


def main(argv=None):
    args = parse_args(argv)
    try:
        options = Options(args)
    except ValueError as e:
        print("sagemaker_emulator: %s" % e, file=sys.stderr)
        return 2
    emulator = Emulator(options)
    log_file = open(options.log_path, "a", buffering=1) if options.log_path else None
    log_lock = threading.Lock()

    def log(record):
        if log_file is not None:
            line = json.dumps(record, separators=(",", ":"))
            with log_lock:
                log_file.write(line + "\n")
    emulator.log = log

    server = EmulatorServer(("127.0.0.1", args.port), Handler)
    server.emulator = emulator
    port = server.server_address[1]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    # More loopback addresses on the same port, one emulator behind them all:
    # clients given different addresses are told apart in the log.
    servers = [server]
    for addr in args.also_listen:
        if not addr.startswith("127."):
            print("sagemaker_emulator: --also-listen takes a loopback address (127.x.y.z)",
                  file=sys.stderr)
            return 2
        extra = EmulatorServer((addr, port), Handler)
        extra.emulator = emulator
        servers.append(extra)
    for srv in servers:
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.1},
                         name="serve", daemon=True).start()
    if args.port_file:
        _write_port_file(args.port_file, port)
    print("sagemaker_emulator: listening on http://127.0.0.1:%d (region %s)"
          % (port, options.region), file=sys.stderr, flush=True)
    while not stop.wait(0.5):
        pass
    for srv in servers:
        srv.shutdown()
        srv.server_close()
    if args.port_file:
        try:
            os.unlink(args.port_file)
        except OSError:
            pass
    if log_file is not None:
        log_file.close()
    print("sagemaker_emulator: stopped", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
