// Per-request DataLoaders: each value asked for more than once in one operation is read once (a viewer's
// displayName and avatarUrl share one profile read). Built fresh for every HTTP request and every
// WebSocket operation, so nothing is cached across requests.
import DataLoader from "dataloader";
import { MatrixError } from "../domain/errors.js";
import { getProfile } from "../domain/profile/profile.js";
import { roomSummaries } from "../domain/rooms/batch-reads.js";
import { aliasesOfRooms } from "../domain/directory/aliases.js";
export function createLoaders(ctx) {
    return {
        profile: new DataLoader(async (userIds) => {
            const requester = ctx.bearerToken === undefined ? undefined : await ctx.requester();
            return Promise.all(userIds.map((id) => getProfile(ctx.s, requester, id).catch((err) => {
                if (err instanceof MatrixError && err.errcode === "M_NOT_FOUND")
                    return {};
                return err instanceof Error ? err : new Error(String(err));
            })));
        }),
        roomSummary: new DataLoader(async (roomIds) => {
            const found = await roomSummaries(ctx.s, await ctx.requester(), roomIds);
            return roomIds.map((id) => found.get(id) ?? null);
        }),
        roomAliases: new DataLoader(async (roomIds) => {
            const found = await aliasesOfRooms(ctx.s, await ctx.requester(), roomIds);
            return roomIds.map((id) => found.get(id));
        }),
    };
}
