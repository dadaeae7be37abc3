-- CreateTable
CREATE TABLE "account_validity" (
    "user_id" TEXT NOT NULL,
    "expiration_ts" BIGINT NOT NULL,
    "email_sent" BOOLEAN NOT NULL DEFAULT false,
    "renewal_token_hash" TEXT,
    "token_used_ts" BIGINT,

    CONSTRAINT "account_validity_pkey" PRIMARY KEY ("user_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "account_validity_renewal_token_hash_key" ON "account_validity"("renewal_token_hash");
