-- CreateTable
CREATE TABLE "user_reports" (
    "id" SERIAL NOT NULL,
    "received_ts" BIGINT NOT NULL,
    "target_user_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "reason" TEXT NOT NULL,

    CONSTRAINT "user_reports_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "user_reports_target_user_id_idx" ON "user_reports"("target_user_id");

-- CreateIndex
CREATE INDEX "user_reports_user_id_idx" ON "user_reports"("user_id");
