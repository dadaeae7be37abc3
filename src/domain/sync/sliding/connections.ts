// Per-connection state of simplified sliding sync (MSC4186 "Connections"), on Services as
// `s.sync.sliding`: per user, device and conn_id, what each room was last sent with — the room-events
// position up to which the client has the room, the room config it was sent with (to see a
// timeline_limit or required_state grow), and the members sent by lazy-loading. Each answer records a new
// version under a new connection position (the `pos` a client sends back names it); every version handed
// out is kept until the client uses one (then the others go, as Synapse), so a retried or cancelled request
// may repeat its `pos` and an abandoned long poll that finishes late does not drop the answer the client
// took. An unknown position answers 400 M_UNKNOWN_POS and the client starts the connection again. Held in memory
// (an LRU weighed by the rooms each connection holds): a restart or an eviction costs a client one new
// connection, as Synapse's expiry of old connections does.
import { MatrixError } from "../../errors.ts";
import type { CacheRegistry, LruCache } from "../../cache/lru.ts";
import type { RoomConfig } from "./request.ts";

export interface RoomSent {
  /** Room-events position up to which the client has this room's data. */
  upTo: number;
  /** The combined room config the room was last sent (or considered) with. */
  config: RoomConfig;
  /** Users whose member event the client got through lazy-loading, by user id → event id. */
  lazyMembers: ReadonlyMap<string, string>;
}

export interface ConnectionVersion {
  position: number;
  rooms: ReadonlyMap<string, RoomSent>;
}

/** Answers of one connection kept until the client uses one of them. */
const MAX_VERSIONS = 8;

interface Connection {
  next: number;
  versions: ConnectionVersion[];
}

export class SlidingConnections {
  private readonly connections: LruCache<string, Connection>;

  constructor(caches: CacheRegistry) {
    this.connections = caches.get("sliding_sync_connections", 10_000, {
      weigh: (c) => 256 + c.versions.reduce((n, v) => n + v.rooms.size * 160, 0),
      baseWeight: 64 * 1024 * 1024,
    });
  }

  private static key(userId: string, deviceId: string | null, connId: string): string {
    return `${userId}\u0000${deviceId ?? ""}\u0000${connId}`;
  }

  /** The version a request starts from: none for a new connection (no `pos`), else the one `position` names. */
  start(userId: string, deviceId: string | null, connId: string, position: number | undefined): ConnectionVersion {
    const key = SlidingConnections.key(userId, deviceId, connId);
    if (position === undefined) {
      // A request without `pos` starts the connection again (as Synapse: the old one is dropped).
      const c = this.connections.get(key);
      const next = (c?.next ?? 0) + 1;
      this.connections.set(key, { next, versions: [] });
      return { position: 0, rooms: new Map() };
    }
    const c = this.connections.get(key);
    const v = c?.versions.find((x) => x.position === position);
    if (!c || !v) throw new MatrixError("M_UNKNOWN_POS", "Unknown position: start a new sliding sync connection", 400);
    // The client took this answer: the others handed out before it (a cancelled long poll's, the one it
    // came from) are dropped, as Synapse does; answers still being built from it are recorded after.
    if (c.versions.length > 1) this.connections.set(key, { next: c.next, versions: [v] });
    return v;
  }

  /** Forgets a connection (a GraphQL room-list subscription that ended). */
  drop(userId: string, deviceId: string | null, connId: string): void {
    this.connections.delete(SlidingConnections.key(userId, deviceId, connId));
  }

  /** Records the version an answer leaves (after `from`): returns its position. Older versions are dropped. */
  record(userId: string, deviceId: string | null, connId: string, from: ConnectionVersion, rooms: ReadonlyMap<string, RoomSent>): number {
    const key = SlidingConnections.key(userId, deviceId, connId);
    const c = this.connections.get(key) ?? { next: 1, versions: [] };
    const position = c.next++;
    // Every answer handed out is kept until the client uses one (start): a request it cancelled may still
    // finish after the one it sent instead. A few at most: the oldest go first, never the one it came from.
    let versions = [...c.versions, { position, rooms }];
    while (versions.length > MAX_VERSIONS) {
      const i = versions.findIndex((v) => v.position !== from.position);
      versions = versions.filter((_, j) => j !== i);
    }
    this.connections.set(key, { next: c.next, versions });
    return position;
  }
}
