-- CreateTable
CREATE TABLE "thread_subscriptions" (
    "user_id" TEXT NOT NULL,
    "room_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "subscribed" BOOLEAN NOT NULL,
    "automatic" BOOLEAN NOT NULL,
    "unsubscribed_at_stream" BIGINT,
    "unsubscribed_at_depth" BIGINT,
    "stream_id" BIGINT NOT NULL,

    CONSTRAINT "thread_subscriptions_pkey" PRIMARY KEY ("user_id","room_id","event_id")
);

-- CreateIndex
CREATE INDEX "thread_subscriptions_room_id_event_id_idx" ON "thread_subscriptions"("room_id", "event_id");

-- CreateIndex
CREATE INDEX "thread_subscriptions_user_id_stream_id_idx" ON "thread_subscriptions"("user_id", "stream_id");
CREATE SEQUENCE "thread_subscriptions_stream_seq";
