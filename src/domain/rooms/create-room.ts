// POST /createRoom: the create event, the creator's join, power levels (with the override), preset
// state (join rules, history visibility, guest access), initial_state, name, topic and invites — all
// built in order, authorized, and committed in one transaction; then the invites of users on other
// servers (over federation) and the third-party invites of invite_3pid. Spec: Client-Server API "Creation".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { getRoomVersion, type RoomVersion } from "./room-versions.ts";
import { buildEvent, type EventDraft } from "./build-event.ts";
import { persistDrafts } from "./persist.ts";
import { newRoomSnapshot } from "./room-cache.ts";
import { roomIdFromCreateEvent } from "../events/hashes.ts";
import { parseUserId } from "../ids.ts";
import { newOwnRoomId, ownCreateEvent } from "../cluster/room-ids.ts";
import { runOnWriter, writerElsewhere } from "../cluster/stream-ops.ts";
import { isPlainObject } from "../events/types.ts";
import { memberContentFor } from "./membership.ts";
import { NAMED_LEVEL_DEFAULTS } from "../auth/index.ts";
import { checkPowerLevelsContent } from "./power-levels.ts";
import type { SqlExecutor } from "../../storage/sql.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { assertAclKeepsServer } from "../federation/server-acl.ts";
import { lookupThirdParty, parseThirdPartyInvite } from "../threepids/third-party-invite.ts";
import { inviteByThirdPartyId, inviteUser } from "./membership.ts";
import { assertLocalInviteAllowed } from "../account-data/invite-filter.ts";
import { requireNotSuspended } from "../accounts/moderation.ts";

export interface CreateRoomRequest {
  visibility?: unknown;
  room_alias_name?: unknown;
  name?: unknown;
  topic?: unknown;
  invite?: unknown;
  invite_3pid?: unknown;
  room_version?: unknown;
  creation_content?: unknown;
  initial_state?: unknown;
  preset?: unknown;
  is_direct?: unknown;
  power_level_content_override?: unknown;
}

const PRESETS = ["private_chat", "public_chat", "trusted_private_chat"] as const;
type Preset = (typeof PRESETS)[number];

/** What a capability adds to room creation (aliases from room_alias_name, encryption defaults ...; src/main.ts). */
export interface CreateRoomExtension {
  /** Adds drafts after the preset state; may refuse the request. */
  extraState?: (s: Services, r: Requester, req: CreateRoomRequest, roomId: string, version: RoomVersion) => Promise<EventDraft[]>;
  /** A write to make in the room's commit transaction (e.g. the alias row); it may throw to refuse. */
  alsoWrite?: (s: Services, r: Requester, req: CreateRoomRequest, roomId: string) => ((tx: SqlExecutor) => Promise<void>) | undefined;
}

type InitialStateEntry = { type: string; state_key?: string; content: Record<string, unknown> };

/** What other domain operations (room upgrades) add to a room creation; not reachable from a request. */
export interface CreateRoomInternal {
  /** The room id, chosen beforehand (only for versions whose room id is not the create event's hash). */
  roomId?: string;
  /** The initial state, made once the room id is known (replaces the request's initial_state). */
  initialStateFor?: (roomId: string) => InitialStateEntry[];
  /** Drafts sent after everything else, in the same commit. */
  finalDrafts?: EventDraft[];
  /** Extra writes in the room's commit transaction. */
  alsoWrite?: (tx: SqlExecutor, roomId: string) => Promise<void>;
  /** The creator's join content instead of their profile's (the server notices user's configured one). */
  creatorMemberContent?: Record<string, unknown>;
  /** No state from the createRoom extensions (a server notices room is never encrypted by default). */
  withoutExtensionState?: boolean;
}

function optString(v: unknown, name: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new MatrixError("M_BAD_JSON", `${name} must be a string`);
  return v;
}

