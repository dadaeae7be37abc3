// The published room directory of this server (GET and POST /publicRooms): rooms published with
// visibility "public", most joined members first (as Synapse), filtered by a search term (name, topic,
// canonical alias, room id; case-insensitive) and room types, paged with opaque since tokens both ways.
// A page is one query over room_directory_stats (stats.ts). Spec: Client-Server API "Listing rooms".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { isPlainObject } from "../events/types.ts";
import { isValidServerName } from "../ids.ts";
import type { DirectoryPosition, DirectoryStats } from "../store/directory.ts";
import { backfillDirectoryStats } from "./stats.ts";
import { checkSearchTerm } from "../text.ts";

/** Largest page one call returns (a request without a limit gets this many). */
export const MAX_PUBLIC_ROOMS_PAGE = 1000;

export interface PublicRoomsRequest {
  limit?: number;
  since?: string;
  server?: string;
  filter?: unknown;
}

export interface PublicRoomsChunk {
  room_id: string;
  name?: string;
  topic?: string;
  canonical_alias?: string;
  num_joined_members: number;
  world_readable: boolean;
  guest_can_join: boolean;
  avatar_url?: string;
  join_rule?: string;
  room_type?: string;
}

export interface PublicRoomsResponse {
  chunk: PublicRoomsChunk[];
  next_batch?: string;
  prev_batch?: string;
  total_room_count_estimate: number;
}

/** One entry of the page with the token that continues after it (GraphQL cursors). */
export interface PublicRoomsPage extends PublicRoomsResponse {
  cursors: string[];
}

type Direction = "f" | "b";

export function encodeDirectoryToken(dir: Direction, p: DirectoryPosition): string {
  return dir + Buffer.from(JSON.stringify([p.joinedMembers, p.roomId])).toString("base64url");
}

function decodeToken(token: string, name: string): { dir: Direction; at: DirectoryPosition } {
  const bad = () => new MatrixError("M_INVALID_PARAM", `Invalid ${name} token`, 400);
  const dir = token[0];
  if (dir !== "f" && dir !== "b") throw bad();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(token.slice(1), "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  if (!Array.isArray(v) || v.length !== 2 || !Number.isSafeInteger(v[0]) || typeof v[1] !== "string") throw bad();
  return { dir, at: { joinedMembers: v[0] as number, roomId: v[1] as string } };
}

function parseFilter(filter: unknown): { search?: string; roomTypes?: (string | null)[] } {
  if (filter === undefined || filter === null) return {};
  if (!isPlainObject(filter)) throw new MatrixError("M_BAD_JSON", "filter must be an object", 400);
  const out: { search?: string; roomTypes?: (string | null)[] } = {};
  const term = filter.generic_search_term;
  if (term !== undefined && term !== null) {
    if (typeof term !== "string") throw new MatrixError("M_BAD_JSON", "generic_search_term must be a string", 400);
    const t = checkSearchTerm(term, "generic_search_term").trim().toLowerCase();
    if (t !== "") out.search = t;
  }
  const types = filter.room_types;
  if (types !== undefined && types !== null) {
    if (!Array.isArray(types) || types.some((x) => x !== null && typeof x !== "string"))
      throw new MatrixError("M_BAD_JSON", "room_types must be a list of room types (or null)", 400);
    out.roomTypes = types as (string | null)[];
  }
  return out;
}

function chunkOf(d: DirectoryStats): PublicRoomsChunk {
  const c: PublicRoomsChunk = {
    room_id: d.roomId,
    num_joined_members: d.joinedMembers,
    world_readable: d.historyVisibility === "world_readable",
    guest_can_join: d.guestAccess === "can_join",
  };
  if (d.name !== null) c.name = d.name;
  if (d.topic !== null) c.topic = d.topic;
  if (d.canonicalAlias !== null) c.canonical_alias = d.canonicalAlias;
  if (d.avatarUrl !== null) c.avatar_url = d.avatarUrl;
  if (d.joinRule !== null) c.join_rule = d.joinRule;
  if (d.roomType !== null) c.room_type = d.roomType;
  return c;
}

const backfilled = new WeakSet<Services>();

export async function listPublicRooms(s: Services, req: PublicRoomsRequest): Promise<PublicRoomsPage> {
  if (req.server !== undefined && req.server !== s.config.server_name) {
    if (!isValidServerName(req.server)) throw new MatrixError("M_INVALID_PARAM", `Invalid server name: ${req.server}`, 400);
    // Another server's directory is fetched over federation, which this server does not do yet: it answers
    // as Synapse does for a server its federation_domain_whitelist leaves out (FederationDeniedError).
    // Once federation exists, an unreachable server gets Synapse's 502 "Failed to fetch room list".
    throw new MatrixError("M_FORBIDDEN", `Federation denied with ${req.server}.`, 403);
  }
  if (req.limit !== undefined && (!Number.isSafeInteger(req.limit) || req.limit < 0)) throw new MatrixError("M_INVALID_PARAM", "limit must be a non-negative integer", 400);
  const limit = Math.min(req.limit ?? MAX_PUBLIC_ROOMS_PAGE, MAX_PUBLIC_ROOMS_PAGE);
  const since = req.since === undefined ? undefined : decodeToken(req.since, "since");
  const filter = parseFilter(req.filter);

  if (!backfilled.has(s)) {
    await backfillDirectoryStats(s, await s.directory.publishedWithoutStats());
    backfilled.add(s);
  }
  const rows = await s.directory.publishedPage({
    ...filter,
    after: since?.dir === "f" ? since.at : undefined,
    before: since?.dir === "b" ? since.at : undefined,
    limit: limit + 1,
  });
  const backwards = since?.dir === "b";
  // limit + 1 rows tell whether more lie beyond the page in the direction read.
  const more = rows.length > limit;
  const page = backwards ? rows.slice(rows.length - limit) : rows.slice(0, limit);
  if (limit === 0) page.length = 0;
  const pos = (d: DirectoryStats): DirectoryPosition => ({ joinedMembers: d.joinedMembers, roomId: d.roomId });
  const first = page[0];
  const last = page[page.length - 1];
  const res: PublicRoomsPage = {
    chunk: page.map(chunkOf),
    total_room_count_estimate: await s.directory.countPublished(),
    cursors: page.map((d) => encodeDirectoryToken("f", pos(d))),
  };
  const hasNext = backwards ? true : more;
  const hasPrev = backwards ? more : since !== undefined;
  if (last && hasNext) res.next_batch = encodeDirectoryToken("f", pos(last));
  if (first && hasPrev) res.prev_batch = encodeDirectoryToken("b", pos(first));
  return res;
}
