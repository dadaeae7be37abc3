// Plugs the room directory into the room machinery (called once by src/main.ts; idempotent): `/join` and
// `/knock` resolve local aliases, createRoom's room_alias_name makes an alias (written in the room's own
// commit) and its m.room.canonical_alias, m.room.canonical_alias events are checked (M_BAD_ALIAS), and
// every commit keeps the directory stats of its room.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { aliasResolvers } from "../rooms/membership.ts";
import { stateEventChecks } from "../rooms/send.ts";
import { createRoomHooks, type CreateRoomRequest } from "../rooms/create-room.ts";
import { persistHooks } from "../rooms/persist.ts";
import { currentStateEvent, loadRoom } from "../rooms/room-cache.ts";
import { aliasFromName, checkAliasNamespace, checkCanonicalAlias, resolveLocalAlias } from "./aliases.ts";
import { updateDirectoryStats } from "./stats.ts";

const roomInUse = () => new MatrixError("M_ROOM_IN_USE", "Room alias already taken", 400);

const aliasOnCreate: (typeof createRoomHooks)[number] = {
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

async function canonicalAliasCheck(s: Services, _r: Requester, roomId: string, type: string, _stateKey: string, content: Record<string, unknown>): Promise<void> {
  if (type !== "m.room.canonical_alias") return;
  const room = await loadRoom(s, roomId);
  const previous = room ? await currentStateEvent(s, room, "m.room.canonical_alias") : undefined;
  await checkCanonicalAlias(s, roomId, content, previous?.content);
}

export function installDirectoryHooks(): void {
  if (!aliasResolvers.includes(resolveLocalAlias)) aliasResolvers.push(resolveLocalAlias);
  if (!stateEventChecks.includes(canonicalAliasCheck)) stateEventChecks.push(canonicalAliasCheck);
  if (!createRoomHooks.includes(aliasOnCreate)) createRoomHooks.push(aliasOnCreate);
  if (!persistHooks.includes(updateDirectoryStats)) persistHooks.push(updateDirectoryStats);
}
