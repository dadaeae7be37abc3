-- AlterTable
ALTER TABLE "room_memberships" ADD COLUMN     "avatar_url" TEXT,
ADD COLUMN     "displayname" TEXT,
ADD COLUMN     "forgotten" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "sender" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "stream_ordering" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "rooms" (
    "room_id" TEXT NOT NULL,
    "room_version" TEXT NOT NULL,
    "creator" TEXT NOT NULL,
    "is_public" BOOLEAN NOT NULL DEFAULT false,
    "created_ts" BIGINT NOT NULL,

    CONSTRAINT "rooms_pkey" PRIMARY KEY ("room_id")
);

-- CreateTable
CREATE TABLE "events" (
    "stream_ordering" BIGINT NOT NULL,
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
    "txn_id" TEXT,

    CONSTRAINT "events_pkey" PRIMARY KEY ("stream_ordering")
);

-- CreateTable
CREATE TABLE "event_edges" (
    "event_id" TEXT NOT NULL,
    "prev_event_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,

    CONSTRAINT "event_edges_pkey" PRIMARY KEY ("event_id","prev_event_id")
);

-- CreateTable
CREATE TABLE "forward_extremities" (
    "room_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,

    CONSTRAINT "forward_extremities_pkey" PRIMARY KEY ("room_id","event_id")
);

-- CreateTable
CREATE TABLE "state_groups" (
    "id" BIGINT NOT NULL,
    "room_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "prev_group" BIGINT,
    "chain_length" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "state_groups_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "state_group_entries" (
    "state_group" BIGINT NOT NULL,
    "type" TEXT NOT NULL,
    "state_key" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,

    CONSTRAINT "state_group_entries_pkey" PRIMARY KEY ("state_group","type","state_key")
);

-- CreateTable
CREATE TABLE "current_state_events" (
    "room_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "state_key" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,

    CONSTRAINT "current_state_events_pkey" PRIMARY KEY ("room_id","type","state_key")
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

    CONSTRAINT "event_txn_ids_pkey" PRIMARY KEY ("user_id","device_key","txn_id")
);

-- CreateTable
CREATE TABLE "redactions" (
    "event_id" TEXT NOT NULL,
    "redacts" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,

    CONSTRAINT "redactions_pkey" PRIMARY KEY ("event_id")
);

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

-- Position allocators shared by every worker (SQLite has one writer and allocates in-process).
CREATE SEQUENCE "events_stream_seq";
CREATE SEQUENCE "state_group_id_seq";
