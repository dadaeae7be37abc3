-- CreateTable
CREATE TABLE "oauth_clients" (
    "client_id" TEXT NOT NULL PRIMARY KEY,
    "metadata" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "oauth_browser_sessions" (
    "token_hash" TEXT NOT NULL PRIMARY KEY,
    "user_id" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL,
    "expires_ts" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "oauth_authorization_codes" (
    "code_hash" TEXT NOT NULL PRIMARY KEY,
    "client_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "redirect_uri" TEXT NOT NULL,
    "code_challenge" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL,
    "expires_ts" BIGINT NOT NULL,
    "used_ts" BIGINT
);

-- CreateTable
CREATE TABLE "oauth_grants" (
    "user_id" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL,

    PRIMARY KEY ("user_id", "device_id")
);

-- CreateTable
CREATE TABLE "oauth_device_grants" (
    "device_code_hash" TEXT NOT NULL PRIMARY KEY,
    "user_code_hash" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "user_id" TEXT,
    "created_ts" BIGINT NOT NULL,
    "expires_ts" BIGINT NOT NULL,
    "last_polled_ts" BIGINT,
    "interval_s" INTEGER NOT NULL
);

-- CreateTable
CREATE TABLE "oauth_cross_signing_resets" (
    "user_id" TEXT NOT NULL PRIMARY KEY,
    "approved_until_ts" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "oauth_retired_refresh_tokens" (
    "token_hash" TEXT NOT NULL PRIMARY KEY,
    "user_id" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "retired_ts" BIGINT NOT NULL
);

-- CreateIndex
CREATE INDEX "oauth_browser_sessions_user_id_idx" ON "oauth_browser_sessions"("user_id");

-- CreateIndex
CREATE INDEX "oauth_authorization_codes_client_id_idx" ON "oauth_authorization_codes"("client_id");

-- CreateIndex
CREATE INDEX "oauth_grants_client_id_idx" ON "oauth_grants"("client_id");

-- CreateIndex
CREATE UNIQUE INDEX "oauth_device_grants_user_code_hash_key" ON "oauth_device_grants"("user_code_hash");

-- CreateIndex
CREATE INDEX "oauth_retired_refresh_tokens_user_id_device_id_idx" ON "oauth_retired_refresh_tokens"("user_id", "device_id");
