// Room aliases of this server: create, resolve, delete, list a room's local aliases; who may edit a
// room's directory entry; and the room alias pieces other operations use — resolving `/join/{alias}`,
// createRoom's room_alias_name, and the checks of m.room.canonical_alias (M_BAD_ALIAS).
// Spec: Client-Server API "Room aliases" (GET/PUT/DELETE /directory/room/{roomAlias},
// GET /rooms/{roomId}/aliases), "m.room.canonical_alias"; Synapse's rules where the spec leaves room.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { byteLength, MAX_ID_BYTES, parseRoomAlias, tryParseRoomId } from "../ids.ts";
import { currentStateEvent, loadRoom } from "../rooms/room-cache.ts";
import { powerLevelsOf } from "../rooms/power-levels.ts";
import { appendEvent, type AlreadyDone } from "../rooms/append.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import { roomNotVisible } from "../rooms/read-access.ts";
import { roomSummaries } from "../rooms/batch-reads.ts";
import type { EventDraft } from "../rooms/build-event.ts";
import { appServiceById, exclusiveAliasOwner, isInNamespace } from "../accounts/appservices.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { resolveRemoteAlias } from "../federation/remote-alias.ts";
import { remoteServersInRoom } from "../federation/room-servers.ts";

const WHITESPACE = /\s/u;

/** Parses a room alias as a client names it; M_INVALID_PARAM when malformed (whitespace refused, as Synapse). */
export function parseAliasParam(alias: string): { localpart: string; serverName: string } {
  const parsed = parseRoomAlias(alias);
  if (WHITESPACE.test(parsed.localpart)) throw new MatrixError("M_INVALID_PARAM", "Invalid characters in room alias", 400);
  return parsed;
}

function isLocal(s: Services, serverName: string): boolean {
  return serverName === s.config.server_name;
}

