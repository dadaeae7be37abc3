-- CreateTable
CREATE TABLE "push_rules" (
    "user_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "rule_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "conditions" TEXT,
    "pattern" TEXT,
    "actions" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,

    PRIMARY KEY ("user_id", "kind", "rule_id")
);

-- CreateTable
CREATE TABLE "push_rule_overrides" (
    "user_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "rule_id" TEXT NOT NULL,
    "enabled" BOOLEAN,
    "actions" TEXT,

    PRIMARY KEY ("user_id", "kind", "rule_id")
);

-- CreateTable
CREATE TABLE "push_rules_stream" (
    "user_id" TEXT NOT NULL PRIMARY KEY,
    "stream_id" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "push_events" (
    "stream_ordering" BIGINT NOT NULL PRIMARY KEY,
    "event_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,
    "thread_id" TEXT NOT NULL,
    "sender" TEXT NOT NULL,
    "notif" BOOLEAN NOT NULL,
    "highlight" BOOLEAN NOT NULL,
    "actions" TEXT NOT NULL,
    "ts" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "push_exceptions" (
    "user_id" TEXT NOT NULL,
    "stream_ordering" BIGINT NOT NULL,
    "room_id" TEXT NOT NULL,
    "notif" BOOLEAN NOT NULL,
    "highlight" BOOLEAN NOT NULL,
    "actions" TEXT NOT NULL,

    PRIMARY KEY ("user_id", "stream_ordering")
);

-- CreateTable
CREATE TABLE "push_member_spans" (
    "user_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,
    "joined_at" BIGINT NOT NULL,
    "left_at" BIGINT,

    PRIMARY KEY ("user_id", "room_id", "joined_at")
);

-- CreateTable
CREATE TABLE "pushers" (
    "user_id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "pushkey" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "app_display_name" TEXT NOT NULL,
    "device_display_name" TEXT NOT NULL,
    "profile_tag" TEXT,
    "lang" TEXT NOT NULL,
    "data" TEXT NOT NULL,
    "device_id" TEXT,
    "pushkey_ts" BIGINT NOT NULL,
    "last_stream_ordering" BIGINT NOT NULL,
    "failing_since" BIGINT,

    PRIMARY KEY ("user_id", "app_id", "pushkey")
);

-- CreateIndex
CREATE UNIQUE INDEX "push_rules_stream_stream_id_key" ON "push_rules_stream"("stream_id");

-- CreateIndex
CREATE INDEX "push_events_room_id_stream_ordering_idx" ON "push_events"("room_id", "stream_ordering");

-- CreateIndex
CREATE INDEX "pushers_app_id_pushkey_idx" ON "pushers"("app_id", "pushkey");

-- Members joined before this migration: their spans start at their membership event.
INSERT INTO "push_member_spans" ("user_id", "room_id", "joined_at", "left_at") SELECT "user_id", "room_id", "stream_ordering", NULL FROM "room_memberships" WHERE "membership" = 'join';
