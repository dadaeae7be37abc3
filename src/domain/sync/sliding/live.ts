// Sliding sync as a stream of answers for live readers (the GraphQL roomList subscription): one
// connection of its own per reader (a conn_id no REST client uses), answered from its last position each
// time the notifier says one of the user's streams or rooms moved; the first answer is the connection's
// initial one, later ones only what changed (none when nothing did). The same engine as the REST route
// (sliding-sync.ts buildSlidingAnswer); the connection is dropped when the reader goes.
import { randomUUID } from "node:crypto";
import type { Services } from "../../services.ts";
import type { Requester } from "../../accounts/requester.ts";
import type { NewEventNotice, StreamNotice } from "../../rooms/notifier.ts";
import { buildSlidingAnswer, type SlidingSyncResponse } from "../sliding-sync.ts";
import { formatSlidingPos, type SlidingPos } from "./pos.ts";
import type { SlidingRequest } from "./request.ts";

export class LiveSlidingSync {
  private pos: SlidingPos | undefined;
  private rooms: ReadonlySet<string> = new Set();
  private primed = false;
  private readonly req: SlidingRequest;

  constructor(private readonly s: Services, private readonly r: Requester, req: SlidingRequest) {
    this.req = { ...req, connId: `graphql:${randomUUID()}` };
  }

  /** Does this notice possibly concern the reader, past what it already received? */
  concerns(n: { kind: "event"; n: NewEventNotice } | { kind: "stream"; n: StreamNotice }): boolean {
    if (!this.primed) return true;
    if (n.kind === "event") {
      if (this.pos && n.n.streamOrdering <= this.pos.token.events) return false;
      return this.rooms.has(n.n.roomId) || (n.n.type === "m.room.member" && n.n.stateKey === this.r.userId);
    }
    const notice = n.n;
    if (this.pos && notice.position <= this.pos.token[notice.stream]) return false;
    if (!notice.userIds && !notice.roomIds) return true;
    return (notice.userIds?.includes(this.r.userId) ?? false) || (notice.roomIds?.some((id) => this.rooms.has(id)) ?? false);
  }

  /** The next answer: the initial one the first time, then what changed (undefined when nothing did). */
  async next(): Promise<SlidingSyncResponse | undefined> {
    const first = this.pos === undefined;
    const prev = this.s.sync.sliding.start(this.r.userId, this.r.deviceId, this.req.connId, this.pos?.connection);
    const built = await buildSlidingAnswer(this.s, this.r, this.req, this.pos, prev);
    const connection = this.s.sync.sliding.record(this.r.userId, this.r.deviceId, this.req.connId, prev, built.sent);
    this.pos = { connection, token: built.to, threadSubscriptions: built.threadTo };
    this.rooms = new Set([...(await this.s.sync.streamCache.joinedRoomIds(this.s, this.r.userId)), ...built.list.relevant.keys(), ...built.list.memberships.keys()]);
    this.primed = true;
    built.response.pos = formatSlidingPos(this.pos);
    return built.changed || first ? built.response : undefined;
  }

  close(): void {
    this.s.sync.sliding.drop(this.r.userId, this.r.deviceId, this.req.connId);
  }
}
