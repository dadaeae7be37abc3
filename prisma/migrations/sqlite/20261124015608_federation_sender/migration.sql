-- CreateTable
CREATE TABLE "federation_destinations" (
    "destination" TEXT NOT NULL PRIMARY KEY,
    "retry_last_ts" BIGINT NOT NULL DEFAULT 0,
    "retry_interval" BIGINT NOT NULL DEFAULT 0,
    "failure_ts" BIGINT,
    "last_success_ts" BIGINT
);

-- CreateTable
CREATE TABLE "federation_outbound_pdus" (
    "destination" TEXT NOT NULL,
    "stream_ordering" BIGINT NOT NULL,
    "room_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,

    PRIMARY KEY ("destination", "stream_ordering")
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_presence" (
    "user_id" TEXT NOT NULL PRIMARY KEY,
    "state" TEXT NOT NULL,
    "status_msg" TEXT,
    "last_active_ts" BIGINT NOT NULL,
    "last_user_sync_ts" BIGINT NOT NULL,
    "currently_active" BOOLEAN NOT NULL,
    "stream_id" BIGINT NOT NULL,
    "last_federation_update_ts" BIGINT NOT NULL DEFAULT 0
);
INSERT INTO "new_presence" ("currently_active", "last_active_ts", "last_user_sync_ts", "state", "status_msg", "stream_id", "user_id") SELECT "currently_active", "last_active_ts", "last_user_sync_ts", "state", "status_msg", "stream_id", "user_id" FROM "presence";
DROP TABLE "presence";
ALTER TABLE "new_presence" RENAME TO "presence";
CREATE INDEX "presence_stream_id_idx" ON "presence"("stream_id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "federation_outbound_pdus_destination_room_id_stream_ordering_idx" ON "federation_outbound_pdus"("destination", "room_id", "stream_ordering");
