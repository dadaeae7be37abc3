-- CreateTable
CREATE TABLE "media" (
    "origin" TEXT NOT NULL,
    "media_id" TEXT NOT NULL,
    "media_type" TEXT,
    "upload_name" TEXT,
    "media_length" BIGINT,
    "user_id" TEXT,
    "created_ts" BIGINT NOT NULL,
    "uploaded_ts" BIGINT,
    "unused_expires_ts" BIGINT,
    "last_access_ts" BIGINT,
    "quarantined_by" TEXT,
    "protected" BOOLEAN NOT NULL DEFAULT false,
    "authenticated" BOOLEAN NOT NULL DEFAULT false,

    PRIMARY KEY ("origin", "media_id")
);

-- CreateTable
CREATE TABLE "media_thumbnails" (
    "origin" TEXT NOT NULL,
    "media_id" TEXT NOT NULL,
    "width" INTEGER NOT NULL,
    "height" INTEGER NOT NULL,
    "method" TEXT NOT NULL,
    "media_type" TEXT NOT NULL,
    "animated" BOOLEAN NOT NULL DEFAULT false,
    "media_length" BIGINT NOT NULL,

    PRIMARY KEY ("origin", "media_id", "width", "height", "method", "media_type", "animated")
);

-- CreateTable
CREATE TABLE "url_previews" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "url" TEXT NOT NULL,
    "response_code" INTEGER NOT NULL,
    "og" TEXT NOT NULL,
    "media_id" TEXT,
    "download_ts" BIGINT NOT NULL,
    "expires_ts" BIGINT NOT NULL
);

-- CreateIndex
CREATE INDEX "media_user_id_created_ts_idx" ON "media"("user_id", "created_ts");

-- CreateIndex
CREATE INDEX "media_last_access_ts_idx" ON "media"("last_access_ts");

-- CreateIndex
CREATE INDEX "url_previews_url_download_ts_idx" ON "url_previews"("url", "download_ts");

-- CreateIndex
CREATE INDEX "url_previews_expires_ts_idx" ON "url_previews"("expires_ts");
