-- CreateTable
CREATE TABLE "user_reports" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "received_ts" BIGINT NOT NULL,
    "target_user_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "reason" TEXT NOT NULL
);

-- CreateIndex
CREATE INDEX "user_reports_target_user_id_idx" ON "user_reports"("target_user_id");

-- CreateIndex
CREATE INDEX "user_reports_user_id_idx" ON "user_reports"("user_id");
