// Who is typing in a room, for live readers (the GraphQL `typing` subscription): the current list, then
// each change, for as long as the reader stays joined. Spec: Client-Server API "Typing Notifications".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StreamNotice } from "../rooms/notifier.ts";
import { requireJoined } from "./set-typing.ts";

export class LiveTyping {
  private last: string | undefined;

  private constructor(private readonly s: Services, private readonly r: Requester, readonly roomId: string) {}

  /** Starts reading (M_FORBIDDEN unless `r` is joined to the room). */
  static async start(s: Services, r: Requester, roomId: string): Promise<LiveTyping> {
    await requireJoined(s, r.userId, roomId);
    return new LiveTyping(s, r, roomId);
  }

  /** Whether a stream notice may change this room's typing list. */
  concerns(n: StreamNotice): boolean {
    return n.stream === "typing" && (n.roomIds?.includes(this.roomId) ?? false);
  }

  /** The typing users if the list changed since the last call (the first call always answers); none once the reader left. */
  async next(): Promise<string[] | undefined> {
    const member = await this.s.rooms.store.membership(this.roomId, this.r.userId);
    if (member?.membership !== "join") return undefined;
    const userIds = this.s.typing.typingIn(this.roomId);
    const key = JSON.stringify(userIds);
    if (key === this.last) return undefined;
    this.last = key;
    return userIds;
  }
}
