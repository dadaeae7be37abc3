-- CreateTable
CREATE TABLE "stream_positions" (
    "stream_name" TEXT NOT NULL,
    "instance_name" TEXT NOT NULL,
    "stream_id" BIGINT NOT NULL,

    PRIMARY KEY ("stream_name", "instance_name")
);
