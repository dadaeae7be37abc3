-- CreateTable
CREATE TABLE "blocked_rooms" (
    "room_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL,

    CONSTRAINT "blocked_rooms_pkey" PRIMARY KEY ("room_id")
);

-- CreateTable
CREATE TABLE "room_deletions" (
    "delete_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "error" TEXT,
    "result" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL,

    CONSTRAINT "room_deletions_pkey" PRIMARY KEY ("delete_id")
);

-- CreateIndex
CREATE INDEX "room_deletions_room_id_idx" ON "room_deletions"("room_id");
