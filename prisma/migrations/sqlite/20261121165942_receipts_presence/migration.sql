-- CreateTable
CREATE TABLE "receipts" (
    "room_id" TEXT NOT NULL,
    "receipt_type" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "thread_id" TEXT NOT NULL DEFAULT '',
    "event_id" TEXT NOT NULL,
    "data" TEXT NOT NULL,
    "stream_id" BIGINT NOT NULL,

    PRIMARY KEY ("room_id", "receipt_type", "user_id", "thread_id")
);

-- CreateTable
CREATE TABLE "presence" (
    "user_id" TEXT NOT NULL PRIMARY KEY,
    "state" TEXT NOT NULL,
    "status_msg" TEXT,
    "last_active_ts" BIGINT NOT NULL,
    "last_user_sync_ts" BIGINT NOT NULL,
    "currently_active" BOOLEAN NOT NULL,
    "stream_id" BIGINT NOT NULL
);

-- CreateIndex
CREATE INDEX "receipts_room_id_stream_id_idx" ON "receipts"("room_id", "stream_id");

-- CreateIndex
CREATE INDEX "receipts_stream_id_idx" ON "receipts"("stream_id");

-- CreateIndex
CREATE INDEX "presence_stream_id_idx" ON "presence"("stream_id");
