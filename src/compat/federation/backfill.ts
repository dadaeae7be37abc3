// GET /_matrix/federation/v1/backfill/{roomId}?v=...&limit= (signed): history before the given events;
// GET /timestamp_to_event/{roomId}?ts=&dir= (signed): the event closest to a time.
// Spec: Server-Server API "Backfilling and retrieving missing events", "Timestamp to event".
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { backfillForServer } from "../../domain/federation/backfill.ts";
import { timestampToEventForServer } from "../../domain/federation/timestamp-lookup.ts";
import { MatrixError } from "../../domain/errors.ts";
import { queryInt, queryString, type Call } from "../http.ts";
import { federationRoute } from "./route.ts";

/** Every value of a repeated query parameter (at least one). */
function queryList(c: Call, name: string): string[] {
  const v = c.query[name];
  const list = (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x) => x !== "");
  if (list.length === 0) throw new MatrixError("M_MISSING_PARAM", `Missing ${name} query parameter`, 400);
  return list;
}

export function federationBackfillRoutes(app: FastifyInstance, s: Services): void {
  federationRoute(app, s, {
    method: "GET", path: "/backfill/:roomId", auth: "signed",
    handler: (c) => {
      const limit = queryInt(c, "limit", { min: 0 });
      if (limit === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing limit query parameter", 400);
      return backfillForServer(s, c.origin, c.params.roomId!, queryList(c, "v"), limit);
    },
  });
  federationRoute(app, s, {
    method: "GET", path: "/timestamp_to_event/:roomId", auth: "signed",
    handler: (c) => {
      const ts = queryInt(c, "ts", { required: true, min: 0 })!;
      const dir = queryString(c, "dir", true);
      if (dir !== "b" && dir !== "f") throw new MatrixError("M_INVALID_PARAM", "dir must be b or f", 400);
      return timestampToEventForServer(s, c.origin, c.params.roomId!, ts, dir);
    },
  });
}