function roomIdParam(roomId: unknown): string {
  if (roomId === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing room_id", 400);
  if (typeof roomId !== "string") throw new MatrixError("M_BAD_JSON", "room_id must be a string", 400);
  if (!tryParseRoomId(roomId)) throw new MatrixError("M_INVALID_PARAM", `Invalid room id: ${JSON.stringify(roomId)}`, 400);
  return roomId;
}

/**
 * Application services' alias namespaces (spec: Application Service API "Registration"): an exclusive one
 * is closed to everyone else, and a service only makes aliases in its own (400 M_EXCLUSIVE, as Synapse).
 */
export function checkAliasNamespace(s: Services, r: Requester, alias: string): void {
  if (r.appserviceId) {
    const as = appServiceById(s.config, r.appserviceId);
    if (!as || !isInNamespace(as, "aliases", alias))
      throw new MatrixError("M_EXCLUSIVE", "This application service has not reserved this kind of alias", 400);
    return;
  }
  if (exclusiveAliasOwner(s.config, alias)) throw new MatrixError("M_EXCLUSIVE", "This alias is reserved by an application service", 400);
}

/** The room id a local alias points to, if any (registered as an alias resolver for /join and /knock). */
export async function resolveLocalAlias(s: Services, alias: string): Promise<string | undefined> {
  return (await s.directory.getAlias(alias))?.roomId;
}

/**
 * May `r` edit the room's directory entry (publish it, delete others' aliases)? Server admins may; else a
 * joined member with the power to send m.room.canonical_alias (Synapse's check_can_change_room_list).
 */
export async function canEditDirectoryEntry(s: Services, r: Requester, roomId: string): Promise<boolean> {
  if (r.isAdmin) return true;
  const room = await loadRoom(s, roomId);
  if (!room) return false;
  if ((await s.rooms.store.membership(roomId, r.userId))?.membership !== "join") return false;
  const powers = await powerLevelsOf(s, room);
  return powers.user(r.userId) >= powers.event("m.room.canonical_alias", true);
}

/** PUT /directory/room/{roomAlias}. */
export async function createAlias(s: Services, r: Requester, alias: string, body: Record<string, unknown>): Promise<void> {
  requireNotGuest(r, "createAlias");
  const { serverName } = parseAliasParam(alias);
  if (!isLocal(s, serverName)) throw new MatrixError("M_INVALID_PARAM", "Room alias must be local", 400);
  const roomId = roomIdParam(body.room_id);
  checkAliasNamespace(s, r, alias);
  if (!(await loadRoom(s, roomId))) throw new MatrixError("M_NOT_FOUND", "Room not found", 404);
  // Synapse's require_membership_for_aliases (on by default): only members name a room.
  // Application services name rooms of their alias namespace without being in them (as Synapse).
  if (!r.isAdmin && !r.appserviceId && (await s.rooms.store.membership(roomId, r.userId))?.membership !== "join")
    throw new MatrixError("M_FORBIDDEN", "You must be in the room to create an alias for it", 403);
  const inserted = await s.directory.insertAlias(s.storage.sql, { alias, roomId, creator: r.userId }, s.clock.now());
  if (!inserted) throw new MatrixError("M_UNKNOWN", `Room alias ${alias} already exists`, 409);
}

/**
 * GET /directory/room/{roomAlias}: the room and the servers that know it — for our aliases, ours first and
 * then the servers of the room's joined members; for another server's, what that server answers
 * (src/domain/federation/remote-alias.ts). A local alias unknown here goes through the alias resolvers
 * (an application service may create it).
 */
export async function getAlias(s: Services, alias: string): Promise<{ room_id: string; servers: string[] }> {
  const { serverName } = parseAliasParam(alias);
  if (!isLocal(s, serverName)) {
    const found = await resolveRemoteAlias(s, alias);
    return { room_id: found.roomId, servers: found.servers };
  }
  let roomId: string | undefined;
  for (const resolve of s.extensions.aliasResolvers) if ((roomId = await resolve(s, alias))) break;
  if (!roomId) throw new MatrixError("M_NOT_FOUND", `Room alias ${alias} not found`, 404);
  return { room_id: roomId, servers: [s.config.server_name, ...(await remoteServersInRoom(s, roomId))] };
}

/**
 * DELETE /directory/room/{roomAlias}: by the alias's creator, a room admin or a server admin. When the alias
 * is listed in the room's m.room.canonical_alias, it is removed from it too (as Synapse does) — best effort:
 * the deletion stands even if the requester may not change that event (the spec's recommendation).
 */
export async function deleteAlias(s: Services, r: Requester, alias: string): Promise<void> {
  requireNotGuest(r, "deleteAlias");
  const { serverName } = parseAliasParam(alias);
  if (!isLocal(s, serverName)) throw new MatrixError("M_INVALID_PARAM", "Room alias must be local", 400);
  const row = await s.directory.getAlias(alias);
  if (!row) throw new MatrixError("M_NOT_FOUND", `Room alias ${alias} not found`, 404);
  if (row.creator !== r.userId && !(await canEditDirectoryEntry(s, r, row.roomId)))
    throw new MatrixError("M_FORBIDDEN", "You don't have permission to delete the alias", 403);
  checkAliasNamespace(s, r, alias);
  if (!(await s.directory.deleteAlias(alias))) throw new MatrixError("M_NOT_FOUND", `Room alias ${alias} not found`, 404);
  try {
    await removeFromCanonicalAlias(s, r, row.roomId, alias);
  } catch (err) {
    s.log.info({ err, alias, roomId: row.roomId }, "alias deleted; could not update m.room.canonical_alias");
  }
}

async function removeFromCanonicalAlias(s: Services, r: Requester, roomId: string, alias: string): Promise<void> {
  const room = await loadRoom(s, roomId);
  const current = room ? await currentStateEvent(s, room, "m.room.canonical_alias") : undefined;
  if (!current || !mentions(current.content, alias)) return;
  await appendEvent(s, roomId, async (room): Promise<EventDraft | AlreadyDone> => {
    // State is replaced, never removed: the event seen above (or a newer one) is still there.
    const id = room.state.get(stateKeyOf("m.room.canonical_alias", ""))!;
    const now = (await s.rooms.events.get(id))!;
    if (!mentions(now.pdu.content, alias)) return { alreadyDone: now }; // a concurrent request removed it
    const content = { ...now.pdu.content };
    if (content.alias === alias) delete content.alias;
    if (Array.isArray(content.alt_aliases)) content.alt_aliases = content.alt_aliases.filter((a) => a !== alias);
    return { type: "m.room.canonical_alias", stateKey: "", sender: r.userId, content };
  });
}

function mentions(content: Record<string, unknown>, alias: string): boolean {
  return content.alias === alias || (Array.isArray(content.alt_aliases) && content.alt_aliases.includes(alias));
}

/**
 * Who may list a room's local aliases (GET /rooms/{roomId}/aliases), for many rooms at once: server admins
 * (any existing room), joined members, and anyone while the room is world_readable; never guests. Each
 * room maps to its aliases or to the refusal. A few queries for the whole batch (the room summaries).
 */
export async function aliasesOfRooms(s: Services, r: Requester, roomIds: readonly string[]): Promise<Map<string, string[] | MatrixError>> {
  requireNotGuest(r, "localAliases");
  const out = new Map<string, string[] | MatrixError>();
  const allowed: string[] = [];
  const summaries = r.isAdmin ? undefined : await roomSummaries(s, r, roomIds);
  for (const roomId of new Set(roomIds)) {
    if (!tryParseRoomId(roomId)) out.set(roomId, new MatrixError("M_INVALID_PARAM", `Invalid room id: ${JSON.stringify(roomId)}`, 400));
    else if (!summaries) {
      if (await loadRoom(s, roomId)) allowed.push(roomId);
      else out.set(roomId, new MatrixError("M_NOT_FOUND", "Room not found", 404));
    } else {
      const summary = summaries.get(roomId);
      if (!summary) out.set(roomId, roomNotVisible());
      // Former members read history up to their leave, but are no longer "in the room".
      else if (summary.membership !== "join" && !summary.worldReadable) out.set(roomId, new MatrixError("M_FORBIDDEN", "You are not in this room", 403));
      else allowed.push(roomId);
    }
  }
  const aliases = await s.directory.aliasesOfRooms(allowed);
  for (const roomId of allowed) out.set(roomId, aliases.get(roomId) ?? []);
  return out;
}

/** GET /rooms/{roomId}/aliases. */
export async function localAliases(s: Services, r: Requester, roomId: string): Promise<{ aliases: string[] }> {
  const found = (await aliasesOfRooms(s, r, [roomId])).get(roomId)!;
  if (found instanceof MatrixError) throw found;
  return { aliases: found };
}

// ---------------------------------------------------------------------------------------------------
// m.room.canonical_alias

/** A listed alias that is not a room alias at all: M_INVALID_PARAM (as Synapse); M_BAD_ALIAS is for real aliases elsewhere. */
function checkAliasValue(v: unknown): string {
  if (typeof v !== "string") throw new MatrixError("M_INVALID_PARAM", "Aliases must be strings", 400);
  try {
    parseAliasParam(v);
  } catch {
    throw new MatrixError("M_INVALID_PARAM", `Invalid alias: ${JSON.stringify(v)}`, 400);
  }
  return v;
}

/** The aliases an m.room.canonical_alias content lists (`alias` and `alt_aliases`), each checked to be one (else M_INVALID_PARAM). */
function listedAliases(content: Record<string, unknown>): string[] {
  const listed: string[] = [];
  if (content.alias !== undefined && content.alias !== null) listed.push(checkAliasValue(content.alias));
  if (content.alt_aliases !== undefined) {
    if (!Array.isArray(content.alt_aliases)) throw new MatrixError("M_INVALID_PARAM", "The alt_aliases property must be a list", 400);
    for (const a of content.alt_aliases) listed.push(checkAliasValue(a));
  }
  return [...new Set(listed)];
}

/** The aliases `content` lists that `previous` (the current event) does not: only those are checked (spec). */
function newlyListed(content: Record<string, unknown>, previous: Record<string, unknown> | undefined): string[] {
  const before = new Set<unknown>([previous?.alias, ...(Array.isArray(previous?.alt_aliases) ? previous.alt_aliases : [])]);
  return listedAliases(content).filter((a) => !before.has(a));
}

const pointsElsewhere = (alias: string) => new MatrixError("M_BAD_ALIAS", `Room alias ${alias} does not point to the room`, 400);

/**
 * Checks an m.room.canonical_alias a local client sends: `alias` and `alt_aliases` must be aliases (else
 * 400 M_INVALID_PARAM); those newly listed that are ours must exist and point to this room, else 400
 * M_BAD_ALIAS (others' are asked of their servers before the room's lane: checkRemoteCanonicalAliases).
 * Aliases already in the current event are not checked again (spec).
 */
export async function checkCanonicalAlias(s: Services, roomId: string, content: Record<string, unknown>, previous: Record<string, unknown> | undefined): Promise<void> {
  for (const alias of newlyListed(content, previous)) {
    if (!isLocal(s, parseRoomAlias(alias).serverName)) continue;
    const row = await s.directory.getAlias(alias);
    if (row?.roomId !== roomId) throw pointsElsewhere(alias);
  }
}

/**
 * The newly listed aliases of other servers, asked of those servers (as Synapse does), all at once: one
 * that server does not know, or that points to another room, is 400 M_BAD_ALIAS; a server that cannot
 * answer fails the request as the query does (502). Run before the room's lane, so that no other server
 * holds up the room's events; against the current event as it is then.
 */
export async function checkRemoteCanonicalAliases(s: Services, roomId: string, content: Record<string, unknown>, previous: Record<string, unknown> | undefined): Promise<void> {
  const remote = newlyListed(content, previous).filter((a) => !isLocal(s, parseRoomAlias(a).serverName));
  await Promise.all(
    remote.map(async (alias) => {
      const found = await resolveRemoteAlias(s, alias).catch((err: unknown) => {
        if (err instanceof MatrixError && err.errcode === "M_NOT_FOUND") throw pointsElsewhere(alias);
        throw err;
      });
      if (found.roomId !== roomId) throw pointsElsewhere(alias);
    }),
  );
}

/** createRoom's room_alias_name: the full alias it asks for, M_INVALID_PARAM when malformed. */
export function aliasFromName(s: Services, name: unknown): string | undefined {
  if (name === undefined || name === null) return undefined;
  if (typeof name !== "string") throw new MatrixError("M_BAD_JSON", "room_alias_name must be a string", 400);
  if (name === "" || name.includes(":") || WHITESPACE.test(name)) throw new MatrixError("M_INVALID_PARAM", "Invalid characters in room alias", 400);
  const alias = `#${name}:${s.config.server_name}`;
  if (byteLength(alias) > MAX_ID_BYTES) throw new MatrixError("M_INVALID_PARAM", "Room alias is too long", 400);
  parseAliasParam(alias);
  return alias;
}
