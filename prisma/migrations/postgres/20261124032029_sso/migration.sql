-- CreateTable
CREATE TABLE "user_external_ids" (
    "auth_provider" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,

    CONSTRAINT "user_external_ids_pkey" PRIMARY KEY ("auth_provider","external_id")
);

-- CreateTable
CREATE TABLE "sso_sessions" (
    "state_hash" TEXT NOT NULL,
    "idp_id" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "code_verifier" TEXT,
    "client_redirect_url" TEXT,
    "uia_session_id" TEXT,
    "created_ts" BIGINT NOT NULL,

    CONSTRAINT "sso_sessions_pkey" PRIMARY KEY ("state_hash")
);

-- CreateIndex
CREATE INDEX "user_external_ids_user_id_idx" ON "user_external_ids"("user_id");