function parseRequest(s: Services, req: CreateRoomRequest) {
  const version = optString(req.room_version, "room_version") ?? s.config.default_room_version;
  const v = getRoomVersion(version);
  if (!v) throw new MatrixError("M_UNSUPPORTED_ROOM_VERSION", `Unknown room version ${version}`, 400);
  const visibility = optString(req.visibility, "visibility") ?? "private";
  if (visibility !== "public" && visibility !== "private") throw new MatrixError("M_INVALID_PARAM", "visibility must be public or private", 400);
  const preset = (optString(req.preset, "preset") ?? (visibility === "public" ? "public_chat" : "private_chat")) as Preset;
  if (!PRESETS.includes(preset)) throw new MatrixError("M_INVALID_PARAM", `Unknown preset ${preset}`, 400);
  const invites = req.invite ?? [];
  if (!Array.isArray(invites) || invites.some((u) => typeof u !== "string")) throw new MatrixError("M_BAD_JSON", "invite must be a list of user ids");
  for (const u of invites as string[]) parseUserId(u);
  // Third-party invites are checked before anything is made, and sent once the room exists (as Synapse).
  const invites3pid = req.invite_3pid ?? [];
  if (!Array.isArray(invites3pid)) throw new MatrixError("M_BAD_JSON", "invite_3pid must be a list", 400);
  const thirdParty = invites3pid.map((e) => {
    if (!isPlainObject(e)) throw new MatrixError("M_BAD_JSON", "invite_3pid entries must be objects", 400);
    return parseThirdPartyInvite(e);
  });
  const creation = req.creation_content ?? {};
  if (!isPlainObject(creation)) throw new MatrixError("M_BAD_JSON", "creation_content must be an object");
  const initial = req.initial_state ?? [];
  if (!Array.isArray(initial)) throw new MatrixError("M_BAD_JSON", "initial_state must be a list");
  for (const e of initial) {
    if (!isPlainObject(e) || typeof e.type !== "string" || !isPlainObject(e.content) || (e.state_key !== undefined && typeof e.state_key !== "string"))
      throw new MatrixError("M_BAD_JSON", "initial_state entries need type, content and an optional string state_key");
    if (e.type === "m.room.server_acl" && (e.state_key ?? "") === "") assertAclKeepsServer(s, e.content);
  }
  const plOverride = req.power_level_content_override ?? {};
  if (!isPlainObject(plOverride)) throw new MatrixError("M_BAD_JSON", "power_level_content_override must be an object");
  if (req.is_direct !== undefined && typeof req.is_direct !== "boolean") throw new MatrixError("M_BAD_JSON", "is_direct must be a boolean");
  return {
    v,
    visibility,
    preset,
    invites: [...new Set(invites as string[])],
    creation,
    initial: initial as { type: string; state_key?: string; content: Record<string, unknown> }[],
    plOverride,
    name: optString(req.name, "name"),
    topic: optString(req.topic, "topic"),
    isDirect: req.is_direct === true,
    thirdParty,
  };
}

