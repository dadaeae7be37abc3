-- CreateTable
CREATE TABLE "room_aliases" (
    "alias" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,
    "creator" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL,

    CONSTRAINT "room_aliases_pkey" PRIMARY KEY ("alias")
);

-- CreateTable
CREATE TABLE "room_directory_stats" (
    "room_id" TEXT NOT NULL,
    "name" TEXT,
    "topic" TEXT,
    "canonical_alias" TEXT,
    "avatar_url" TEXT,
    "join_rule" TEXT,
    "history_visibility" TEXT,
    "guest_access" TEXT,
    "room_type" TEXT,
    "joined_members" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "room_directory_stats_pkey" PRIMARY KEY ("room_id")
);

-- CreateIndex
CREATE INDEX "room_aliases_room_id_idx" ON "room_aliases"("room_id");

-- CreateIndex
CREATE INDEX "room_directory_stats_joined_members_idx" ON "room_directory_stats"("joined_members");
