-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_users" (
    "user_id" TEXT NOT NULL PRIMARY KEY,
    "password_hash" TEXT,
    "is_guest" BOOLEAN NOT NULL DEFAULT false,
    "is_admin" BOOLEAN NOT NULL DEFAULT false,
    "user_type" TEXT,
    "appservice_id" TEXT,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "erased" BOOLEAN NOT NULL DEFAULT false,
    "locked" BOOLEAN NOT NULL DEFAULT false,
    "suspended" BOOLEAN NOT NULL DEFAULT false,
    "created_ts" BIGINT NOT NULL
);
INSERT INTO "new_users" ("appservice_id", "created_ts", "deactivated", "erased", "is_admin", "is_guest", "password_hash", "user_id", "user_type") SELECT "appservice_id", "created_ts", "deactivated", "erased", "is_admin", "is_guest", "password_hash", "user_id", "user_type" FROM "users";
DROP TABLE "users";
ALTER TABLE "new_users" RENAME TO "users";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
