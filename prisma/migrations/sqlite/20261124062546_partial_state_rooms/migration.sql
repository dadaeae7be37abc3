-- CreateTable
CREATE TABLE "partial_state_rooms" (
    "room_id" TEXT NOT NULL PRIMARY KEY,
    "join_event_id" TEXT NOT NULL,
    "servers" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL,
    "completed_stream" BIGINT
);
