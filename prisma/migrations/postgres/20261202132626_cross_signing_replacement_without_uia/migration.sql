-- AlterTable
ALTER TABLE "e2e_cross_signing_keys" ADD COLUMN     "updatable_without_uia_before_ms" BIGINT;
