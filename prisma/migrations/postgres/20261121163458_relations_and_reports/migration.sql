-- CreateTable
CREATE TABLE "event_relations" (
    "event_id" TEXT NOT NULL,
    "relates_to_id" TEXT NOT NULL,
    "rel_type" TEXT NOT NULL,
    "aggregation_key" TEXT,
    "room_id" TEXT NOT NULL,
    "sender" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "stream_ordering" BIGINT NOT NULL,
    "thread_id" TEXT,

    CONSTRAINT "event_relations_pkey" PRIMARY KEY ("event_id")
);

-- CreateTable
CREATE TABLE "content_reports" (
    "id" SERIAL NOT NULL,
    "received_ts" BIGINT NOT NULL,
    "room_id" TEXT NOT NULL,
    "event_id" TEXT,
    "user_id" TEXT NOT NULL,
    "reason" TEXT,
    "score" INTEGER,

    CONSTRAINT "content_reports_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "event_relations_relates_to_id_stream_ordering_idx" ON "event_relations"("relates_to_id", "stream_ordering");

-- CreateIndex
CREATE INDEX "event_relations_room_id_rel_type_stream_ordering_idx" ON "event_relations"("room_id", "rel_type", "stream_ordering");

-- CreateIndex
CREATE INDEX "content_reports_received_ts_idx" ON "content_reports"("received_ts");
