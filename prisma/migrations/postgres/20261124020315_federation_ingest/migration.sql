-- CreateTable
CREATE TABLE "received_transactions" (
    "origin" TEXT NOT NULL,
    "txn_id" TEXT NOT NULL,
    "response" TEXT NOT NULL,
    "received_ts" BIGINT NOT NULL,

    CONSTRAINT "received_transactions_pkey" PRIMARY KEY ("origin","txn_id")
);

-- CreateIndex
CREATE INDEX "received_transactions_received_ts_idx" ON "received_transactions"("received_ts");

-- CreateIndex
CREATE INDEX "events_room_id_depth_idx" ON "events"("room_id", "depth");

-- Positions of backfilled events (their negatives: below every other position; src/domain/store/events.ts).
CREATE SEQUENCE "events_backfill_seq";
