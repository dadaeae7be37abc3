-- CreateTable
CREATE TABLE "stream_positions" (
    "stream_name" TEXT NOT NULL,
    "instance_name" TEXT NOT NULL,
    "stream_id" BIGINT NOT NULL,

    CONSTRAINT "stream_positions_pkey" PRIMARY KEY ("stream_name","instance_name")
);
