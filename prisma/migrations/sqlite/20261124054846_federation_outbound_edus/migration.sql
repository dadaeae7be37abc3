-- CreateTable
CREATE TABLE "federation_outbound_edus" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "destination" TEXT NOT NULL,
    "edu_type" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL
);

-- CreateIndex
CREATE INDEX "federation_outbound_edus_destination_id_idx" ON "federation_outbound_edus"("destination", "id");
