-- CreateTable
CREATE TABLE "account_validity" (
    "user_id" TEXT NOT NULL PRIMARY KEY,
    "expiration_ts" BIGINT NOT NULL,
    "email_sent" BOOLEAN NOT NULL DEFAULT false,
    "renewal_token_hash" TEXT,
    "token_used_ts" BIGINT
);

-- CreateIndex
CREATE UNIQUE INDEX "account_validity_renewal_token_hash_key" ON "account_validity"("renewal_token_hash");
