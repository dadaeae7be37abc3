-- CreateTable
CREATE TABLE "user_threepids" (
    "medium" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "validated_at" BIGINT NOT NULL,
    "added_at" BIGINT NOT NULL,

    PRIMARY KEY ("medium", "address")
);

-- CreateTable
CREATE TABLE "user_threepid_id_server" (
    "user_id" TEXT NOT NULL,
    "medium" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "id_server" TEXT NOT NULL,

    PRIMARY KEY ("user_id", "medium", "address", "id_server")
);

-- CreateTable
CREATE TABLE "threepid_validation_sessions" (
    "session_id" TEXT NOT NULL PRIMARY KEY,
    "medium" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "client_secret_hash" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "last_send_attempt" INTEGER NOT NULL,
    "token_hash" TEXT,
    "token_expiry_ts" BIGINT NOT NULL,
    "next_link" TEXT,
    "validated_at" BIGINT,
    "created_ts" BIGINT NOT NULL
);

-- CreateIndex
CREATE INDEX "user_threepids_user_id_idx" ON "user_threepids"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "threepid_validation_sessions_token_hash_key" ON "threepid_validation_sessions"("token_hash");

-- CreateIndex
CREATE INDEX "threepid_validation_sessions_client_secret_hash_address_medium_idx" ON "threepid_validation_sessions"("client_secret_hash", "address", "medium");
