// GraphQL types of notification counts (spec: Client-Server API "Receiving notifications", threaded
// notifications): a room's unread notifications and highlights, in all, in the main timeline and per thread.
import "reflect-metadata";
import { Field, Int, ObjectType } from "type-graphql";

@ObjectType({ description: "Unread notifications and highlights (after the viewer's read receipts)." })
export class UnreadCount {
  @Field(() => Int)
  notifications!: number;

  @Field(() => Int)
  highlights!: number;

  static of(c: { notifications?: number; highlights?: number; notification_count?: number; highlight_count?: number } | undefined): UnreadCount {
    return Object.assign(new UnreadCount(), { notifications: c?.notifications ?? c?.notification_count ?? 0, highlights: c?.highlights ?? c?.highlight_count ?? 0 });
  }
}

@ObjectType({ description: "Unread counts of one thread." })
export class ThreadUnreadCount {
  @Field(() => String, { description: "The thread root's event ID." })
  threadId!: string;

  @Field(() => UnreadCount)
  count!: UnreadCount;
}

@ObjectType({ description: "A room's unread counts: every thread together, the main timeline, and each thread with unread notifications." })
export class RoomUnreadCounts {
  @Field(() => UnreadCount, { description: "All threads together (/sync's unread_notifications without unread_thread_notifications)." })
  total!: UnreadCount;

  @Field(() => UnreadCount, { description: "The main timeline only." })
  main!: UnreadCount;

  @Field(() => [ThreadUnreadCount])
  threads!: ThreadUnreadCount[];
}
