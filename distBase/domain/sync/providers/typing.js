import { filterPlainEvents, roomWanted } from "../../filters/sync-filter.js";
export const typingProvider = {
    stream: "typing",
    current: (s) => s.typing.position,
    async collect(ctx, from, to) {
        if (from !== undefined && from > to)
            from = undefined;
        if (from !== undefined && from === to)
            return false;
        let added = false;
        for (const roomId of ctx.s.typing.changedRooms(ctx.joinedRooms, from)) {
            if (!roomWanted(ctx.filter, roomId))
                continue;
            const events = filterPlainEvents(ctx.filter.room.ephemeral, [{ type: "m.typing", content: { user_ids: ctx.s.typing.typingIn(roomId) } }]);
            if (events.length === 0)
                continue;
            ctx.joinedRoom(roomId).ephemeral.events.push(...events);
            added = true;
        }
        return added;
    },
};
