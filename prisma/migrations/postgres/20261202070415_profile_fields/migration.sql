-- CreateTable
CREATE TABLE "profile_fields" (
    "user_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "profile_fields_pkey" PRIMARY KEY ("user_id","key")
);
