-- AlterTable
ALTER TABLE "room_deletions" ADD COLUMN     "params" TEXT;
