-- CreateTable
CREATE TABLE "room_aliases" (
    "alias" TEXT NOT NULL PRIMARY KEY,
    "room_id" TEXT NOT NULL,
    "creator" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "room_directory_stats" (
    "room_id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT,
    "topic" TEXT,
    "canonical_alias" TEXT,
    "avatar_url" TEXT,
    "join_rule" TEXT,
    "history_visibility" TEXT,
    "guest_access" TEXT,
    "room_type" TEXT,
    "joined_members" INTEGER NOT NULL DEFAULT 0
);

-- CreateIndex
CREATE INDEX "room_aliases_room_id_idx" ON "room_aliases"("room_id");

-- CreateIndex
CREATE INDEX "room_directory_stats_joined_members_idx" ON "room_directory_stats"("joined_members");
