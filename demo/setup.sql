-- demo/setup.sql — the reference setup of the demo, in plain SQL, as an
-- admin would write it (docs/scheduling.md, 'Reference scenarios', and
-- demo/README.md).
--
--   p4-reservation  100 x ml.p4d.24xlarge
--     p4-quota      QUOTA_SHARE: ProdExp1 (60, LEND_AND_BORROW, in-share
--                   preemption), ProdExp2 (40, LEND)
--   g5-pool         4 x ml.g5.12xlarge
--     research      FAIR_SHARE: HIGHPRI 1, MIDPRI 3, LOWPRI 5 (lower weight =
--                   larger share)
--   cpu-pool        4 instances of any type (ml.c5.xlarge here)
--     cpu-fifo      no policy: FIFO

INSERT INTO fairshare.service_environments (name) VALUES ('p4-reservation'), ('g5-pool'), ('cpu-pool');
INSERT INTO fairshare.capacity_limits (service_environment, capacity_unit, max_capacity) VALUES
	('p4-reservation', 'ml.p4d.24xlarge', 100),
	('g5-pool', 'ml.g5.12xlarge', 4),
	('cpu-pool', 'NUM_INSTANCES', 4);

INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('p4-quota-policy', 'QUOTA_SHARE');
INSERT INTO fairshare.scheduling_policies (name, kind, share_decay_seconds) VALUES ('research-policy', 'FAIR_SHARE', 0);
INSERT INTO fairshare.share_distribution (scheduling_policy, share_identifier, weight_factor) VALUES
	('research-policy', 'HIGHPRI', 1), ('research-policy', 'MIDPRI', 3), ('research-policy', 'LOWPRI', 5);

INSERT INTO fairshare.job_queues (name, priority, scheduling_policy) VALUES
	('p4-quota', 10, 'p4-quota-policy'),
	('research', 10, 'research-policy'),
	('cpu-fifo', 1, NULL);
INSERT INTO fairshare.queue_environments (job_queue, service_environment, "order") VALUES
	('p4-quota', 'p4-reservation', 1), ('research', 'g5-pool', 1), ('cpu-fifo', 'cpu-pool', 1);

INSERT INTO fairshare.quota_shares (job_queue, name, strategy, in_share_preemption) VALUES
	('p4-quota', 'ProdExp1', 'LEND_AND_BORROW', true),
	('p4-quota', 'ProdExp2', 'LEND', false);
INSERT INTO fairshare.quota_share_limits (job_queue, quota_share, capacity_unit, max_capacity) VALUES
	('p4-quota', 'ProdExp1', 'ml.p4d.24xlarge', 60),
	('p4-quota', 'ProdExp2', 'ml.p4d.24xlarge', 40);
