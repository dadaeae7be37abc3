-- CreateTable
CREATE TABLE "server_keys" (
    "server_name" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "verify_key" TEXT NOT NULL,
    "valid_until_ts" BIGINT NOT NULL,
    "expired_ts" BIGINT,
    "from_server" TEXT NOT NULL,
    "added_ts" BIGINT NOT NULL,
    "key_json" TEXT NOT NULL,

    PRIMARY KEY ("server_name", "key_id")
);
