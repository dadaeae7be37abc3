-- CreateTable
CREATE TABLE "profile_fields" (
    "user_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    PRIMARY KEY ("user_id", "key")
);
