-- CreateTable
CREATE TABLE "room_publicity" (
    "room_id" TEXT NOT NULL,
    "join_rule" TEXT,
    "history_visibility" TEXT,

    CONSTRAINT "room_publicity_pkey" PRIMARY KEY ("room_id")
);

-- Hand-written (Prisma cannot express tsvector columns or GIN indexes): the full-text index of events for
-- POST /search, kept by the search capability's persist hook (src/domain/search/index-hooks.ts). One row
-- per indexed event: content.body (m.room.message), content.name (m.room.name) or content.topic (m.room.topic).
CREATE TABLE "event_search" (
    "stream_ordering" BIGINT NOT NULL,
    "vector" TSVECTOR NOT NULL,

    CONSTRAINT "event_search_pkey" PRIMARY KEY ("stream_ordering")
);
CREATE INDEX "event_search_vector_idx" ON "event_search" USING GIN ("vector");

-- Index the events stored before this migration (redacted ones left out; JSON with NUL escapes, which
-- PostgreSQL's json cannot turn into text, is skipped rather than failing the migration).
INSERT INTO "event_search" ("stream_ordering", "vector")
SELECT x."stream_ordering", to_tsvector('english', x."value") FROM (
    SELECT e."stream_ordering", e."event_id",
        (e."json"::json -> 'content') ->> (CASE e."type" WHEN 'm.room.message' THEN 'body' WHEN 'm.room.name' THEN 'name' ELSE 'topic' END) AS "value",
        json_typeof((e."json"::json -> 'content') -> (CASE e."type" WHEN 'm.room.message' THEN 'body' WHEN 'm.room.name' THEN 'name' ELSE 'topic' END)) AS "kind"
    FROM "events" e
    WHERE e."outlier" = false AND e."rejected_reason" IS NULL AND strpos(e."json", '\u0000') = 0
        AND (e."type" = 'm.room.message' OR (e."type" IN ('m.room.name', 'm.room.topic') AND e."state_key" = ''))
) AS x
WHERE x."kind" = 'string'
    AND NOT EXISTS (SELECT 1 FROM "redactions" r WHERE r."redacts" = x."event_id");

-- The join rule and history visibility of the rooms stored before this migration.
INSERT INTO "room_publicity" ("room_id", "join_rule", "history_visibility")
SELECT r."room_id",
    (SELECT (e."json"::json -> 'content') ->> 'join_rule' FROM "current_state_events" c JOIN "events" e ON e."event_id" = c."event_id"
        WHERE c."room_id" = r."room_id" AND c."type" = 'm.room.join_rules' AND c."state_key" = '' AND strpos(e."json", '\u0000') = 0),
    (SELECT (e."json"::json -> 'content') ->> 'history_visibility' FROM "current_state_events" c JOIN "events" e ON e."event_id" = c."event_id"
        WHERE c."room_id" = r."room_id" AND c."type" = 'm.room.history_visibility' AND c."state_key" = '' AND strpos(e."json", '\u0000') = 0)
FROM "rooms" r;
