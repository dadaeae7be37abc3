-- CreateTable
CREATE TABLE "appservice_queue" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "service_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "event_id" TEXT,
    "content" TEXT,
    "txn_id" BIGINT
);

-- CreateTable
CREATE TABLE "appservice_state" (
    "service_id" TEXT NOT NULL PRIMARY KEY,
    "last_txn_id" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "appservice_room_list" (
    "appservice_id" TEXT NOT NULL,
    "network_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,

    PRIMARY KEY ("appservice_id", "network_id", "room_id")
);

-- CreateIndex
CREATE INDEX "appservice_queue_service_id_txn_id_id_idx" ON "appservice_queue"("service_id", "txn_id", "id");

-- CreateIndex
CREATE INDEX "appservice_room_list_room_id_idx" ON "appservice_room_list"("room_id");
