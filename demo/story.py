#!/usr/bin/python3
"""demo/story.py — the demo's story, told as it happens.

demo/run.sh starts this once the cluster, the dispatcher, the SageMaker
emulator and the reference setup (demo/setup.sql) are up; it is not meant
to be run by hand.  It submits jobs with INSERT, one step at a time, and
between steps it polls the database every POLL seconds and prints what the
dispatcher wrote: every state change of fairshare.job_events with its
reason, every preemption decision (jobs.stop_kind / stop_reason, which is
not a state change until SageMaker reports the stop), every nomination (a
waiting job that capacity is held for), and the emulator's StopTrainingJob
counter when a stop goes out.  At chosen moments it prints
fairshare.queue_snapshot(), fairshare.explain() and the dashboard views.

Everything printed comes from the database or the emulator; the narration
says what is submitted and what to look for, and each step waits (with a
time limit) for the outcome the scheduler rules predict, then prints the
numbers it read.  Samples of the instances each share holds go to a CSV
file, which demo/chart.py turns into the SVG chart.

Standard library only (Debian's /usr/bin/python3).  The database is reached
through one psql session (there is no PostgreSQL driver in the standard
library): each query answers one line of JSON.

Usage: story.py --emulator-port N --emuctl PATH --out DIR --time-scale F
                [--verbose] -- PSQL-COMMAND...
"""
import argparse
import csv
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import time

POLL = 0.25			# seconds between polls of the database
HELD = "('SCHEDULED', 'STARTING', 'RUNNING')"


class DemoError(Exception):
	"""Something the story waits for did not happen, or a query failed."""


# --- output -------------------------------------------------------------------

class Out:
	"""The terminal (coloured when it is one) and a plain copy in a file."""

	CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33",
			 "blue": "34", "magenta": "35", "cyan": "36"}

	def __init__(self, log_path):
		self.colour = (sys.stdout.isatty() and os.environ.get("TERM", "dumb") != "dumb"
					   and "NO_COLOR" not in os.environ)
		self.width = shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else 0
		self.log = open(log_path, "w", encoding="utf-8")

	def c(self, style, text):
		if not self.colour or not style:
			return text
		codes = ";".join(self.CODES[s] for s in style.split())
		return f"\033[{codes}m{text}\033[0m"

	def line(self, *parts):
		"""parts: (style, text) pairs or plain strings, joined as they are."""
		plain = "".join(p if isinstance(p, str) else p[1] for p in parts)
		shown = "".join(p if isinstance(p, str) else self.c(p[0], p[1]) for p in parts)
		print(shown, flush=True)
		self.log.write(plain + "\n")
		self.log.flush()

	def wrap(self, text, indent, first_width):
		"""Fold a long reason to the terminal's width (tty only)."""
		if not self.width or len(text) <= self.width - first_width:
			return [text]
		room = max(self.width - indent, 40)
		first = textwrap.wrap(text, max(self.width - first_width, 30))
		rest = textwrap.wrap(" ".join(first[1:]), room)
		return [first[0]] + rest


# --- the database ---------------------------------------------------------------

class Db:
	"""One psql session.  value() sends a statement and reads its output up
	to a marker; rows() answers a query as a list of dicts, in order."""

	MARK = "__fairshare_demo_end__"

	def __init__(self, command):
		self.proc = subprocess.Popen(command + ["-At", "-v", "ON_ERROR_STOP=0"],
									 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
									 stderr=subprocess.STDOUT)
		self.buf = b""
		self.value("SET statement_timeout = '20s'")
		self.value("SET application_name = 'fairshare-demo'")

	def close(self):
		try:
			self.proc.stdin.close()
			self.proc.wait(timeout=5)
		except Exception:
			self.proc.kill()

	def _readline(self, deadline):
		while b"\n" not in self.buf:
			left = deadline - time.monotonic()
			if left <= 0:
				raise DemoError("psql did not answer within 30 s")
			ready, _, _ = select.select([self.proc.stdout], [], [], left)
			if ready:
				chunk = os.read(self.proc.stdout.fileno(), 65536)
				if not chunk:
					raise DemoError("psql exited: " + self.buf.decode(errors="replace"))
				self.buf += chunk
		line, self.buf = self.buf.split(b"\n", 1)
		return line.decode()

	def value(self, sql):
		"""Run one statement; its output lines (psql -At) joined by newlines."""
		self.proc.stdin.write((sql.rstrip().rstrip(";") + ";\n\\echo " + self.MARK + "\n").encode())
		self.proc.stdin.flush()
		deadline = time.monotonic() + 30
		lines, errors = [], []
		while True:
			line = self._readline(deadline)
			if line == self.MARK:
				break
			# psql prefixes its own messages (errors, notices) with psql:<stdin>:N:
			if line.startswith("psql:"):
				errors.append(line)
			elif errors and not lines:
				errors.append(line)		# DETAIL/HINT lines of an error
			else:
				lines.append(line)
		bad = [e for e in errors if "ERROR:" in e or "FATAL:" in e]
		if bad:
			raise DemoError("query failed: " + " ".join(errors) + "\n  statement: " + sql.strip()[:400])
		return "\n".join(lines)

	def rows(self, sql):
		text = self.value("SELECT translate(coalesce(json_agg(demo_row), '[]')::text, E'\\n', ' ') FROM (\n"
						  + sql + "\n) demo_row")
		return json.loads(text)

	def one(self, sql):
		r = self.rows(sql)
		return r[0] if r else None


