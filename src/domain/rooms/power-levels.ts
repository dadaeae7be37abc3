// Power levels read from a room's current state, for checks made before an event is built (may this
// user redact others' events? who may authorise a restricted join?). The rules themselves live in
// src/domain/auth; this only gives them the room's current state.
import type { Services } from "../services.ts";
import { AuthContext, requiredEventLevel, stateMapKey, userPowerLevel, namedLevel } from "../auth/index.ts";
import type { Pdu } from "../events/types.ts";
import type { RoomSnapshot } from "./room-cache.ts";
import { currentStateEvent } from "./room-cache.ts";

export interface RoomPowers {
  user(userId: string): number;
  named(name: "ban" | "kick" | "redact" | "invite" | "state_default" | "events_default" | "users_default"): number;
  event(type: string, isState: boolean): number;
}

export async function powerLevelsOf(s: Services, room: RoomSnapshot): Promise<RoomPowers> {
  const pl = await currentStateEvent(s, room, "m.room.power_levels");
  const state = new Map<string, Pdu>([[stateMapKey("m.room.create", ""), room.createEvent]]);
  if (pl) state.set(stateMapKey("m.room.power_levels", ""), pl);
  const ctx = new AuthContext(room.createEvent, state, room.version, { createEvent: room.createEvent });
  return {
    user: (userId) => userPowerLevel(ctx, userId),
    named: (name) => namedLevel(pl?.content, name, room.version),
    event: (type, isState) => requiredEventLevel(ctx, type, isState),
  };
}