export async function createRoom(s: Services, r: Requester, req: CreateRoomRequest, internal: CreateRoomInternal = {}): Promise<{ room_id: string }> {
  requireNotGuest(r, "createRoom");
  requireNotSuspended(r, "Creating rooms");
  // On a process that writes no events, an events writer makes the room (cluster/stream-ops.ts); the
  // internal callers (upgrades, admin) run where the room's writer is already.
  const writer = Object.keys(internal).length === 0 ? writerElsewhere(s, "createRoom") : undefined;
  if (writer) return runOnWriter(s, writer, "createRoom", r, [req]);
  const p = parseRequest(s, req);
  const { v } = p;
  const me = r.userId;
  // Local invitees are invited in the room's first commit; remote ones once it exists, over federation.
  const remoteInvites = p.invites.filter((u) => parseUserId(u).serverName !== s.config.server_name);
  const localInvites = p.invites.filter((u) => !remoteInvites.includes(u));
  for (const u of localInvites) {
    if (!(await s.users.exists(u))) throw new MatrixError("M_NOT_FOUND", `Unknown user ${u}`, 404);
    // An invitee whose invite rules block the creator: 403 M_INVITE_BLOCKED before anything is made (Synapse
    // makes the room first and answers the 403 with the room left behind; the spec allows either).
    await assertLocalInviteAllowed(s, r, u);
  }
  // The identity servers are asked whom each address belongs to before anything is made: one that is
  // unreachable or refuses fails the request with no room made.
  const lookedUp = [];
  for (const t of p.thirdParty) lookedUp.push(await lookupThirdParty(s, t));

  // The create event decides the room id in v12, so it is built first.
  const createContent: Record<string, unknown> = { ...p.creation, room_version: v.id };
  if (v.createHasCreator) createContent.creator = me;
  else delete createContent.creator;
  // v12+: trusted_private_chat makes the invitees creators too (spec createRoom, v1.16), merged with any
  // additional_creators the request names.
  if (v.additionalCreators && p.preset === "trusted_private_chat" && p.invites.length > 0) {
    const named = Array.isArray(createContent.additional_creators) ? (createContent.additional_creators as unknown[]) : [];
    createContent.additional_creators = [...new Set([...named, ...p.invites])];
  }
  // With several events writers, an id this process writes (cluster/room-ids.ts).
  const provisionalId = v.roomIdIsCreateEventHash ? undefined : (internal.roomId ?? newOwnRoomId(s));
  const buildCreate = (offsetMs: number) =>
    buildEvent(s, { roomId: provisionalId, version: v, state: new Map(), extremities: [], maxDepth: 0 }, { type: "m.room.create", stateKey: "", sender: me, content: createContent, ...(offsetMs > 0 ? { originServerTs: s.clock.now() + offsetMs } : {}) });
  const createBuilt = provisionalId === undefined && s.topology.distributed ? await ownCreateEvent(s, buildCreate, (b) => roomIdFromCreateEvent(b.pdu, v)) : await buildCreate(0);
  const roomId = provisionalId ?? roomIdFromCreateEvent(createBuilt.pdu, v);
  const room = newRoomSnapshot(roomId, v, createBuilt.pdu, createBuilt.eventId);

  const creators = new Set([me, ...(v.additionalCreators && Array.isArray(createContent.additional_creators) ? (createContent.additional_creators as string[]) : [])]);
  const users: Record<string, number> = {};
  if (!v.privilegedCreators) users[me] = 100;
  if (p.preset === "trusted_private_chat") for (const u of p.invites) if (!(v.privilegedCreators && creators.has(u))) users[u] = 100;
  const powerLevels: Record<string, unknown> = {
    users,
    events: {
      "m.room.name": 50,
      "m.room.power_levels": 100,
      "m.room.history_visibility": 100,
      "m.room.canonical_alias": 50,
      "m.room.avatar": 50,
      // v12+: must be above state_default and the creators' unlimited power is not listed (spec createRoom).
      "m.room.tombstone": v.privilegedCreators ? 150 : 100,
      "m.room.server_acl": 100,
      "m.room.encryption": 100,
    },
    ...NAMED_LEVEL_DEFAULTS,
    // Synapse's presets: anyone may invite to a private room; public rooms need moderators (50).
    invite: p.preset === "public_chat" ? 50 : 0,
    historical: 100,
    ...p.plOverride,
  };

  // initial_state replaces what a preset would send (as in Synapse): the preset's event for the same key
  // is left out rather than sent and then overridden. A power_levels entry replaces the generated one in
  // its place (the override does not apply to it). The request's explicit name and topic win over it.
  const initialList = internal.initialStateFor ? internal.initialStateFor(roomId) : p.initial;
  const initial = new Map(initialList.map((e) => [`${e.type}\u0000${e.state_key ?? ""}`, e]));
  const initialPl = initial.get("m.room.power_levels\u0000");
  checkPowerLevelsContent(initialPl?.content ?? powerLevels);
  const preset = (type: string, content: Record<string, unknown>): EventDraft[] =>
    initial.has(`${type}\u0000`) ? [] : [{ type, stateKey: "", sender: me, content }];
  const drafts: EventDraft[] = [
    { type: "m.room.member", stateKey: me, sender: me, content: internal.creatorMemberContent ?? (await memberContentFor(s, me, "join")) },
    { type: "m.room.power_levels", stateKey: "", sender: me, content: initialPl?.content ?? powerLevels },
    ...preset("m.room.join_rules", { join_rule: p.preset === "public_chat" ? "public" : "invite" }),
    ...preset("m.room.history_visibility", { history_visibility: "shared" }),
    ...(p.preset !== "public_chat" ? preset("m.room.guest_access", { guest_access: "can_join" }) : []),
  ];
  if (!internal.withoutExtensionState)
    for (const hook of s.extensions.createRoom) if (hook.extraState) drafts.push(...(await hook.extraState(s, r, req, roomId, v)));
  for (const e of initialList) {
    if (e === initialPl) continue;
    drafts.push({ type: e.type, stateKey: e.state_key ?? "", sender: me, content: e.content });
  }
  if (p.name !== undefined) drafts.push({ type: "m.room.name", stateKey: "", sender: me, content: { name: p.name } });
  // m.topic is a TopicContentBlock: `{ "m.text": [TextualRepresentation] }` (spec m.room.topic, v1.15).
  if (p.topic !== undefined) drafts.push({ type: "m.room.topic", stateKey: "", sender: me, content: { topic: p.topic, "m.topic": { "m.text": [{ body: p.topic, mimetype: "text/plain" }] } } });
  for (const u of localInvites) {
    const content = await memberContentFor(s, u, "invite");
    if (p.isDirect) content.is_direct = true;
    drafts.push({ type: "m.room.member", stateKey: u, sender: me, content });
  }
  drafts.push(...(internal.finalDrafts ?? []));
  const writes = s.extensions.createRoom.map((h) => h.alsoWrite?.(s, r, req, roomId)).filter((w) => w !== undefined);

  const row = { roomId, roomVersion: v.id, creator: me, isPublic: p.visibility === "public" };
  await s.rooms.lanes.run(roomId, () =>
    persistDrafts(s, room, [createBuilt, ...drafts], {
      alsoWrite: async (tx) => {
        await s.rooms.store.insertRoom(tx, row, s.clock.now());
        for (const w of writes) await w(tx);
        await internal.alsoWrite?.(tx, roomId);
      },
    }),
  );
  // Each after the other, as the creator, through the /invite operation (a remote server or an identity
  // server that fails to take an invite now makes the request fail with the room made, as in Synapse).
  for (const u of remoteInvites) await inviteUser(s, r, roomId, p.isDirect ? { user_id: u, is_direct: true } : { user_id: u });
  for (const [i, t] of p.thirdParty.entries()) await inviteByThirdPartyId(s, r, roomId, t, lookedUp[i]);
  return { room_id: roomId };
}
