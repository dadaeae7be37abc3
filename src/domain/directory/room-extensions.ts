// What the room directory adds to the room machinery (declared in src/main.ts): `/join` and `/knock`
// resolve local aliases (resolveLocalAlias), createRoom's room_alias_name makes an alias (written in the
// room's own commit) and its m.room.canonical_alias, and m.room.canonical_alias events are checked
// (M_INVALID_PARAM, M_BAD_ALIAS; other servers' aliases asked of them before the room's lane). Every commit keeps the directory stats of its room (stats.ts, an indexer).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StateEventCheck } from "../rooms/send.ts";
import type { CreateRoomExtension, CreateRoomRequest } from "../rooms/create-room.ts";
import { currentStateEvent, loadRoom } from "../rooms/room-cache.ts";
import { powerLevelsOf } from "../rooms/power-levels.ts";
import { aliasFromName, checkAliasNamespace, checkCanonicalAlias, checkRemoteCanonicalAliases } from "./aliases.ts";

const roomInUse = () => new MatrixError("M_ROOM_IN_USE", "Room alias already taken", 400);

/** createRoom's room_alias_name: the alias row (in the room's commit) and the room's canonical alias. */
export const aliasOnCreate: CreateRoomExtension = {
  async extraState(s: Services, r: Requester, req: CreateRoomRequest) {
    const alias = aliasFromName(s, req.room_alias_name);
    if (!alias) return [];
    checkAliasNamespace(s, r, alias);
    if (await s.directory.getAlias(alias)) throw roomInUse();
    return [{ type: "m.room.canonical_alias", stateKey: "", sender: r.userId, content: { alias } }];
  },
  alsoWrite(s: Services, r: Requester, req: CreateRoomRequest, roomId: string) {
    const alias = aliasFromName(s, req.room_alias_name);
    if (!alias) return undefined;
    return async (tx) => {
      // A concurrent request took it after the check above: the whole room is refused.
      if (!(await s.directory.insertAlias(tx, { alias, roomId, creator: r.userId }, s.clock.now()))) throw roomInUse();
    };
  },
};

/** m.room.canonical_alias sent by a local user: its aliases must exist and point at the room. */
export const canonicalAliasCheck: StateEventCheck = async (s: Services, _r: Requester, roomId: string, type: string, _stateKey: string, content: Record<string, unknown>) => {
  if (type !== "m.room.canonical_alias") return;
  const room = await loadRoom(s, roomId);
  const previous = room ? await currentStateEvent(s, room, "m.room.canonical_alias") : undefined;
  await checkCanonicalAlias(s, roomId, content, previous?.content);
};

/**
 * m.room.canonical_alias sent by a local user, before the room's lane: other servers' aliases must point
 * at the room. Only a joined member who may send the event makes this server ask (anyone else is refused
 * in the lane by the auth rules, without a request to another server).
 */
export const remoteCanonicalAliasCheck: StateEventCheck = async (s: Services, r: Requester, roomId: string, type: string, _stateKey: string, content: Record<string, unknown>) => {
  if (type !== "m.room.canonical_alias") return;
  const room = await loadRoom(s, roomId);
  if (!room || (await s.rooms.store.membership(roomId, r.userId))?.membership !== "join") return;
  const powers = await powerLevelsOf(s, room);
  if (powers.user(r.userId) < powers.event(type, true)) return;
  const previous = await currentStateEvent(s, room, "m.room.canonical_alias");
  await checkRemoteCanonicalAliases(s, roomId, content, previous?.content);
};
