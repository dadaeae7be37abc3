-- Written by hand (SQLite only; Prisma's schema language cannot say it): the tables every event sent
-- writes to become WITHOUT ROWID tables, stored in their primary key's B-tree. A row written then
-- touches one B-tree instead of two (the rowid table and the primary key's index): fewer pages written
-- to the WAL at each commit. Keep WITHOUT ROWID when a later migration redefines these tables.

-- RedefineTables
CREATE TABLE "new_event_edges" (
    "event_id" TEXT NOT NULL,
    "prev_event_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,

    PRIMARY KEY ("event_id", "prev_event_id")
) WITHOUT ROWID;
INSERT INTO "new_event_edges" ("event_id", "prev_event_id", "room_id") SELECT "event_id", "prev_event_id", "room_id" FROM "event_edges";
DROP TABLE "event_edges";
ALTER TABLE "new_event_edges" RENAME TO "event_edges";
CREATE INDEX "event_edges_prev_event_id_idx" ON "event_edges"("prev_event_id");

-- RedefineTables
CREATE TABLE "new_forward_extremities" (
    "room_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,

    PRIMARY KEY ("room_id", "event_id")
) WITHOUT ROWID;
INSERT INTO "new_forward_extremities" ("room_id", "event_id") SELECT "room_id", "event_id" FROM "forward_extremities";
DROP TABLE "forward_extremities";
ALTER TABLE "new_forward_extremities" RENAME TO "forward_extremities";

-- RedefineTables
CREATE TABLE "new_event_txn_ids" (
    "user_id" TEXT NOT NULL,
    "device_key" TEXT NOT NULL,
    "txn_id" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL,

    PRIMARY KEY ("user_id", "device_key", "txn_id")
) WITHOUT ROWID;
INSERT INTO "new_event_txn_ids" ("user_id", "device_key", "txn_id", "request_hash", "event_id", "room_id", "created_ts") SELECT "user_id", "device_key", "txn_id", "request_hash", "event_id", "room_id", "created_ts" FROM "event_txn_ids";
DROP TABLE "event_txn_ids";
ALTER TABLE "new_event_txn_ids" RENAME TO "event_txn_ids";
