-- AlterTable
ALTER TABLE "presence" ADD COLUMN     "last_federation_update_ts" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "federation_destinations" (
    "destination" TEXT NOT NULL,
    "retry_last_ts" BIGINT NOT NULL DEFAULT 0,
    "retry_interval" BIGINT NOT NULL DEFAULT 0,
    "failure_ts" BIGINT,
    "last_success_ts" BIGINT,

    CONSTRAINT "federation_destinations_pkey" PRIMARY KEY ("destination")
);

-- CreateTable
CREATE TABLE "federation_outbound_pdus" (
    "destination" TEXT NOT NULL,
    "stream_ordering" BIGINT NOT NULL,
    "room_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,

    CONSTRAINT "federation_outbound_pdus_pkey" PRIMARY KEY ("destination","stream_ordering")
);

-- CreateIndex
CREATE INDEX "federation_outbound_pdus_destination_room_id_stream_orderin_idx" ON "federation_outbound_pdus"("destination", "room_id", "stream_ordering");
