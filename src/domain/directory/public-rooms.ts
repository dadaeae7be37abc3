// The published room directory of this server (GET and POST /publicRooms): rooms published with
// visibility "public", most joined members first (as Synapse), filtered by a search term (name, topic,
// canonical alias, room id; case-insensitive) and room types, paged with opaque since tokens both ways.
// POST may read an application service network's list instead (third_party_instance_id) or all lists
// together (include_all_networks). A page is one query over room_directory_stats (stats.ts), more when
// rooms a reader may not see are left out (another server: rooms that do not federate).
// Spec: Client-Server API "Listing rooms"; Application Service API "Published room directories".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { isPlainObject } from "../events/types.ts";
import { isValidServerName } from "../ids.ts";
import { shownSummaryField } from "../rooms/summary-fields.ts";
import type { DirectoryList, DirectoryPosition, DirectoryQuery, DirectoryStats } from "../store/directory.ts";
import { RoomBatchReads } from "../store/rooms.ts";
import { backfillDirectoryStats } from "./stats.ts";
import type { Requester } from "../accounts/requester.ts";
import { remotePublicRooms } from "./remote-public-rooms.ts";
import { checkSearchTerm } from "../text.ts";

/** Largest page one call returns (a request without a limit gets this many). */
export const MAX_PUBLIC_ROOMS_PAGE = 1000;

export interface PublicRoomsRequest {
  limit?: number;
  since?: string;
  server?: string;
  filter?: unknown;
  /** An application service network's list ("<service id>|<network id>", from /thirdparty/protocols). */
  third_party_instance_id?: string;
  /** The server's list and every network's together. */
  include_all_networks?: boolean;
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
  const alias = shownSummaryField("canonical_alias", d.canonicalAlias);
  if (alias !== undefined) c.canonical_alias = alias;
  const avatar = shownSummaryField("avatar_url", d.avatarUrl);
  if (avatar !== undefined) c.avatar_url = avatar;
  if (d.joinRule !== null) c.join_rule = d.joinRule;
  if (d.roomType !== null) c.room_type = d.roomType;
  return c;
}

/** The JSON body of POST /publicRooms (client and federation): M_BAD_JSON for a non-integer limit or non-string since. */
export function publicRoomsBody(b: Record<string, unknown>): Omit<PublicRoomsRequest, "server"> {
  if (b.limit !== undefined && b.limit !== null && typeof b.limit !== "number") throw new MatrixError("M_BAD_JSON", "limit must be an integer", 400);
  if (b.since !== undefined && b.since !== null && typeof b.since !== "string") throw new MatrixError("M_BAD_JSON", "since must be a string", 400);
  const instance = b.third_party_instance_id;
  if (instance !== undefined && instance !== null && typeof instance !== "string") throw new MatrixError("M_BAD_JSON", "third_party_instance_id must be a string", 400);
  const all = b.include_all_networks;
  if (all !== undefined && all !== null && typeof all !== "boolean") throw new MatrixError("M_BAD_JSON", "include_all_networks must be a boolean", 400);
  return {
    limit: (b.limit as number | null) ?? undefined,
    since: (b.since as string | null) ?? undefined,
    filter: b.filter,
    ...(typeof instance === "string" ? { third_party_instance_id: instance } : {}),
    ...(all === true ? { include_all_networks: true } : {}),
  };
}

/** Which list a request reads (Synapse's rules: not both include_all_networks and an instance). */
function directoryList(req: Omit<PublicRoomsRequest, "server">): DirectoryList {
  if (req.include_all_networks) {
    if (req.third_party_instance_id !== undefined) throw new MatrixError("M_INVALID_PARAM", "Can't use include_all_networks with an explicit network", 400);
    return { kind: "all" };
  }
  if (req.third_party_instance_id === undefined) return { kind: "main" };
  const bar = req.third_party_instance_id.indexOf("|");
  if (bar <= 0 || bar === req.third_party_instance_id.length - 1)
    throw new MatrixError("M_INVALID_PARAM", "third_party_instance_id must be an instance_id from /thirdparty/protocols", 400);
  return { kind: "network", appserviceId: req.third_party_instance_id.slice(0, bar), networkId: req.third_party_instance_id.slice(bar + 1) };
}

/**
 * Another server reading our directory (GET/POST /_matrix/federation/v1/publicRooms): only with
 * allow_public_rooms_over_federation (Synapse's option, default false); rooms created with
 * `m.federate: false` left out before paging (as Synapse's ignore_non_federatable), so a page is full and
 * its tokens continue after what it shows. Spec: Server-Server API "Published Room Directory".
 */
export async function federationPublicRooms(s: Services, req: Omit<PublicRoomsRequest, "server">): Promise<PublicRoomsResponse> {
  if (!s.config.allow_public_rooms_over_federation)
    throw new MatrixError("M_FORBIDDEN", `You are not allowed to view the public rooms list of ${s.config.server_name}`, 403);
  const { cursors: _c, ...page } = await readLocalDirectory(s, req, (rows) => federatingRooms(s, rows.map((d) => d.roomId)));
  return page;
}

