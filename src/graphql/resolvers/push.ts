// Notification counts on the GraphQL face: `Room.unreadCounts` (the domain's unread counts, the same
// numbers /sync reports) and, in `syncUpdates`, `JoinedRoomSync.unreadNotifications` (filled from the
// sync delta by ephemeral.ts).
import "reflect-metadata";
import { Ctx, FieldResolver, Resolver, Root } from "type-graphql";
import type { GraphqlContext } from "../context.ts";
import { Room } from "../types/room.ts";
import { RoomUnreadCounts, ThreadUnreadCount, UnreadCount } from "../types/push.ts";
import { total } from "../../domain/push/counts.ts";

@Resolver(() => Room)
export class RoomUnreadResolver {
  @FieldResolver(() => RoomUnreadCounts, { description: "The viewer's unread notifications and highlights in this room (as /sync reports them)." })
  async unreadCounts(@Root() room: Room, @Ctx() ctx: GraphqlContext): Promise<RoomUnreadCounts> {
    const counts = await ctx.loaders.unreadCounts.load(room.roomId);
    const threads = [...(counts ?? [])].filter(([id]) => id !== "main").map(([threadId, c]) => Object.assign(new ThreadUnreadCount(), { threadId, count: UnreadCount.of(c) }));
    return Object.assign(new RoomUnreadCounts(), { total: UnreadCount.of(total(counts)), main: UnreadCount.of(counts?.get("main")), threads });
  }
}
