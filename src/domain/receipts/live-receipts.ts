// A room's receipts for live readers (the GraphQL `receipts` subscription): all current ones first, then
// each batch as the receipts stream moves, with the reader's own private receipts and nobody else's, for
// as long as the reader stays joined. Spec: Client-Server API "Receipts".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StreamNotice } from "../rooms/notifier.ts";
import type { ReceiptRow } from "../store/receipts.ts";
import { requireJoined } from "../typing/set-typing.ts";

export class LiveReceipts {
  private constructor(private readonly s: Services, private readonly r: Requester, readonly roomId: string, private last: number) {}

  /** Starts reading at the stream's current position (M_FORBIDDEN unless `r` is joined to the room). */
  static async start(s: Services, r: Requester, roomId: string): Promise<LiveReceipts> {
    await requireJoined(s, r.userId, roomId);
    return new LiveReceipts(s, r, roomId, await s.receipts.currentPosition());
  }

  concerns(n: StreamNotice): boolean {
    return n.stream === "receipts" && n.position > this.last && ((n.roomIds?.includes(this.roomId) ?? false) || (n.userIds?.includes(this.r.userId) ?? false));
  }

  /** Every receipt up to where reading started. */
  backlog(): Promise<ReceiptRow[]> {
    return this.s.receipts.inRooms([this.roomId], undefined, this.last, this.r.userId);
  }

  /** The receipts after the last read, up to `position` or further (none once the reader left). */
  async next(position: number): Promise<ReceiptRow[]> {
    if (position <= this.last) return [];
    const member = await this.s.rooms.store.membership(this.roomId, this.r.userId);
    const upTo = Math.max(position, await this.s.receipts.currentPosition());
    const rows = member?.membership === "join" ? await this.s.receipts.inRooms([this.roomId], this.last, upTo, this.r.userId) : [];
    this.last = upTo;
    return rows;
  }
}
