-- AlterTable
ALTER TABLE "events" ADD COLUMN     "soft_failed" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "stream_consumer_positions" (
    "consumer" TEXT NOT NULL,
    "stream" TEXT NOT NULL,
    "position" BIGINT NOT NULL,

    CONSTRAINT "stream_consumer_positions_pkey" PRIMARY KEY ("consumer","stream")
);