/** The rooms among `roomIds` whose create event does not say `m.federate: false` (two batch reads). */
async function federatingRooms(s: Services, roomIds: readonly string[]): Promise<Set<string>> {
  const creates = await new RoomBatchReads(s.storage.sql).currentStateOfTypes(roomIds, ["m.room.create"]);
  const events = await s.rooms.events.getMany([...creates.values()].map((m) => m.get("m.room.create")!));
  return new Set(roomIds.filter((id) => events.get(creates.get(id)?.get("m.room.create") ?? "")?.pdu.content["m.federate"] !== false));
}

/** Who may list the directory: anyone with an access token; without one, only if allow_public_rooms_without_auth. */
export function requirePublicRoomsAccess(s: Services, r: Requester | undefined): void {
  if (!r && !s.config.allow_public_rooms_without_auth) throw new MatrixError("M_MISSING_TOKEN", "Missing access token", 401);
}

/** GET/POST /publicRooms for `r` (undefined: a request without an access token). */
export async function listPublicRooms(s: Services, r: Requester | undefined, req: PublicRoomsRequest): Promise<PublicRoomsPage> {
  requirePublicRoomsAccess(s, r);
  if (req.server !== undefined && req.server !== s.config.server_name) {
    if (!isValidServerName(req.server)) throw new MatrixError("M_INVALID_PARAM", `Invalid server name: ${req.server}`, 400);
    if (req.limit !== undefined && (!Number.isSafeInteger(req.limit) || req.limit < 0)) throw new MatrixError("M_INVALID_PARAM", "limit must be a non-negative integer", 400);
    return remotePublicRooms(s, req.server, req);
  }
  return readLocalDirectory(s, req);
}

/** Which of a page's rooms a reader may see (undefined: all). */
type KeepRooms = (rows: DirectoryStats[]) => Promise<ReadonlySet<string>>;

/**
 * `wanted` rows of the directory from `since` on, in the direction read, of those `keep` lets through:
 * pages are read until enough are kept or the list ends. Returned in directory order.
 */
async function keptRows(s: Services, query: Omit<DirectoryQuery, "after" | "before" | "limit">, since: { dir: Direction; at: DirectoryPosition } | undefined, wanted: number, keep?: KeepRooms): Promise<DirectoryStats[]> {
  const backwards = since?.dir === "b";
  let at = since?.at;
  const out: DirectoryStats[] = [];
  for (;;) {
    const rows = await s.directory.publishedPage({ ...query, after: backwards ? undefined : at, before: backwards ? at : undefined, limit: wanted });
    const kept = keep ? await keep(rows) : undefined;
    const pass = kept ? rows.filter((d) => kept.has(d.roomId)) : rows;
    if (backwards) out.unshift(...pass);
    else out.push(...pass);
    if (rows.length < wanted || out.length >= wanted || !keep) return out;
    const edge = backwards ? rows[0]! : rows[rows.length - 1]!;
    at = { joinedMembers: edge.joinedMembers, roomId: edge.roomId };
  }
}

/** A page of this server's published directory (the caller decided who may read it, and `keep` which rooms). */
async function readLocalDirectory(s: Services, req: Omit<PublicRoomsRequest, "server">, keep?: KeepRooms): Promise<PublicRoomsPage> {
  if (req.limit !== undefined && (!Number.isSafeInteger(req.limit) || req.limit < 0)) throw new MatrixError("M_INVALID_PARAM", "limit must be a non-negative integer", 400);
  const limit = Math.min(req.limit ?? MAX_PUBLIC_ROOMS_PAGE, MAX_PUBLIC_ROOMS_PAGE);
  const since = req.since === undefined ? undefined : decodeToken(req.since, "since");
  const filter = parseFilter(req.filter);
  const list = directoryList(req);

  if (!s.processState.directoryStatsFilled) {
    await backfillDirectoryStats(s, await s.directory.publishedWithoutStats());
    s.processState.directoryStatsFilled = true;
  }
  // limit + 1 rows tell whether more lie beyond the page in the direction read.
  const rows = await keptRows(s, { ...filter, list }, since, limit + 1, keep);
  const backwards = since?.dir === "b";
  const more = rows.length > limit;
  const page = backwards ? rows.slice(Math.max(0, rows.length - limit)) : rows.slice(0, limit);
  if (limit === 0) page.length = 0;
  const pos = (d: DirectoryStats): DirectoryPosition => ({ joinedMembers: d.joinedMembers, roomId: d.roomId });
  const first = page[0];
  const last = page[page.length - 1];
  const res: PublicRoomsPage = {
    chunk: page.map(chunkOf),
    total_room_count_estimate: await s.directory.countPublished(list),
    cursors: page.map((d) => encodeDirectoryToken("f", pos(d))),
  };
  const hasNext = backwards ? true : more;
  const hasPrev = backwards ? more : since !== undefined;
  if (last && hasNext) res.next_batch = encodeDirectoryToken("f", pos(last));
  if (first && hasPrev) res.prev_batch = encodeDirectoryToken("b", pos(first));
  return res;
}
