-- AlterTable
ALTER TABLE "partial_state_rooms" ADD COLUMN "device_lists_stream" BIGINT;

-- CreateTable
CREATE TABLE "device_lists_remote_pending" (
    "user_id" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "stream_id" BIGINT NOT NULL,

    PRIMARY KEY ("user_id", "device_id")
);
