import { AuthContext, requiredEventLevel, stateMapKey, userPowerLevel, namedLevel } from "../auth/index.js";
import { MatrixError } from "../errors.js";
import { currentStateEvent } from "./room-cache.js";
export async function powerLevelsOf(s, room) {
    const pl = await currentStateEvent(s, room, "m.room.power_levels");
    const state = new Map([[stateMapKey("m.room.create", ""), room.createEvent]]);
    if (pl)
        state.set(stateMapKey("m.room.power_levels", ""), pl);
    const ctx = new AuthContext(room.createEvent, state, room.version, { createEvent: room.createEvent });
    return {
        user: (userId) => userPowerLevel(ctx, userId),
        named: (name) => namedLevel(pl?.content, name, room.version),
        event: (type, isState) => requiredEventLevel(ctx, type, isState),
    };
}
const LEVEL_KEYS = ["ban", "events_default", "invite", "kick", "redact", "state_default", "users_default"];
const LEVEL_MAPS = ["events", "notifications", "users"];
/**
 * Checks m.room.power_levels content a local client writes (state API, createRoom): every level is an
 * integer in canonical JSON range, in every room version, else 400 M_BAD_JSON — as Synapse validates it
 * before the auth rules run (those would refuse it as 403, which tells the client the wrong thing).
 */
export function checkPowerLevelsContent(content) {
    const isLevel = (v) => typeof v === "number" && Number.isSafeInteger(v);
    const bad = (what) => new MatrixError("M_BAD_JSON", `Power levels: ${what} must be an integer`, 400);
    for (const k of LEVEL_KEYS)
        if (k in content && !isLevel(content[k]))
            throw bad(k);
    for (const k of LEVEL_MAPS) {
        if (!(k in content))
            continue;
        const m = content[k];
        if (typeof m !== "object" || m === null || Array.isArray(m))
            throw new MatrixError("M_BAD_JSON", `Power levels: ${k} must be an object`, 400);
        for (const [name, v] of Object.entries(m))
            if (!isLevel(v))
                throw bad(`${k}[${JSON.stringify(name)}]`);
    }
}
