-- CreateTable
CREATE TABLE "room_publicity" (
    "room_id" TEXT NOT NULL PRIMARY KEY,
    "join_rule" TEXT,
    "history_visibility" TEXT
);

-- Hand-written (Prisma cannot express FTS5): the full-text index of events for POST /search, kept by the
-- search capability's persist hook (src/domain/search/index-hooks.ts). rowid = events.stream_ordering;
-- value = content.body (m.room.message), content.name (m.room.name) or content.topic (m.room.topic).
CREATE VIRTUAL TABLE "event_search" USING fts5("value", tokenize = 'porter unicode61 remove_diacritics 2');

-- Index the events stored before this migration (redacted ones left out).
INSERT INTO "event_search" ("rowid", "value")
SELECT "stream_ordering", json_extract("json", "path") FROM (
    SELECT e."stream_ordering", e."json", e."event_id",
        CASE e."type" WHEN 'm.room.message' THEN '$.content.body' WHEN 'm.room.name' THEN '$.content.name' ELSE '$.content.topic' END AS "path"
    FROM "events" e
    WHERE e."outlier" = 0 AND e."rejected_reason" IS NULL
        AND (e."type" = 'm.room.message' OR (e."type" IN ('m.room.name', 'm.room.topic') AND e."state_key" = ''))
) AS x
WHERE json_type("json", "path") = 'text'
    AND NOT EXISTS (SELECT 1 FROM "redactions" r WHERE r."redacts" = x."event_id");

-- The join rule and history visibility of the rooms stored before this migration.
INSERT INTO "room_publicity" ("room_id", "join_rule", "history_visibility")
SELECT r."room_id",
    (SELECT json_extract(e."json", '$.content.join_rule') FROM "current_state_events" c JOIN "events" e ON e."event_id" = c."event_id"
        WHERE c."room_id" = r."room_id" AND c."type" = 'm.room.join_rules' AND c."state_key" = ''),
    (SELECT json_extract(e."json", '$.content.history_visibility') FROM "current_state_events" c JOIN "events" e ON e."event_id" = c."event_id"
        WHERE c."room_id" = r."room_id" AND c."type" = 'm.room.history_visibility' AND c."state_key" = '')
FROM "rooms" r;
