#!/usr/bin/env bash
# demo/run.sh — the fairshare demo, from a fresh machine.
#
# Installs what is missing (apt), builds and installs the extension, starts
# a throwaway PostgreSQL cluster (as the postgres user, 127.0.0.1 only),
# creates the reference setup of the design (a P4 environment of 100
# instances; quota shares ProdExp1 (60) and ProdExp2 (40); a fair-share queue
# with HIGHPRI/MIDPRI/LOWPRI at weights 1/3/5; a FIFO CPU queue), submits
# jobs with INSERT and shows the catalog and the queue.  Everything it
# starts is stopped and removed at the end.
#
# Usage: bash demo/run.sh
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib/setup.sh"
. "$top/test/lib/cluster.sh"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Building and installing fairshare"
fs_setup "$top"
work=$(mktemp -d /tmp/fairshare-demo.XXXXXX); chmod 755 "$work"
trap 'fs_cluster_stop "$work/cluster" immediate; rm -rf "$work"' EXIT
fs_cluster_init "$work/cluster" "fairshare.database = 'demo'" >/dev/null
fs_cluster_start "$work/cluster"
fs_psql "$work/cluster" -c "CREATE DATABASE demo" >/dev/null
sql() { fs_psql "$work/cluster" -d demo "$@"; }

say "The reference setup (design 2.7), created with plain SQL"
sql -e <<'SQL'
CREATE EXTENSION fairshare;
INSERT INTO fairshare.service_environments (name) VALUES ('p4-reservation'), ('cpu-pool');
INSERT INTO fairshare.capacity_limits VALUES
	('p4-reservation', 'ml.p4d.24xlarge', 100), ('cpu-pool', 'NUM_INSTANCES', 20);
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('prod-quota', 'QUOTA_SHARE');
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('research', 'FAIR_SHARE');
INSERT INTO fairshare.share_distribution VALUES ('research', 'HIGHPRI', 1), ('research', 'MIDPRI', 3), ('research', 'LOWPRI', 5);
INSERT INTO fairshare.job_queues (name, priority, scheduling_policy) VALUES
	('p4-quota', 10, 'prod-quota'), ('p4-research', 5, 'research');
INSERT INTO fairshare.job_queues (name, priority) VALUES ('cpu-fifo', 1);
INSERT INTO fairshare.queue_environments VALUES
	('p4-quota', 'p4-reservation', 1), ('p4-research', 'p4-reservation', 1), ('cpu-fifo', 'cpu-pool', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy, in_share_preemption) VALUES
	('p4-quota', 'ProdExp1', 'LEND_AND_BORROW', true), ('p4-quota', 'ProdExp2', 'LEND', false);
INSERT INTO fairshare.quota_share_limits VALUES
	('p4-quota', 'ProdExp1', 'ml.p4d.24xlarge', 60), ('p4-quota', 'ProdExp2', 'ml.p4d.24xlarge', 40);
SQL

say "Submitting jobs with INSERT"
sql -e <<'SQL'
INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, scheduling_priority, request)
SELECT 'sft-llama-' || i, 'p4-quota', 'ProdExp1', 50,
	   '{"RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole",
		 "AlgorithmSpecification": {"TrainingImage": "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3-gpu-py311", "TrainingInputMode": "File"},
		 "OutputDataConfig": {"S3OutputPath": "s3://demo-bucket/out"},
		 "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 15, "VolumeSizeInGB": 100},
		 "StoppingCondition": {"MaxRuntimeInSeconds": 86400}}'
  FROM generate_series(1, 5) i;
SQL

say "A bad submission is refused with a reason"
sql -c "INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('oops', 'p4-quota', '{\"RoleArn\": \"x\"}')" 2>&1 | sed 's/^/  /' || true

say "The jobs, as a submitter sees them"
sql -c "SELECT job_id, job_name, job_queue, quota_share, scheduling_priority, instance_types, instance_count, status FROM fairshare.jobs ORDER BY job_id"

say "Done; the throwaway cluster is removed"
