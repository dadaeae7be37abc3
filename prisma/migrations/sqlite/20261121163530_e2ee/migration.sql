-- CreateTable
CREATE TABLE "e2e_device_keys" (
    "user_id" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "json" TEXT NOT NULL,
    "ts" BIGINT NOT NULL,

    PRIMARY KEY ("user_id", "device_id")
);

-- CreateTable
CREATE TABLE "e2e_one_time_keys" (
    "user_id" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "algorithm" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "json" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,

    PRIMARY KEY ("user_id", "device_id", "algorithm", "key_id")
);

-- CreateTable
CREATE TABLE "e2e_fallback_keys" (
    "user_id" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "algorithm" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "json" TEXT NOT NULL,
    "used" BOOLEAN NOT NULL DEFAULT false,

    PRIMARY KEY ("user_id", "device_id", "algorithm")
);

-- CreateTable
CREATE TABLE "e2e_cross_signing_keys" (
    "user_id" TEXT NOT NULL,
    "key_type" TEXT NOT NULL,
    "json" TEXT NOT NULL,
    "ts" BIGINT NOT NULL,

    PRIMARY KEY ("user_id", "key_type")
);

-- CreateTable
CREATE TABLE "e2e_cross_signing_signatures" (
    "signer_user_id" TEXT NOT NULL,
    "signing_key_id" TEXT NOT NULL,
    "target_user_id" TEXT NOT NULL,
    "target_key_id" TEXT NOT NULL,
    "signature" TEXT NOT NULL,

    PRIMARY KEY ("target_user_id", "target_key_id", "signer_user_id", "signing_key_id")
);

-- CreateTable
CREATE TABLE "device_list_stream" (
    "stream_id" BIGINT NOT NULL PRIMARY KEY,
    "user_id" TEXT NOT NULL,
    "device_id" TEXT NOT NULL,
    "only_for" TEXT
);

-- CreateTable
CREATE TABLE "to_device_inbox" (
    "stream_id" BIGINT NOT NULL PRIMARY KEY,
    "recipient_user_id" TEXT NOT NULL,
    "recipient_device_id" TEXT NOT NULL,
    "sender" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "ts" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "to_device_txns" (
    "user_id" TEXT NOT NULL,
    "device_key" TEXT NOT NULL,
    "txn_id" TEXT NOT NULL,
    "ts" BIGINT NOT NULL,

    PRIMARY KEY ("user_id", "device_key", "txn_id")
);

-- CreateTable
CREATE TABLE "stream_high_water" (
    "stream" TEXT NOT NULL PRIMARY KEY,
    "position" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "e2e_room_keys_versions" (
    "user_id" TEXT NOT NULL,
    "version" BIGINT NOT NULL,
    "algorithm" TEXT NOT NULL,
    "auth_data" TEXT NOT NULL,
    "etag" BIGINT NOT NULL DEFAULT 0,
    "deleted" BOOLEAN NOT NULL DEFAULT false,

    PRIMARY KEY ("user_id", "version")
);

-- CreateTable
CREATE TABLE "e2e_room_keys" (
    "user_id" TEXT NOT NULL,
    "version" BIGINT NOT NULL,
    "room_id" TEXT NOT NULL,
    "session_id" TEXT NOT NULL,
    "first_message_index" BIGINT NOT NULL,
    "forwarded_count" BIGINT NOT NULL,
    "is_verified" BOOLEAN NOT NULL,
    "session_data" TEXT NOT NULL,

    PRIMARY KEY ("user_id", "version", "room_id", "session_id")
);

-- CreateIndex
CREATE INDEX "e2e_one_time_keys_user_id_device_id_algorithm_seq_idx" ON "e2e_one_time_keys"("user_id", "device_id", "algorithm", "seq");

-- CreateIndex
CREATE INDEX "device_list_stream_user_id_stream_id_idx" ON "device_list_stream"("user_id", "stream_id");

-- CreateIndex
CREATE INDEX "to_device_inbox_recipient_user_id_recipient_device_id_stream_id_idx" ON "to_device_inbox"("recipient_user_id", "recipient_device_id", "stream_id");
