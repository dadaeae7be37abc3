-- Nothing to do on PostgreSQL: the SQLite migration of this name stores the send path's tables
-- (event_edges, forward_extremities, event_txn_ids) WITHOUT ROWID, which PostgreSQL has no use for.
SELECT 1;
