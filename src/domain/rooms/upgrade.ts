// Room upgrades (POST /rooms/{roomId}/upgrade): a replacement room of the new version whose create event
// names its predecessor, with the old room's transferable state copied (name, topic, avatar, join rules
// — restricted allow lists pointing at the old room now point at the new one —, guest access, history
// visibility, encryption, server ACL, power levels, space links, room type; guest access "forbidden" when
// the old room had none, which is what its absence meant), the upgrader's power raised
// while the copy is made and then restored, bans copied, local aliases moved and the canonical alias set
// once in the new room; then the tombstone in the old room, the old room's local aliases taken out of
// its m.room.canonical_alias, and its power levels raised to restrict it (events_default and invite).
// Members of an invite-only room are invited to the new one. A published room's listing moves too, and
// each local member's m.direct entries, tags and push rules for the room (upgrade-user-state.ts).
// Everything runs in the old room's lane. Spec: Client-Server API "Room Upgrades" (server behaviour);
// Synapse's RoomCreationHandler.upgrade_room where the spec is silent.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { parseRoomAlias, parseUserId } from "../ids.ts";
import { newOwnRoomId } from "../cluster/room-ids.ts";
import { isPlainObject, type Pdu } from "../events/types.ts";
import { getRoomVersion, type RoomVersion } from "./room-versions.ts";
import { requireRoom, type RoomSnapshot } from "./room-cache.ts";
import { powerLevelsOf } from "./power-levels.ts";
import { buildEvent, type BuiltEvent, type EventDraft } from "./build-event.ts";
import { authorizeEvent, persistDrafts } from "./persist.ts";
import { createRoom } from "./create-room.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { copyUserStateOnUpgrade } from "./upgrade-user-state.ts";
import { isValidUserId } from "../auth/context.ts";

/** State copied as is (any state key for the space types). */
const COPIED_TYPES = [
  "m.room.name",
  "m.room.topic",
  "m.room.avatar",
  "m.room.guest_access",
  "m.room.history_visibility",
  "m.room.encryption",
  "m.room.server_acl",
];
const SPACE_TYPES = ["m.space.child", "m.space.parent"];
const LEVEL_KEYS = ["ban", "events_default", "invite", "kick", "redact", "state_default", "users_default"];
const LEVEL_MAPS = ["events", "users", "notifications"];

function toLevel(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isSafeInteger(v)) return v;
  if (typeof v === "string" && /^\s*[+-]?\d+\s*$/.test(v)) {
    const n = Number.parseInt(v, 10);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

/** Power levels content with every level an integer (old room versions allowed strings); junk dropped. */
function normalizePowerLevels(content: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...content };
  for (const k of LEVEL_KEYS) {
    if (!(k in out)) continue;
    const n = toLevel(out[k]);
    if (n === undefined) delete out[k];
    else out[k] = n;
  }
  for (const k of LEVEL_MAPS) {
    if (!(k in out)) continue;
    const m = out[k];
    if (!isPlainObject(m)) {
      delete out[k];
      continue;
    }
    const clean: Record<string, number> = {};
    for (const [name, v] of Object.entries(m)) {
      const n = toLevel(v);
      if (n !== undefined) clean[name] = n;
    }
    out[k] = clean;
  }
  return out;
}

function splitKey(key: string): [string, string] {
  const i = key.indexOf("\u0000");
  return [key.slice(0, i), key.slice(i + 1)];
}