def ordered(obj, keys):
	"""A jsonb object as "key value, ...": the given keys first, in that order."""
	rest = [k for k in obj if k not in keys]
	return ", ".join(f"{k} {obj[k]}" for k in list(keys) + rest if k in obj)


def lit(s):
	"""A SQL string literal."""
	return "'" + str(s).replace("'", "''") + "'"


# --- the story's world ----------------------------------------------------------------

class Story:
	def __init__(self, args):
		self.args = args
		os.makedirs(args.out, exist_ok=True)
		self.out = Out(os.path.join(args.out, "timeline.txt"))
		self.db = Db(args.psql)
		self.t0 = float(self.db.value("SELECT extract(epoch FROM clock_timestamp())"))
		self.last_event = 0
		self.seen_stops = set()		# (training_job_name, 'requested' | 'sent')
		self.seen_nominations = set()
		self.samples = []			# (t, {(env, queue, share): held})
		self.markers = []			# (t, env, queue, share, instances, label)
		self.series = self.db.rows(
			"SELECT qe.service_environment AS env, q.name AS queue, s.share"
			"  FROM fairshare.job_queues q"
			"  JOIN fairshare.queue_environments qe ON qe.job_queue = q.name"
			"  LEFT JOIN fairshare.scheduling_policies p ON p.name = q.scheduling_policy"
			"  CROSS JOIN LATERAL ("
			"	SELECT name AS share, 1 AS o FROM fairshare.quota_shares WHERE job_queue = q.name"
			"	UNION ALL SELECT share_identifier, 2 FROM fairshare.share_distribution d"
			"	 WHERE d.scheduling_policy = q.scheduling_policy AND p.kind = 'FAIR_SHARE'"
			"	UNION ALL SELECT q.name, 3 WHERE p.kind IS NULL) s"
			" ORDER BY qe.service_environment, q.name, s.o, s.share")

	# -- time and lines

	def rel(self, epoch):
		return f"+{epoch - self.t0:6.1f}s"

	def at(self, epoch):
		"""The same, short, inside a sentence."""
		return f"+{epoch - self.t0:.1f}s"

	def now(self):
		return self.rel(time.time())

	def section(self, title, *lines):
		self.out.line("")
		self.out.line(("bold cyan", f"{self.now()}  == {title}"))
		for text in lines:
			self.out.line(("cyan", "           " + text))

	def note(self, text):
		first, *rest = self.out.wrap(text, 11, 11)
		self.out.line(("dim", self.now()), "  ", ("", first))
		for more in rest:
			self.out.line(" " * 11 + more)

	def event_line(self, t, who, verb, verb_style, reason=""):
		head = f"{self.rel(t)}  {who:<28} "
		parts = [("dim", self.rel(t)), "  ", ("", f"{who:<28} "), (verb_style, f"{verb:<10}")]
		if reason:
			first, *rest = self.out.wrap(reason, len(head) + 11, len(head) + 11)
			parts += [" ", ("", first)]
			self.out.line(*parts)
			for more in rest:
				self.out.line(" " * (len(head) + 11) + more)
		else:
			self.out.line(*parts)

	# -- polling

	def tick(self):
		"""One poll: print what happened since the last one, and sample."""
		r = json.loads(self.db.value(f"""
			SELECT translate(json_build_object(
			  'now', extract(epoch FROM clock_timestamp()),
			  'events', (SELECT coalesce(json_agg(e ORDER BY e.event_id), '[]') FROM (
				  SELECT e.event_id, extract(epoch FROM e.at) AS t, e.job_id, j.job_name, j.job_queue,
						 coalesce(j.quota_share, j.share_identifier) AS share, j.instance_count,
						 e.old_status, e.new_status, e.reason, a.training_job_name, a.instance_type,
						 extract(epoch FROM j.runnable_at) AS runnable_at
					FROM fairshare.job_events e
					JOIN fairshare.jobs j ON j.job_id = e.job_id
					LEFT JOIN fairshare.job_attempts a ON a.job_id = j.job_id AND a.attempt = j.attempts
				   WHERE e.event_id > {self.last_event}) e),
			  'stops', (SELECT coalesce(json_agg(s), '[]') FROM (
				  SELECT j.job_id, j.job_name, j.job_queue, coalesce(j.quota_share, j.share_identifier) AS share,
						 j.instance_count, j.training_job_name, j.stop_kind, j.stop_reason,
						 extract(epoch FROM j.stop_requested_at) AS requested, extract(epoch FROM j.stop_sent_at) AS sent,
						 j.service_environment, f.job_name AS for_job
					FROM fairshare.jobs j LEFT JOIN fairshare.jobs f ON f.job_id = j.preempted_for
				   WHERE j.stop_kind IS NOT NULL AND j.status IN {HELD}) s),
			  'nominations', (SELECT coalesce(json_agg(n), '[]') FROM (
				  SELECT job_id, job_name, job_queue, coalesce(quota_share, share_identifier) AS share, instance_count,
						 nomination_kind, extract(epoch FROM nominated_at) AS t, status_reason
					FROM fairshare.jobs WHERE status = 'RUNNABLE' AND nomination_kind IS NOT NULL) n),
			  'held', (SELECT coalesce(json_agg(h), '[]') FROM (
				  SELECT service_environment AS env, job_queue AS queue,
						 coalesce(quota_share, share_identifier, job_queue) AS share, sum(instance_count) AS n
					FROM fairshare.jobs WHERE status IN {HELD} GROUP BY 1, 2, 3) h)
			)::text, E'\\n', ' ')"""))
		items = []
		for e in r["events"]:
			self.last_event = max(self.last_event, e["event_id"])
			items.append((e["t"], 0, e["event_id"], "event", e))
		for s in r["stops"]:
			key = (s["training_job_name"], "requested")
			if key not in self.seen_stops:
				self.seen_stops.add(key)
				items.append((s["requested"], 1, s["job_id"], "stop", s))
			key = (s["training_job_name"], "sent")
			if s["sent"] is not None and key not in self.seen_stops:
				self.seen_stops.add(key)
				items.append((s["sent"], 2, s["job_id"], "sent", s))
		for n in r["nominations"]:
			key = (n["job_id"], n["t"])
			if key not in self.seen_nominations:
				self.seen_nominations.add(key)
				items.append((n["t"], 1, n["job_id"], "nomination", n))
		for t, _, _, kind, x in sorted(items, key=lambda i: i[:3]):
			getattr(self, "show_" + kind)(t, x)
		self.samples.append((r["now"], {(h["env"], h["queue"], h["share"]): h["n"] for h in r["held"]}))

	@staticmethod
	def who(x):
		share = x.get("share") or x["job_queue"]
		return f"{share:<8} {x['job_name']}#{x['job_id']} ({x['instance_count']})"

	def show_event(self, t, e):
		old, new, reason = e["old_status"], e["new_status"], e["reason"] or ""
		# Entering the queue and SageMaker's Starting are left out unless
		# --verbose: the INSERT and the placement say as much.
		if not self.args.verbose and (new == "STARTING" or (old == "SUBMITTED" and new == "RUNNABLE")):
			return
		if new == "SCHEDULED":
			borrow = " borrows " in reason
			self.event_line(t, self.who(e), "BORROWS" if borrow else "placed", "yellow bold" if borrow else "green",
							reason)
		elif new == "RUNNING":
			self.event_line(t, self.who(e), "running", "dim",
							f"SageMaker: {e['training_job_name']} Training on {e['instance_count']} x {e['instance_type']}")
		elif new == "SUCCEEDED":
			self.event_line(t, self.who(e), "succeeded", "blue", f"SageMaker: {e['training_job_name']} Completed")
		elif new == "RUNNABLE" and old in ("SCHEDULED", "STARTING", "RUNNING"):
			self.event_line(t, self.who(e), "requeued", "red bold",
							f"{reason}; back to RUNNABLE, runnable_at kept at {self.at(e['runnable_at'])}")
		elif new == "FAILED":
			self.event_line(t, self.who(e), "FAILED", "red bold", reason)
		elif old == "SUBMITTED" and new == "RUNNABLE":
			self.event_line(t, self.who(e), "queued", "dim", reason or "SUBMITTED -> RUNNABLE")
		elif new == "STARTING":
			self.event_line(t, self.who(e), "starting", "dim",
							f"SageMaker: {e['training_job_name']} is launching or downloading")
		else:
			self.event_line(t, self.who(e), new.lower(), "dim", f"{old} -> {new}" + (f": {reason}" if reason else ""))

	def show_stop(self, t, s):
		label = {"PREEMPT": "PREEMPT", "TERMINATE": "terminate", "TIMEOUT": "timeout"}[s["stop_kind"]]
		self.event_line(t, self.who(s), label, "red bold", s["stop_reason"])
		if s["stop_kind"] == "PREEMPT":
			kind = "reclaim" if "reclaim" in (s["stop_reason"] or "") else "in-share"
			self.markers.append((t, s["service_environment"], s["job_queue"], s["share"], s["instance_count"],
								 f"{kind}: {s['job_name']} for {s['for_job']}"))

	def show_sent(self, t, s):
		stats = self.emulator("GET", "/_emulator/stats?jobs=0")
		stops = stats.get("stops") or {}
		self.event_line(t, self.who(s), "stop sent", "magenta",
						f"StopTrainingJob {s['training_job_name']}; the emulator has received "
						f"{stats.get('calls', {}).get('StopTrainingJob', 0)} StopTrainingJob call(s) "
						f"for {len(stops)} training job(s): {', '.join(sorted(stops))}")

	def show_nomination(self, t, n):
		self.event_line(t, self.who(n), "nominated", "yellow", n["status_reason"])

	def sagemaker_view(self, name):
		"""What the emulator knows of one training job: the request the
		dispatcher sent (with the name, type and count it chose) and the
		phases so far."""
		j = self.emulator("GET", f"/_emulator/jobs/{name}")
		req = (j.get("_emulator") or {}).get("request") or {}
		phases = ", ".join(f"{p['Status']} {p['EndTime'] - p['StartTime']:.1f}s" if p.get("EndTime") else p["Status"]
						   for p in j.get("SecondaryStatusTransitions") or [])
		self.note(f"the emulator's view of {name}: {j['TrainingJobStatus']}/{j['SecondaryStatus']} ({phases}); "
				  f"it was sent ResourceConfig {json.dumps(req.get('ResourceConfig'))}, "
				  f"Tags {json.dumps(req.get('Tags'))}, RoleArn {req.get('RoleArn')}")

	def emulator(self, method, path):
		try:
			p = subprocess.run([sys.executable, self.args.emuctl, str(self.args.emulator_port), method, path],
							   capture_output=True, text=True, timeout=15)
		except subprocess.TimeoutExpired:
			raise DemoError(f"the emulator did not answer {method} {path} within 15 s")
		if p.returncode != 0:
			raise DemoError(f"the emulator refused {method} {path}: {p.stderr.strip()}")
		return json.loads(p.stdout)

	# -- waiting

	def wait(self, what, cond_sql, timeout=40, show=None):
		"""Poll (printing events) until cond_sql is true; fail after timeout."""
		deadline = time.monotonic() + timeout
		while True:
			self.tick()
			if self.db.value(f"SELECT ({cond_sql})::boolean") == "t":
				return
			if time.monotonic() > deadline:
				state = self.db.value(show) if show else ""
				raise DemoError(f"{what} did not happen within {timeout} s" + (f"; now: {state}" if state else ""))
			time.sleep(POLL)

	def pause(self, seconds):
		"""Keep printing events for a while."""
		end = time.monotonic() + seconds
		while time.monotonic() < end:
			self.tick()
			time.sleep(POLL)

	@staticmethod
	def states(queue):
		"""The jobs of a queue and their states, for a failure message (SQL)."""
		return (f"SELECT string_agg(job_name || ':' || status, ' ' ORDER BY job_id) FROM fairshare.jobs"
				f" WHERE job_queue = {lit(queue)}")

	def held(self, queue):
		"""Instances each share of a queue holds, e.g. 'ProdExp1=75 ProdExp2=25' (SQL)."""
		return (f"(SELECT coalesce(string_agg(s || '=' || n, ' ' ORDER BY s), '') FROM ("
				f" SELECT coalesce(quota_share, share_identifier, job_queue) s, sum(instance_count) n"
				f"   FROM fairshare.jobs WHERE job_queue = {lit(queue)} AND status = 'RUNNING' GROUP BY 1) x)")

	# -- submitting

	def submit(self, queue, jobs, note=""):
		"""INSERT jobs, each (name, share, priority, instance type, count,
		hyperparameters); print the statement in short and the job ids."""
		kind = self.db.value(f"SELECT coalesce(p.kind, 'FIFO') FROM fairshare.job_queues q "
							 f"LEFT JOIN fairshare.scheduling_policies p ON p.name = q.scheduling_policy "
							 f"WHERE q.name = {lit(queue)}")
		col = {"QUOTA_SHARE": "quota_share", "FAIR_SHARE": "share_identifier"}.get(kind)
		values = []
		for name, share, prio, itype, count, hyper in jobs:
			values.append(f"({lit(name)}, {lit(share) if col else 'NULL'}, {prio}, {lit(itype)}, {count}, "
						  f"{lit(json.dumps(hyper))}::jsonb)")
		cols = "job_name, job_queue, " + (col + ", " if col else "") + "scheduling_priority, request"
		sql = (f"WITH ins AS (INSERT INTO fairshare.jobs ({cols})\n"
			   f"SELECT v.name, {lit(queue)}, " + ("v.share, " if col else "") + "v.prio,\n"
			   "  jsonb_build_object('RoleArn', 'arn:aws:iam::123456789012:role/SageMakerRole',\n"
			   "	'AlgorithmSpecification', jsonb_build_object('TrainingImage', "
			   "CASE WHEN v.itype LIKE 'ml.c%' THEN '683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3'"
			   " ELSE '763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu-py311' END,"
			   " 'TrainingInputMode', 'File'),\n"
			   "	'OutputDataConfig', jsonb_build_object('S3OutputPath', 's3://demo-bucket/' || v.name),\n"
			   "	'ResourceConfig', jsonb_build_object('InstanceType', v.itype, 'InstanceCount', v.n, 'VolumeSizeInGB', 100),\n"
			   "	'StoppingCondition', jsonb_build_object('MaxRuntimeInSeconds', 86400),\n"
			   "	'HyperParameters', v.hyper)\n"
			   "FROM (VALUES " + ",\n  ".join(values) + ") AS v(name, share, prio, itype, n, hyper)\n"
			   "RETURNING job_id, job_name)\n"
			   "SELECT translate(json_agg(ins ORDER BY job_id)::text, E'\\n', ' ') FROM ins")
		ids = json.loads(self.db.value(sql))
		insert = ("bold", f"INSERT INTO fairshare.jobs ({cols}) VALUES")
		if note:
			self.out.line(("dim", self.now()), "  ", ("dim", f"-- {note}"))
			self.out.line(" " * 11, insert)
		else:
			self.out.line(("dim", self.now()), "  ", insert)
		by_name = {i["job_name"]: i["job_id"] for i in ids}
		for k, (name, share, prio, itype, count, hy) in enumerate(jobs):
			self.out.line(" " * 11, ("bold", f"  ({lit(name)}, {lit(queue)}, " + (f"{lit(share)}, " if col else "")
										+ f"{prio}, <request: {count} x {itype}>)" + ("," if k + 1 < len(jobs) else ";")),
						  ("dim", f"  -> job_id {by_name[name]}, trains {int(hy['emulator_training_seconds']) // 60} min"))
		return by_name

	# -- tables

	def table(self, title, sql, columns=None):
		rows = self.db.rows(sql)
		self.out.line(("dim", self.now()), "  ", ("bold", title))
		if not rows:
			self.out.line(" " * 11 + "(no rows)")
			return rows
		cols = columns or list(rows[0].keys())

		def cell(v):
			if v is None:
				return ""
			if isinstance(v, float) and v.is_integer():
				return str(int(v))
			return str(v)
		width = {c: max(len(c), *(len(cell(r[c])) for r in rows)) for c in cols}
		numeric = {c: all(isinstance(r[c], (int, float)) or r[c] is None for r in rows) for c in cols}

		def fmt(values):
			parts = [(cell(v).rjust(width[c]) if numeric[c] else cell(v).ljust(width[c])) for c, v in values]
			return " " * 11 + "  ".join(parts).rstrip()
		self.out.line(("dim", fmt([(c, c) for c in cols])))
		# On a terminal, a long text in the last column (a pending reason)
		# folds under itself instead of running past the edge.
		last_at = 11 + sum(width[c] + 2 for c in cols[:-1])
		for r in rows:
			text = fmt([(c, r[c]) for c in cols])
			if self.out.width and len(text) > self.out.width and not numeric[cols[-1]]:
				first, *rest = self.out.wrap(cell(r[cols[-1]]), last_at, last_at)
				self.out.line(text[:last_at] + first)
				for more in rest:
					self.out.line(" " * last_at + more)
			else:
				self.out.line(text)
		return rows

	def snapshot(self, queue):
		return self.table(f"SELECT ... FROM fairshare.queue_snapshot({lit(queue)});  -- the order the scheduler would place them",
						  f"SELECT position, job_id, job_name, share, scheduling_priority AS prio, pending_reason "
						  f"FROM fairshare.queue_snapshot({lit(queue)})")

	def utilisation(self, envs=None):
		where = f" WHERE service_environment IN ({', '.join(lit(e) for e in envs)})" if envs else ""
		self.table("SELECT ... FROM fairshare.environment_utilization;",
				   "SELECT service_environment, capacity_unit, capacity, in_use, stopping, nominated, free,"
				   " round(100 * utilization, 1) AS \"util %\", running_jobs, waiting_jobs, waiting_instances"
				   f" FROM fairshare.environment_utilization{where} ORDER BY 1, 2")

	def quota_shares(self):
		self.table("SELECT ... FROM fairshare.quota_share_status;",
				   "SELECT job_queue, quota_share, strategy, share_limit, max_share, held, borrowed, lent,"
				   " waiting_jobs, waiting_instances, oldest_wait_seconds AS oldest_wait_s"
				   " FROM fairshare.quota_share_status ORDER BY 1, 2")

	def fair_shares(self):
		self.table("SELECT ... FROM fairshare.fair_share_status;",
				   "SELECT job_queue, share_identifier, weight_factor AS weight, round(decayed_usage::numeric, 1) AS usage,"
				   " held, running_jobs, waiting_jobs, waiting_instances"
				   " FROM fairshare.fair_share_status ORDER BY 1, weight_factor")

	def explain(self, job_id):
		x = json.loads(self.db.value(f"SELECT fairshare.explain({job_id})::text"))
		ind = " " * 11
		self.out.line(("dim", self.now()), "  ", ("bold", f"SELECT fairshare.explain({job_id});"),
					  ("", "  -- why is my job not running?"))
		self.out.line(ind, ("bold", f"{x['job_name']}#{x['job_id']}"),
					  f"  {x['job_queue']}/{x.get('share') or '-'}, priority {x['scheduling_priority']}, "
					  f"{x['instance_count']} x {'|'.join(x['instance_types'])}, status {x['status']}, "
					  f"{x['attempts']} attempt(s), {x['preemptions']} preemption(s)")
		self.out.line(ind, ("yellow", "summary   "), x["summary"])
		if "position" in x:
			ahead = x.get("ahead") or []
			self.out.line(ind, ("yellow", "position  "),
						  f"{x['position']} in the queue; {x.get('jobs_ahead_in_share', 0)} job(s) ahead of it in its share"
						  + (": " + ", ".join(f"#{a}" for a in ahead) if ahead else ""))
		b = x.get("blocked_by")
		if b:
			self.out.line(ind, ("yellow", "blocked by"), " " + ordered(b, (
				"kind", "service_environment", "instance_type", "needed", "limit", "in_use", "held_for_others",
				"reserved", "free", "held_for_job")))
		s = x.get("share_state")
		if s:
			self.out.line(ind, ("yellow", "its share "), " " + ordered(s, ("held", "limit", "weight", "usage")))
		n = x.get("nomination")
		if n:
			n = dict(n, since=self.at(self.epoch(n["since"]))) if "since" in n else n
			self.out.line(ind, ("yellow", "nominated "), " " + ordered(n, (
				"kind", "service_environment", "instance_type", "since")))
		for e in x.get("recent_events") or []:
			self.out.line(ind, ("yellow", "history   "),
						  f" {self.at(self.epoch(e['at']))}  {e.get('from')} -> {e['to']}"
						  + (f": {e['reason']}" if e.get("reason") else ""))

	def epoch(self, ts):
		return float(self.db.value(f"SELECT extract(epoch FROM {lit(ts)}::timestamptz)"))

	# -- the end

	def write_samples(self):
		path = os.path.join(self.args.out, "shares.csv")
		with open(path, "w", newline="", encoding="utf-8") as f:
			w = csv.writer(f)
			w.writerow(["kind", "t", "environment", "queue", "share", "value", "label"])
			for c in self.db.rows("SELECT service_environment, capacity_unit, max_capacity FROM fairshare.capacity_limits"
								  " ORDER BY 1, 2"):
				w.writerow(["capacity", "", c["service_environment"], "", c["capacity_unit"], c["max_capacity"], ""])
			for l in self.db.rows("SELECT qe.service_environment, l.job_queue, l.quota_share, l.max_capacity"
								  "  FROM fairshare.quota_share_limits l"
								  "  JOIN fairshare.queue_environments qe ON qe.job_queue = l.job_queue ORDER BY 1, 2, 3"):
				w.writerow(["limit", "", l["service_environment"], l["job_queue"], l["quota_share"], l["max_capacity"], ""])
			# Every share of the setup, and any other that held instances.
			series = [(s["env"], s["queue"], s["share"]) for s in self.series]
			series += sorted({k for _, held in self.samples for k in held} - set(series))
			for t, held in self.samples:
				for key in series:
					w.writerow(["held", f"{t - self.t0:.3f}", *key, held.get(key, 0), ""])
			for t, env, queue, share, n, label in self.markers:
				w.writerow(["marker", f"{t - self.t0:.2f}", env, queue, share, n, label])
			for a in self.db.rows("SELECT extract(epoch FROM a.created_at) AS t, a.service_environment, a.job_queue,"
								  " a.share, a.instance_count, j.job_name FROM fairshare.job_attempts a"
								  " JOIN fairshare.jobs j USING (job_id) ORDER BY a.created_at, a.job_id"):
				w.writerow(["placed", f"{a['t'] - self.t0:.2f}", a["service_environment"], a["job_queue"],
							a["share"] or a["job_queue"], a["instance_count"], a["job_name"]])
		return path


