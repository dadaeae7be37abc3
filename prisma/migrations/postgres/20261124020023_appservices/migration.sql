-- CreateTable
CREATE TABLE "appservice_queue" (
    "id" SERIAL NOT NULL,
    "service_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "event_id" TEXT,
    "content" TEXT,
    "txn_id" BIGINT,

    CONSTRAINT "appservice_queue_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "appservice_state" (
    "service_id" TEXT NOT NULL,
    "last_txn_id" BIGINT NOT NULL,

    CONSTRAINT "appservice_state_pkey" PRIMARY KEY ("service_id")
);

-- CreateTable
CREATE TABLE "appservice_room_list" (
    "appservice_id" TEXT NOT NULL,
    "network_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,

    CONSTRAINT "appservice_room_list_pkey" PRIMARY KEY ("appservice_id","network_id","room_id")
);

-- CreateIndex
CREATE INDEX "appservice_queue_service_id_txn_id_id_idx" ON "appservice_queue"("service_id", "txn_id", "id");

-- CreateIndex
CREATE INDEX "appservice_room_list_room_id_idx" ON "appservice_room_list"("room_id");
