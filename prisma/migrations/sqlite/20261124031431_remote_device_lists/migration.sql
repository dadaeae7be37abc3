-- CreateTable
CREATE TABLE "remote_device_lists" (
    "user_id" TEXT NOT NULL PRIMARY KEY,
    "stream_id" BIGINT NOT NULL,
    "ts" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "federation_to_device_seen" (
    "sender" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "ts" BIGINT NOT NULL,

    PRIMARY KEY ("sender", "message_id")
);

-- CreateIndex
CREATE INDEX "federation_to_device_seen_ts_idx" ON "federation_to_device_seen"("ts");