function parseRequest(body: Record<string, unknown>): { version: RoomVersion; additionalCreators: string[] } {
  const id = body.new_version;
  if (id === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing new_version", 400);
  if (typeof id !== "string") throw new MatrixError("M_BAD_JSON", "new_version must be a string", 400);
  const version = getRoomVersion(id);
  if (!version) throw new MatrixError("M_UNSUPPORTED_ROOM_VERSION", "This server does not support that room version", 400);
  // additional_creators (spec v1.16, MSC4289): "ignored" when the new version has no additional creators
  // (as Synapse, which then does not look at it); else a list of user ids, checked as the create event's
  // auth rule checks them (auth/create.ts), so a list accepted here never makes a create event refused.
  if (!version.additionalCreators || body.additional_creators === undefined) return { version, additionalCreators: [] };
  const extra = body.additional_creators;
  if (!Array.isArray(extra) || extra.some((u) => typeof u !== "string")) throw new MatrixError("M_BAD_JSON", "additional_creators must be a list of user ids", 400);
  const bad = (extra as string[]).find((u) => !isValidUserId(u));
  if (bad !== undefined) throw new MatrixError("M_INVALID_PARAM", `additional_creators: ${JSON.stringify(bad)} is not a valid user id`, 400);
  return { version, additionalCreators: [...new Set(extra as string[])] };
}

const lookup = async (s: Services, id: string) => (await s.rooms.events.get(id))?.pdu;

function tombstoneDraft(me: string, replacement: string): EventDraft {
  return { type: "m.room.tombstone", stateKey: "", sender: me, content: { body: "This room has been replaced", replacement_room: replacement } };
}

async function buildTombstone(s: Services, old: RoomSnapshot, me: string, replacement: string): Promise<BuiltEvent> {
  const built = await buildEvent(s, { roomId: old.roomId, version: old.version, state: old.state, extremities: old.extremities, maxDepth: old.maxDepth }, tombstoneDraft(me, replacement));
  await authorizeEvent(s, old, built.pdu, (id) => lookup(s, id));
  return built;
}

export async function upgradeRoom(s: Services, r: Requester, roomId: string, body: Record<string, unknown>): Promise<{ replacement_room: string }> {
  requireNotGuest(r, "upgradeRoom");
  const { version: v, additionalCreators } = parseRequest(body);
  const me = r.userId;
  return s.rooms.lanes.run(roomId, async () => {
    // An unknown room is 404 (as Synapse: checked before the power check, which would say 403).
    const old = await requireRoom(s, roomId).catch(() => {
      throw new MatrixError("M_NOT_FOUND", `Unknown room id ${roomId}`, 404);
    });
    if ((await s.rooms.store.membership(roomId, me))?.membership !== "join") throw new MatrixError("M_FORBIDDEN", "You are not in this room", 403);
    const powers = await powerLevelsOf(s, old);
    if (powers.user(me) < powers.event("m.room.tombstone", true)) throw new MatrixError("M_FORBIDDEN", "You cannot upgrade this room", 403);

    // The old room's state that matters here, in one read.
    const wanted = new Map<string, string>();
    for (const [key, id] of old.state) {
      const [type] = splitKey(key);
      if (COPIED_TYPES.includes(type) || SPACE_TYPES.includes(type) || type === "m.room.power_levels" || type === "m.room.join_rules" || type === "m.room.canonical_alias")
        wanted.set(key, id);
    }
    const events = await s.rooms.events.getMany([...wanted.values()]);
    const stateOf = (type: string, stateKey = ""): Pdu | undefined => {
      const id = wanted.get(`${type}\u0000${stateKey}`);
      return id ? events.get(id)?.pdu : undefined;
    };
    const local = (alias: unknown): alias is string => {
      try {
        return typeof alias === "string" && parseRoomAlias(alias).serverName === s.config.server_name;
      } catch {
        return false;
      }
    };

    // Power levels: the upgrader raised (if need be) so every copied event, invite and ban is allowed,
    // then restored by a last event. Where creators hold unlimited power (v12+), they are not listed.
    const originalPl = normalizePowerLevels(stateOf("m.room.power_levels")?.content ?? {});
    const users = { ...((originalPl.users as Record<string, number> | undefined) ?? {}) };
    const copiedPl: Record<string, unknown> = { ...originalPl, users };
    const restoredPl: Record<string, unknown> = { ...originalPl, users: { ...users } };
    let raised = false;
    if (v.privilegedCreators) {
      for (const c of [me, ...additionalCreators]) {
        delete users[c];
        delete (restoredPl.users as Record<string, number>)[c];
      }
    } else {
      const eventLevels = Object.values((originalPl.events as Record<string, number> | undefined) ?? {});
      const needed = Math.max((originalPl.state_default as number | undefined) ?? 50, (originalPl.ban as number | undefined) ?? 50, (originalPl.invite as number | undefined) ?? 0, ...eventLevels);
      const current = users[me] ?? ((originalPl.users_default as number | undefined) ?? 0);
      if (current < needed) {
        users[me] = needed;
        raised = true;
      }
    }

    // Join rules, with restricted allow entries naming the old room pointed at the new one.
    const joinRules = stateOf("m.room.join_rules")?.content ?? { join_rule: "invite" };
    const joinRuleFor = (newId: string) => {
      const content = { ...joinRules };
      if (Array.isArray(content.allow))
        content.allow = content.allow.map((a) => (isPlainObject(a) && a.room_id === roomId ? { ...a, room_id: newId } : a));
      return content;
    };
    // The canonical alias: the local aliases move with the room; others' stay behind.
    const oldCanonical = stateOf("m.room.canonical_alias")?.content;
    const newCanonical: Record<string, unknown> = {};
    const oldCanonicalAfter: Record<string, unknown> | undefined = oldCanonical ? { ...oldCanonical } : undefined;
    if (oldCanonical && oldCanonicalAfter) {
      if (local(oldCanonical.alias)) {
        newCanonical.alias = oldCanonical.alias;
        delete oldCanonicalAfter.alias;
      }
      if (Array.isArray(oldCanonical.alt_aliases)) {
        const moved = oldCanonical.alt_aliases.filter(local);
        if (moved.length > 0) newCanonical.alt_aliases = moved;
        const kept = oldCanonical.alt_aliases.filter((a) => !local(a));
        if (kept.length > 0) oldCanonicalAfter.alt_aliases = kept;
        else delete oldCanonicalAfter.alt_aliases;
      }
    }

    const copied: { type: string; state_key: string; content: Record<string, unknown> }[] = [];
    for (const [key, id] of wanted) {
      const [type, stateKey] = splitKey(key);
      const pdu = events.get(id)?.pdu;
      if (!pdu) continue;
      if ((COPIED_TYPES.includes(type) && stateKey === "") || SPACE_TYPES.includes(type)) {
        // An emptied space link (content {}) is no link: not worth copying.
        if (SPACE_TYPES.includes(type) && Object.keys(pdu.content).length === 0) continue;
        copied.push({ type, state_key: stateKey, content: pdu.content });
      }
    }
    // A room without m.room.guest_access forbids guests: the new room says so explicitly, so it holds
    // the event clients (and Synapse's upgrades, whose private_chat preset adds one) count on.
    if (!copied.some((e) => e.type === "m.room.guest_access")) copied.push({ type: "m.room.guest_access", state_key: "", content: { guest_access: "forbidden" } });
    const initialStateFor = (newId: string) => [
      { type: "m.room.power_levels", state_key: "", content: copiedPl },
      { type: "m.room.join_rules", state_key: "", content: joinRuleFor(newId) },
      ...copied,
      ...(Object.keys(newCanonical).length > 0 ? [{ type: "m.room.canonical_alias", state_key: "", content: newCanonical }] : []),
    ];

    // Members: bans carry over; an invite-only room's members are invited (local users: others need federation).
    const members = await s.rooms.store.membersOf(roomId);
    const finalDrafts: EventDraft[] = members
      .filter((m) => m.membership === "ban")
      .map((m) => ({ type: "m.room.member", stateKey: m.userId, sender: me, content: { membership: "ban" } }));
    if (raised) finalDrafts.push({ type: "m.room.power_levels", stateKey: "", sender: me, content: restoredPl });
    const invite =
      joinRules.join_rule === "invite"
        ? members.filter((m) => m.membership === "join" && m.userId !== me && parseUserId(m.userId).serverName === s.config.server_name).map((m) => m.userId)
        : [];

    const createPdu = old.createEvent;
    const creation: Record<string, unknown> = {};
    if (typeof createPdu.content.type === "string") creation.type = createPdu.content.type;
    if (createPdu.content["m.federate"] !== undefined) creation["m.federate"] = createPdu.content["m.federate"];
    if (additionalCreators.length > 0) creation.additional_creators = additionalCreators;

    // Room ids that are not the create event's hash are chosen now, so the tombstone is built (and
    // authorized) before anything is written, and the new room can name it as its predecessor.
    let newId: string | undefined;
    let tombstone: BuiltEvent;
    if (v.roomIdIsCreateEventHash) {
      tombstone = await buildTombstone(s, old, me, "!placeholder"); // authorization only
      creation.predecessor = { room_id: roomId };
    } else {
      newId = newOwnRoomId(s);
      tombstone = await buildTombstone(s, old, me, newId);
      creation.predecessor = { room_id: roomId, event_id: tombstone.eventId };
    }
    const wasPublic = (await s.rooms.store.getRoom(roomId))?.isPublic ?? false;

    const { room_id: replacement } = await createRoom(
      s,
      r,
      {
        room_version: v.id,
        creation_content: creation,
        // The preset adds nothing the copy does not set (no guest_access of its own): the copied state rules.
        preset: "public_chat",
        visibility: wasPublic ? "public" : "private",
        invite,
      },
      {
        roomId: newId,
        initialStateFor,
        finalDrafts,
        alsoWrite: async (tx, id) => {
          await s.directory.moveAliases(tx, roomId, id);
          if (wasPublic) await s.rooms.store.setPublic(roomId, false, tx);
        },
      },
    );
    if (v.roomIdIsCreateEventHash) tombstone = await buildTombstone(s, old, me, replacement);
    await persistDrafts(s, old, [tombstone]);

    // Best effort, as in Synapse: the upgrade stands even if these are not allowed.
    if (oldCanonical && oldCanonicalAfter && JSON.stringify(oldCanonical) !== JSON.stringify(oldCanonicalAfter)) {
      await persistDrafts(s, await requireRoom(s, roomId), [{ type: "m.room.canonical_alias", stateKey: "", sender: me, content: oldCanonicalAfter }]).catch((err: unknown) =>
        s.log.info({ err, roomId }, "upgrade: could not update the old room's canonical alias"),
      );
    }
    // Each local member's m.direct, tags and push rules follow the room (as Synapse).
    await copyUserStateOnUpgrade(s, roomId, replacement);
    const restrict = Math.max(((originalPl.users_default as number | undefined) ?? 0) + 1, 50);
    const restricted: Record<string, unknown> = { ...originalPl };
    let changed = false;
    for (const k of ["events_default", "invite"]) {
      if (((originalPl[k] as number | undefined) ?? 0) < restrict) {
        restricted[k] = restrict;
        changed = true;
      }
    }
    if (changed) {
      await persistDrafts(s, await requireRoom(s, roomId), [{ type: "m.room.power_levels", stateKey: "", sender: me, content: restricted }]).catch((err: unknown) =>
        s.log.info({ err, roomId }, "upgrade: could not restrict the old room's power levels"),
      );
    }
    return { replacement_room: replacement };
  });
}
