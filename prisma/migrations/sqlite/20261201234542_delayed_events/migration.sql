-- CreateTable
CREATE TABLE "delayed_events" (
    "delay_id" TEXT NOT NULL PRIMARY KEY,
    "user_id" TEXT NOT NULL,
    "device_id" TEXT,
    "room_id" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "state_key" TEXT,
    "content" TEXT NOT NULL,
    "delay" BIGINT NOT NULL,
    "send_ts" BIGINT NOT NULL,
    "is_processed" BOOLEAN NOT NULL DEFAULT false
);

-- CreateTable
CREATE TABLE "delayed_event_txns" (
    "user_id" TEXT NOT NULL,
    "device_key" TEXT NOT NULL,
    "txn_id" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "delay_id" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL,

    PRIMARY KEY ("user_id", "device_key", "txn_id")
);

-- CreateIndex
CREATE INDEX "delayed_events_user_id_send_ts_idx" ON "delayed_events"("user_id", "send_ts");

-- CreateIndex
CREATE INDEX "delayed_events_send_ts_idx" ON "delayed_events"("send_ts");

-- CreateIndex
CREATE INDEX "delayed_events_room_id_event_type_state_key_idx" ON "delayed_events"("room_id", "event_type", "state_key");
