-- CreateTable
CREATE TABLE "remote_device_lists" (
    "user_id" TEXT NOT NULL,
    "stream_id" BIGINT NOT NULL,
    "ts" BIGINT NOT NULL,

    CONSTRAINT "remote_device_lists_pkey" PRIMARY KEY ("user_id")
);

-- CreateTable
CREATE TABLE "federation_to_device_seen" (
    "sender" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "ts" BIGINT NOT NULL,

    CONSTRAINT "federation_to_device_seen_pkey" PRIMARY KEY ("sender","message_id")
);

-- CreateIndex
CREATE INDEX "federation_to_device_seen_ts_idx" ON "federation_to_device_seen"("ts");
