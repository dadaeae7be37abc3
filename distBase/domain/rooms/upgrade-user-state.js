import { isPlainObject } from "../events/types.js";
import { writeAccountData } from "../account-data/account-data.js";
import { getRuleset, putRule } from "../push/rules-api.js";
export async function copyUserStateOnUpgrade(s, oldRoomId, newRoomId) {
    const local = `:${s.config.server_name}`;
    const users = (await s.rooms.store.membersOf(oldRoomId)).filter((m) => m.membership === "join" && m.userId.endsWith(local)).map((m) => m.userId);
    for (const userId of users) {
        try {
            await copyDirect(s, userId, oldRoomId, newRoomId);
            const tags = await s.accountData.get(userId, oldRoomId, "m.tag");
            if (tags && isPlainObject(tags.tags) && Object.keys(tags.tags).length > 0)
                await writeAccountData(s, userId, newRoomId, "m.tag", tags);
            await copyPushRules(s, userId, oldRoomId, newRoomId);
        }
        catch (err) {
            s.log.warn({ err, userId, oldRoomId, newRoomId }, "upgrade: could not copy a user's tags, m.direct or push rules");
        }
    }
}
async function copyDirect(s, userId, oldRoomId, newRoomId) {
    const direct = await s.accountData.get(userId, "", "m.direct");
    if (!direct)
        return;
    let changed = false;
    const next = {};
    for (const [other, rooms] of Object.entries(direct)) {
        if (Array.isArray(rooms) && rooms.includes(oldRoomId) && !rooms.includes(newRoomId)) {
            next[other] = [...rooms, newRoomId];
            changed = true;
        }
        else
            next[other] = rooms;
    }
    if (changed)
        await writeAccountData(s, userId, "", "m.direct", next);
}
async function copyPushRules(s, userId, oldRoomId, newRoomId) {
    const ruleset = await getRuleset(s, userId);
    const as = { userId, deviceId: null, isGuest: false, isAdmin: false, accessTokenId: null };
    for (const rule of ruleset.room) {
        if (rule.rule_id === oldRoomId && rule.enabled)
            await putRule(s, as, "room", newRoomId, { actions: rule.actions }, {});
    }
    for (const kind of ["override", "underride"]) {
        for (const rule of ruleset[kind]) {
            if (rule.default || !rule.enabled || !rule.conditions?.some((c) => c.key === "room_id" && c.pattern === oldRoomId))
                continue;
            const conditions = rule.conditions.map((c) => (c.key === "room_id" && c.pattern === oldRoomId ? { ...c, pattern: newRoomId } : c));
            await putRule(s, as, kind, newRoomId, { actions: rule.actions, conditions }, {});
        }
    }
}
