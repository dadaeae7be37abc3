-- CreateTable
CREATE TABLE "worker_leases" (
    "name" TEXT NOT NULL,
    "holder_instance" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "expires_at" BIGINT NOT NULL,
    "renewed_at" BIGINT NOT NULL,

    CONSTRAINT "worker_leases_pkey" PRIMARY KEY ("name")
);
