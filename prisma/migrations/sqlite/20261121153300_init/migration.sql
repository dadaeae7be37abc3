-- CreateTable
CREATE TABLE "users" (
    "user_id" TEXT NOT NULL PRIMARY KEY,
    "password_hash" TEXT,
    "is_guest" BOOLEAN NOT NULL DEFAULT false,
    "is_admin" BOOLEAN NOT NULL DEFAULT false,
    "user_type" TEXT,
    "appservice_id" TEXT,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "erased" BOOLEAN NOT NULL DEFAULT false,
    "created_ts" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "profiles" (
    "user_id" TEXT NOT NULL PRIMARY KEY,
    "displayname" TEXT,
    "avatar_url" TEXT
);

-- CreateTable
CREATE TABLE "devices" (
    "user_id" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "display_name" TEXT,
    "last_seen_ts" BIGINT,
    "last_seen_ip" TEXT,
    "last_seen_user_agent" TEXT,
    "created_ts" BIGINT NOT NULL,

    PRIMARY KEY ("user_id", "device_id")
);

-- CreateTable
CREATE TABLE "access_tokens" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "token_hash" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "device_id" TEXT,
    "created_ts" BIGINT NOT NULL,
    "valid_until_ts" BIGINT,
    "refresh_token_id" TEXT,
    "used" BOOLEAN NOT NULL DEFAULT false,
    "puppets_user_id" TEXT
);

-- CreateTable
CREATE TABLE "refresh_tokens" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "token_hash" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL,
    "expiry_ts" BIGINT,
    "ultimate_session_expiry_ts" BIGINT,
    "next_token_id" TEXT
);

-- CreateTable
CREATE TABLE "login_tokens" (
    "token_hash" TEXT NOT NULL PRIMARY KEY,
    "user_id" TEXT NOT NULL,
    "expiry_ts" BIGINT NOT NULL,
    "used" BOOLEAN NOT NULL DEFAULT false
);

-- CreateTable
CREATE TABLE "uia_sessions" (
    "session_id" TEXT NOT NULL PRIMARY KEY,
    "created_ts" BIGINT NOT NULL,
    "uri" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "client_dict" TEXT NOT NULL,
    "server_data" TEXT NOT NULL DEFAULT '{}',
    "description" TEXT NOT NULL
);

-- CreateTable
CREATE TABLE "uia_credentials" (
    "session_id" TEXT NOT NULL,
    "stage_type" TEXT NOT NULL,
    "result" TEXT NOT NULL,

    PRIMARY KEY ("session_id", "stage_type")
);

-- CreateTable
CREATE TABLE "registration_tokens" (
    "token" TEXT NOT NULL PRIMARY KEY,
    "uses_allowed" INTEGER,
    "pending" INTEGER NOT NULL DEFAULT 0,
    "completed" INTEGER NOT NULL DEFAULT 0,
    "expiry_time" BIGINT
);

-- CreateTable
CREATE TABLE "registration_nonces" (
    "nonce" TEXT NOT NULL PRIMARY KEY,
    "created_ts" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "room_memberships" (
    "room_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "membership" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,

    PRIMARY KEY ("room_id", "user_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "access_tokens_token_hash_key" ON "access_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "access_tokens_user_id_device_id_idx" ON "access_tokens"("user_id", "device_id");

-- CreateIndex
CREATE INDEX "access_tokens_refresh_token_id_idx" ON "access_tokens"("refresh_token_id");

-- CreateIndex
CREATE UNIQUE INDEX "refresh_tokens_token_hash_key" ON "refresh_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "refresh_tokens_user_id_device_id_idx" ON "refresh_tokens"("user_id", "device_id");

-- CreateIndex
CREATE INDEX "room_memberships_user_id_membership_idx" ON "room_memberships"("user_id", "membership");
