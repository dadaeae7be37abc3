import { domainOf, isPlainObject } from "../events/types.js";
import { currentStateEvent } from "./room-cache.js";
import { powerLevelsOf } from "./power-levels.js";
/** How a join of `userId` to `room` stands against the room's restricted join rule, as this server sees it. */
export async function restrictedJoin(s, room, userId) {
    const rules = await currentStateEvent(s, room, "m.room.join_rules");
    const rule = rules?.content.join_rule;
    if (!((rule === "restricted" && room.version.restricted) || (rule === "knock_restricted" && room.version.knockRestricted)))
        return { kind: "unrestricted" };
    const current = (await currentStateEvent(s, room, "m.room.member", userId))?.content.membership;
    if (current === "join" || current === "invite")
        return { kind: "unrestricted" };
    const allow = Array.isArray(rules.content.allow) ? rules.content.allow : [];
    let allowed = false;
    let unknownRooms = false;
    for (const a of allow) {
        if (!isPlainObject(a) || a.type !== "m.room_membership" || typeof a.room_id !== "string")
            continue;
        if ((await s.rooms.store.membership(a.room_id, userId))?.membership === "join") {
            allowed = true;
            break;
        }
        const here = await s.rooms.store.membersOf(a.room_id);
        if (!here.some((x) => x.membership === "join" && domainOf(x.userId) === s.config.server_name))
            unknownRooms = true;
    }
    if (!allowed)
        return { kind: "not_allowed", unknownRooms };
    const powers = await powerLevelsOf(s, room);
    const needed = powers.named("invite");
    const candidate = (await s.rooms.store.membersOf(room.roomId))
        .filter((m) => m.membership === "join" && domainOf(m.userId) === s.config.server_name)
        .map((m) => ({ id: m.userId, level: powers.user(m.userId) }))
        .filter((m) => m.level >= needed)
        .sort((a, b) => b.level - a.level)[0];
    return candidate ? { kind: "authorised", via: candidate.id } : { kind: "no_authoriser" };
}
