-- Hand-tuned: events.stream_ordering and state_groups.id are INTEGER PRIMARY KEY (SQLite's rowid itself,
-- one B-tree fewer per insert than Prisma's BIGINT PRIMARY KEY). Values are the same 64-bit integers.
-- CreateTable
CREATE TABLE "rooms" (
    "room_id" TEXT NOT NULL PRIMARY KEY,
    "room_version" TEXT NOT NULL,
    "creator" TEXT NOT NULL,
    "is_public" BOOLEAN NOT NULL DEFAULT false,
    "created_ts" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "events" (
    "stream_ordering" INTEGER NOT NULL PRIMARY KEY,
    "event_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "state_key" TEXT,
    "sender" TEXT NOT NULL,
    "depth" BIGINT NOT NULL,
    "origin_server_ts" BIGINT NOT NULL,
    "json" TEXT NOT NULL,
    "replaces_state" TEXT,
    "state_group" BIGINT NOT NULL,
    "outlier" BOOLEAN NOT NULL DEFAULT false,
    "rejected_reason" TEXT,
    "contains_url" BOOLEAN NOT NULL DEFAULT false,
    "txn_device_key" TEXT,
    "txn_id" TEXT
);

-- CreateTable
CREATE TABLE "event_edges" (
    "event_id" TEXT NOT NULL,
    "prev_event_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,

    PRIMARY KEY ("event_id", "prev_event_id")
);

-- CreateTable
CREATE TABLE "forward_extremities" (
    "room_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,

    PRIMARY KEY ("room_id", "event_id")
);

-- CreateTable
CREATE TABLE "state_groups" (
    "id" INTEGER NOT NULL PRIMARY KEY,
    "room_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "prev_group" BIGINT,
    "chain_length" INTEGER NOT NULL DEFAULT 0
);

-- CreateTable
CREATE TABLE "state_group_entries" (
    "state_group" BIGINT NOT NULL,
    "type" TEXT NOT NULL,
    "state_key" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,

    PRIMARY KEY ("state_group", "type", "state_key")
);

-- CreateTable
CREATE TABLE "current_state_events" (
    "room_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "state_key" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,

    PRIMARY KEY ("room_id", "type", "state_key")
);

-- CreateTable
CREATE TABLE "event_txn_ids" (
    "user_id" TEXT NOT NULL,
    "device_key" TEXT NOT NULL,
    "txn_id" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL,

    PRIMARY KEY ("user_id", "device_key", "txn_id")
);

-- CreateTable
CREATE TABLE "redactions" (
    "event_id" TEXT NOT NULL PRIMARY KEY,
    "redacts" TEXT NOT NULL,
    "room_id" TEXT NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_room_memberships" (
    "room_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "membership" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "sender" TEXT NOT NULL DEFAULT '',
    "displayname" TEXT,
    "avatar_url" TEXT,
    "stream_ordering" BIGINT NOT NULL DEFAULT 0,
    "forgotten" BOOLEAN NOT NULL DEFAULT false,

    PRIMARY KEY ("room_id", "user_id")
);
INSERT INTO "new_room_memberships" ("event_id", "membership", "room_id", "user_id") SELECT "event_id", "membership", "room_id", "user_id" FROM "room_memberships";
DROP TABLE "room_memberships";
ALTER TABLE "new_room_memberships" RENAME TO "room_memberships";
CREATE INDEX "room_memberships_user_id_membership_idx" ON "room_memberships"("user_id", "membership");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "events_event_id_key" ON "events"("event_id");

-- CreateIndex
CREATE INDEX "events_room_id_stream_ordering_idx" ON "events"("room_id", "stream_ordering");

-- CreateIndex
CREATE INDEX "event_edges_prev_event_id_idx" ON "event_edges"("prev_event_id");

-- CreateIndex
CREATE INDEX "state_groups_room_id_idx" ON "state_groups"("room_id");

-- CreateIndex
CREATE INDEX "redactions_redacts_idx" ON "redactions"("redacts");
