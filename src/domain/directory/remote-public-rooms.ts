// Another server's published room directory, for our clients (GET/POST /publicRooms?server=...): asked over
// federation (POST with a filter, GET without) and checked field by field — a remote server is untrusted
// input, so only well-typed entries pass. Its refusal (403/404) becomes ours; any other failure a 502 as
// in Synapse. Spec: Client-Server API "Listing rooms"; Server-Server API "Published Room Directory".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { isValidRoomId } from "../ids.ts";
import { shownSummaryField } from "../rooms/summary-fields.ts";
import { FederationError } from "../../federation/errors.ts";
import type { PublicRoomsChunk, PublicRoomsPage, PublicRoomsRequest } from "./public-rooms.ts";

/** String fields taken from an entry, each only when it has its format (shownSummaryField). */
const STRING_FIELDS = ["name", "topic", "canonical_alias", "avatar_url", "join_rule", "room_type"] as const;

function chunkOf(v: unknown): PublicRoomsChunk | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const r = v as Record<string, unknown>;
  if (typeof r.room_id !== "string" || !isValidRoomId(r.room_id)) return undefined;
  if (!Number.isSafeInteger(r.num_joined_members) || (r.num_joined_members as number) < 0) return undefined;
  const out: PublicRoomsChunk = {
    room_id: r.room_id,
    num_joined_members: r.num_joined_members as number,
    world_readable: r.world_readable === true,
    guest_can_join: r.guest_can_join === true,
  };
  for (const f of STRING_FIELDS) {
    const value = shownSummaryField(f, r[f]);
    if (value !== undefined) out[f] = value;
  }
  return out;
}

export async function remotePublicRooms(s: Services, server: string, req: PublicRoomsRequest): Promise<PublicRoomsPage> {
  const path = "/_matrix/federation/v1/publicRooms";
  let answer: unknown;
  try {
    answer = req.filter !== undefined && req.filter !== null
      ? await s.federation.postJson(server, path, { limit: req.limit, since: req.since, filter: req.filter })
      : await s.federation.getJson(server, path, { limit: req.limit, since: req.since });
  } catch (err) {
    if (err instanceof FederationError && err.is(403)) throw new MatrixError("M_FORBIDDEN", `${server} does not share its room directory`, 403);
    if (err instanceof FederationError && err.is(404)) throw new MatrixError("M_NOT_FOUND", `${server} has no room directory`, 404);
    throw new MatrixError("M_UNKNOWN", "Failed to fetch room list", 502);
  }
  const a = (typeof answer === "object" && answer !== null ? answer : {}) as Record<string, unknown>;
  if (!Array.isArray(a.chunk)) throw new MatrixError("M_UNKNOWN", "Failed to fetch room list", 502);
  const chunk = a.chunk.map(chunkOf).filter((c): c is PublicRoomsChunk => c !== undefined);
  const page: PublicRoomsPage = {
    chunk,
    total_room_count_estimate: Number.isSafeInteger(a.total_room_count_estimate) ? (a.total_room_count_estimate as number) : chunk.length,
    cursors: [],
  };
  if (typeof a.next_batch === "string") page.next_batch = a.next_batch;
  if (typeof a.prev_batch === "string") page.prev_batch = a.prev_batch;
  return page;
}
