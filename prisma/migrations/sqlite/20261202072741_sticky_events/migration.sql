-- AlterTable
ALTER TABLE "delayed_events" ADD COLUMN "sticky_duration_ms" BIGINT;

-- CreateTable
CREATE TABLE "sticky_events" (
    "stream_id" BIGINT NOT NULL PRIMARY KEY,
    "event_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,
    "event_stream_ordering" BIGINT NOT NULL,
    "sender" TEXT NOT NULL,
    "expires_at" BIGINT NOT NULL
);

-- CreateIndex
CREATE UNIQUE INDEX "sticky_events_event_id_key" ON "sticky_events"("event_id");

-- CreateIndex
CREATE INDEX "sticky_events_room_id_stream_id_idx" ON "sticky_events"("room_id", "stream_id");

-- CreateIndex
CREATE INDEX "sticky_events_expires_at_idx" ON "sticky_events"("expires_at");
