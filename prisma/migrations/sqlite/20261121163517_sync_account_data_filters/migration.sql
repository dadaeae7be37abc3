-- CreateTable
CREATE TABLE "account_data" (
    "user_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL DEFAULT '',
    "type" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "stream_id" BIGINT NOT NULL,

    PRIMARY KEY ("user_id", "room_id", "type")
);

-- CreateTable
CREATE TABLE "user_filters" (
    "user_id" TEXT NOT NULL,
    "filter_id" INTEGER NOT NULL,
    "json" TEXT NOT NULL,

    PRIMARY KEY ("user_id", "filter_id")
);

-- CreateIndex
CREATE INDEX "account_data_user_id_stream_id_idx" ON "account_data"("user_id", "stream_id");