# --- the story --------------------------------------------------------------------

def hyper(train_minutes, start_minutes=3, stop_minutes=4):
	"""Emulator timeline of one job, in real minutes (the emulator's
	--time-scale compresses them): startup (Starting, Downloading), training,
	uploading, and how long a stop takes."""
	return {"emulator_starting_seconds": str(start_minutes * 60 * 2 // 3),
			"emulator_downloading_seconds": str(start_minutes * 60 // 3),
			"emulator_training_seconds": str(train_minutes * 60),
			"emulator_uploading_seconds": "60",
			"emulator_stopping_seconds": str(stop_minutes * 60)}


def tell(st):
	scale = st.args.time_scale
	P4, G5, C5 = "ml.p4d.24xlarge", "ml.g5.12xlarge", "ml.c5.xlarge"

	st.section("The reference setup, as the dashboards see it before any job",
			   "(created by demo/setup.sql, plain INSERTs into fairshare's tables)")
	st.table("SELECT ... FROM fairshare.queue_status;",
			 "SELECT job_queue, kind, scheduling_policy, priority, state,"
			 " (SELECT string_agg(service_environment, ', ') FROM fairshare.queue_environments e WHERE e.job_queue = s.job_queue) AS environments"
			 " FROM fairshare.queue_status s ORDER BY priority DESC, job_queue")
	st.utilisation()
	st.quota_shares()
	st.table("SELECT ... FROM fairshare.share_distribution;  -- lower weight = larger share",
			 "SELECT scheduling_policy, share_identifier, weight_factor FROM fairshare.share_distribution ORDER BY weight_factor")
	st.table("the settings the dispatcher runs with (pg_settings)",
			 "SELECT name, setting || coalesce(unit, '') AS setting FROM pg_settings WHERE name IN"
			 " ('fairshare.endpoint_url', 'fairshare.region', 'fairshare.poll_interval', 'fairshare.api_rate_limit',"
			 "  'fairshare.preemption_min_runtime', 'fairshare.starvation_seconds', 'fairshare.database') ORDER BY name")
	st.note(f"the SageMaker emulator runs with --time-scale {scale}: one minute of a job's timeline "
			f"(its emulator_*_seconds hyperparameters) passes in {60 * scale:g} s")
	st.note("timeline lines: seconds since the start, share, job_name#job_id (instances), what happened, and why: "
			"the reason the dispatcher wrote (fairshare.job_events.reason, jobs.stop_reason, jobs.status_reason)")

	# 1. borrow ---------------------------------------------------------------
	st.section("1. ProdExp2 runs 25 instances; ProdExp1 borrows the 15 ProdExp2 does not use",
			   "ProdExp2's guarantee is 40 (LEND), ProdExp1's is 60 (LEND_AND_BORROW); the environment has 100.")
	st.submit("p4-quota", [(f"pe2-train-{i}", "ProdExp2", 50, P4, 5, hyper(75)) for i in range(1, 6)],
			  "5 jobs of 5 instances, 75 min of training each")
	st.wait("ProdExp2 running 25 instances", f"{st.held('p4-quota')} = 'ProdExp2=25'", show=st.states("p4-quota"))
	st.sagemaker_view(st.db.value("SELECT training_job_name FROM fairshare.jobs ORDER BY job_id LIMIT 1"))
	st.submit("p4-quota", [("pe1-a", "ProdExp1", 80, P4, 15, hyper(120)),
						   ("pe1-b", "ProdExp1", 50, P4, 15, hyper(110)),
						   ("pe1-c", "ProdExp1", 30, P4, 15, hyper(100)),
						   ("pe1-d", "ProdExp1", 10, P4, 15, hyper(50)),
						   ("pe1-e", "ProdExp1", 10, P4, 15, hyper(50)),
						   ("pe1-f", "ProdExp1", 10, P4, 15, hyper(50))],
			  "a backlog of 6 x 15 = 90 instances")
	st.wait("ProdExp1 running 75 instances", f"{st.held('p4-quota')} = 'ProdExp1=75 ProdExp2=25'",
			show=st.states("p4-quota"))
	st.snapshot("p4-quota")
	st.quota_shares()

	# 2. reclaim --------------------------------------------------------------
	st.section("2. ProdExp2 submits 15 more instances: it is owed its guarantee of 40",
			   "ProdExp1 borrowed those 15, so the scheduler preempts 15 of ProdExp1's (a real StopTrainingJob)",
			   "and holds the room for ProdExp2's job while the victim stops.")
	late = st.submit("p4-quota", [(f"pe2-late-{i}", "ProdExp2", 50, P4, 5, hyper(80)) for i in range(1, 4)],
					 "3 jobs of 5 instances")
	st.wait("a nomination for ProdExp2's new job",
			f"EXISTS (SELECT 1 FROM fairshare.jobs WHERE job_queue = 'p4-quota' AND (nomination_kind IS NOT NULL"
			f" OR status IN {HELD} AND job_id IN ({', '.join(map(str, late.values()))})))", timeout=20,
			show=st.states("p4-quota"))
	nominated = st.db.value("SELECT job_id FROM fairshare.jobs WHERE status = 'RUNNABLE' AND nomination_kind IS NOT NULL"
							" ORDER BY job_id LIMIT 1")
	if nominated:
		st.explain(int(nominated))
		st.utilisation(["p4-reservation"])		# while the victim stops: stopping, nominated
	st.wait("ProdExp2 reaching 40 and ProdExp1 back to 60", f"{st.held('p4-quota')} = 'ProdExp1=60 ProdExp2=40'",
			show=st.states("p4-quota"))
	stats = st.emulator("GET", "/_emulator/stats?jobs=0")
	st.note(f"emulator counters: CreateTrainingJob {stats['calls'].get('CreateTrainingJob', 0)}, "
			f"StopTrainingJob {stats['calls'].get('StopTrainingJob', 0)}, "
			f"DescribeTrainingJob {stats['calls'].get('DescribeTrainingJob', 0)}; stops per training job: "
			f"{json.dumps(stats.get('stops') or {})}")
	st.quota_shares()

	# 3. in-share preemption --------------------------------------------------
	st.section("3. An urgent ProdExp1 job (priority 90, 15 instances) arrives",
			   "ProdExp1 is at its 60 and nothing is idle to borrow: in-share preemption stops",
			   "ProdExp1's lowest-priority job (then the most recently started).")
	urgent = st.submit("p4-quota", [("pe1-urgent", "ProdExp1", 90, P4, 15, hyper(60))])
	st.wait("the urgent job running", f"SELECT status = 'RUNNING' FROM fairshare.jobs WHERE job_id = {urgent['pe1-urgent']}",
			show=st.states("p4-quota"))
	st.snapshot("p4-quota")
	last = st.db.value("SELECT job_id FROM fairshare.queue_snapshot('p4-quota') ORDER BY position DESC LIMIT 1")
	if last:
		st.explain(int(last))
	st.utilisation(["p4-reservation"])

	# 4. fair share -----------------------------------------------------------
	st.section("4. Fair share on the research queue: 4 x ml.g5.12xlarge, weights HIGHPRI 1, MIDPRI 3, LOWPRI 5",
			   "Each pass serves the share with the lowest (usage + job) x weight.  The pool is busy;",
			   "a LOWPRI job and a MIDPRI job wait (LOWPRI submitted first), then a HIGHPRI job comes later.")
	st.submit("research", [("hp-warmup", "HIGHPRI", 0, G5, 4, hyper(12))])
	st.wait("hp-warmup running", "SELECT status = 'RUNNING' FROM fairshare.jobs WHERE job_name = 'hp-warmup'",
			show=st.states("research"))
	st.submit("research", [("lp-sweep", "LOWPRI", 0, G5, 4, hyper(8)),
						   ("mp-eval", "MIDPRI", 0, G5, 4, hyper(10))])
	st.pause(0.5)
	st.snapshot("research")
	st.fair_shares()
	st.wait("MIDPRI's job running first", "SELECT status = 'RUNNING' FROM fairshare.jobs WHERE job_name = 'mp-eval'",
			show=st.states("research"))
	st.submit("research", [("hp-ablation", "HIGHPRI", 0, G5, 4, hyper(8))], "HIGHPRI submits later than LOWPRI")
	st.pause(0.5)
	st.snapshot("research")

	# 5. FIFO -----------------------------------------------------------------
	st.section("5. The FIFO CPU queue: cpu-pool of 4 instances, 6 jobs of 2 x ml.c5.xlarge",
			   "They run in the order they were submitted, two at a time.")
	st.submit("cpu-fifo", [(f"etl-{i}", None, 0, C5, 2, hyper([6, 9, 5, 7, 6, 5][i - 1], start_minutes=2))
						   for i in range(1, 7)])
	st.pause(0.5)
	st.snapshot("cpu-fifo")
	st.wait("HIGHPRI's later job running before LOWPRI's",
			"SELECT status = 'RUNNING' FROM fairshare.jobs WHERE job_name = 'hp-ablation'",
			show=st.states("research"))
	lp = st.db.value("SELECT status FROM fairshare.jobs WHERE job_name = 'lp-sweep'")
	if lp != "RUNNABLE":
		raise DemoError(f"lp-sweep is {lp}, expected it still RUNNABLE while HIGHPRI's job runs")
	st.wait("every CPU job finished", "SELECT bool_and(status = 'SUCCEEDED') FROM fairshare.jobs WHERE job_queue = 'cpu-fifo'",
			timeout=60, show=st.states("cpu-fifo"))
	order = st.db.value("SELECT string_agg(job_name, ' ' ORDER BY scheduled_at, job_id) FROM fairshare.jobs"
						" WHERE job_queue = 'cpu-fifo'")
	st.note(f"CPU jobs in the order they were placed (jobs.scheduled_at): {order}")

	# 6. drain ----------------------------------------------------------------
	st.section("6. Nothing more is submitted: the backlog drains as training jobs finish",
			   "When ProdExp2's jobs end, ProdExp1 borrows the idle capacity again.")
	st.wait("ProdExp1 borrowing again", "SELECT held > share_limit FROM fairshare.quota_share_status WHERE quota_share = 'ProdExp1'",
			timeout=90, show=st.states("p4-quota"))
	st.quota_shares()
	st.utilisation()
	st.wait("every job finished", "SELECT bool_and(status IN ('SUCCEEDED', 'FAILED')) FROM fairshare.jobs", timeout=150,
			show="SELECT string_agg(job_name || ':' || status, ' ') FROM fairshare.jobs WHERE status NOT IN ('SUCCEEDED', 'FAILED')")
	st.pause(0.5)

	st.section("The end: what happened, from the database and the emulator")
	st.table("jobs by queue and outcome (fairshare.jobs)",
			 "SELECT job_queue, status, count(*) AS jobs, sum(attempts) AS attempts, sum(preemptions) AS preemptions"
			 " FROM fairshare.jobs GROUP BY 1, 2 ORDER BY 1, 2")
	st.table("preempted attempts (fairshare.job_attempts)",
			 "SELECT a.training_job_name, j.job_name, a.share, a.instance_count AS n, a.outcome, a.status_reason"
			 " FROM fairshare.job_attempts a JOIN fairshare.jobs j USING (job_id) WHERE a.outcome = 'PREEMPTED' ORDER BY a.created_at")
	stats = st.emulator("GET", "/_emulator/stats?jobs=0")
	st.note(f"emulator: {stats['calls'].get('CreateTrainingJob', 0)} CreateTrainingJob calls for "
			f"{len(stats.get('creates') or {})} training jobs ({len(stats.get('duplicate_creates') or {})} refused as "
			f"duplicates); "
			f"{stats['calls'].get('StopTrainingJob', 0)} StopTrainingJob; "
			f"{stats['calls'].get('DescribeTrainingJob', 0)} DescribeTrainingJob; "
			f"jobs by SageMaker status {json.dumps(stats.get('job_counts') or {})}")
	hist = st.db.value("SELECT count(*) || ' rows at ' || count(DISTINCT sampled_at) || ' minute(s)'"
					   " FROM fairshare.utilization_history")
	st.note(f"pg_cron's minute-by-minute fairshare.utilization_history has {hist} so far "
			f"(fairshare:*:record_utilization, scheduled by CREATE EXTENSION)")


def main():
	ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
	ap.add_argument("--emulator-port", type=int, required=True)
	ap.add_argument("--emuctl", required=True)
	ap.add_argument("--out", required=True)
	ap.add_argument("--time-scale", type=float, required=True)
	ap.add_argument("--verbose", action="store_true", help="print every state change")
	ap.add_argument("psql", nargs=argparse.REMAINDER)
	args = ap.parse_args()
	if args.psql and args.psql[0] == "--":
		args.psql = args.psql[1:]
	st = None
	try:
		st = Story(args)
		tell(st)
		st.write_samples()
		return 0
	except DemoError as e:
		print(f"\ndemo failed: {e}", file=sys.stderr)
		if st:
			try:
				st.write_samples()	# the chart of what did happen
			except DemoError:
				pass
		return 1
	except KeyboardInterrupt:
		# Ctrl-C reaches us twice (from the terminal and through timeout);
		# leave quietly, run.sh cleans up.
		signal.signal(signal.SIGINT, signal.SIG_IGN)
		return 130
	finally:
		if st:
			st.db.close()


if __name__ == "__main__":
	sys.exit(main())
