-- CreateTable
CREATE TABLE "federation_outbound_edus" (
    "id" SERIAL NOT NULL,
    "destination" TEXT NOT NULL,
    "edu_type" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "created_ts" BIGINT NOT NULL,

    CONSTRAINT "federation_outbound_edus_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "federation_outbound_edus_destination_id_idx" ON "federation_outbound_edus"("destination", "id");
