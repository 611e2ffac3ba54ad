-- Autovacuum and fill factor of the tables that grow or churn fastest (docs/operations.md, "Growth").
--
-- PostgreSQL's defaults wait until 20 % of a table is dead (vacuum) or new (insert
-- vacuum), and 10 % changed (analyze): on a table of ten million rows that is two million
-- dead rows before a vacuum, and a month of new rows the planner has no statistics for.
-- These tables instead are vacuumed after 1-5 % and analyzed after 1-2 %, a fraction
-- that keeps each run short and the newest rows (the ones every list reads first) known.
-- The insert scale factor matters for the append-only tables: an insert-only table is
-- otherwise vacuumed only for wraparound, its pages never marked all-visible, so
-- index-only scans fall back to the heap and the eventual freeze reads everything at once.

-- Payments: inserted pending, updated once to paid, failed or expired. Status is indexed,
-- so those updates are never HOT and a fill factor below 100 would only waste space.
alter table payments set (
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.01
);

-- Payment attempts: updated on every status look-up (next_check_at is indexed: not HOT).
alter table payment_attempts set (
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.01
);

-- Webhook events: the outbox, append-only.
alter table webhook_events set (
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.01
);

-- Webhook deliveries: the most updated table (each claim, each attempt); fillfactor 70
-- (0005) keeps claims HOT, and a vacuum after 1 % dead returns that room to the pages.
alter table webhook_deliveries set (
  autovacuum_vacuum_scale_factor = 0.01,
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.02
);

-- Webhook attempts: append-only, one row per try.
alter table webhook_attempts set (
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.02
);

-- The ledger: transfers and the per-account history are append-only (a pending
-- transfer is closed by a second transfer, never updated).
alter table ledger_transfers set (
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.01
);
alter table ledger_operations set (
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.01
);

-- Idempotency records: inserted per write request and deleted in bulk when they expire;
-- each purge leaves a run of dead rows a prompt vacuum makes reusable.
alter table idempotency_records set (
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.02
);

-- Outgoing transfers: several updates per transfer; "short of funds" marks touch no
-- indexed column, so room left on the page lets them be HOT.
alter table crypto_outgoing_transfers set (
  fillfactor = 90,
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.02
);

-- Scanned blocks: one row per block (every 3 s on TRON), old ones deleted as the watcher prunes.
alter table crypto_scanned_blocks set (
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_insert_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.02
);
