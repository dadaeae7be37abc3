-- CreateTable
CREATE TABLE "blocked_rooms" (
    "room_id" TEXT NOT NULL PRIMARY KEY,
    "user_id" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "room_deletions" (
    "delete_id" TEXT NOT NULL PRIMARY KEY,
    "room_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "error" TEXT,
    "result" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL
);

-- CreateIndex
CREATE INDEX "room_deletions_room_id_idx" ON "room_deletions"("room_id");
