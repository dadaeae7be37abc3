-- AlterTable (by hand: ADD COLUMN instead of Prisma's redefinition of "events", which would also lose the
-- INTEGER PRIMARY KEY (rowid) of stream_ordering made by hand in 20261121155540_rooms_and_events)
ALTER TABLE "events" ADD COLUMN "soft_failed" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "stream_consumer_positions" (
    "consumer" TEXT NOT NULL,
    "stream" TEXT NOT NULL,
    "position" BIGINT NOT NULL,

    PRIMARY KEY ("consumer", "stream")
);
