// The sync machinery on Services (`s.sync`): the ordered list of stream providers (one slot per stream,
// filled by the capability that owns the stream: `syncProviders` in src/main.ts), the in-memory record of
// which member events each device already received (lazy-loading), sliding sync's connections, and the shutdown signal that ends
// waiting long polls. See sync.ts for the plug-in rules.
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { StreamName } from "../rooms/notifier.ts";
import type { CacheRegistry, LruCache } from "../cache/lru.ts";
import { STREAMS, zeroToken, type SyncToken } from "./token.ts";
import type { SyncContext, SyncProvider } from "./types.ts";
import { eventsProvider } from "./providers/events.ts";
import { accountDataProvider } from "./providers/account-data.ts";
import { receiptsProvider } from "./providers/receipts.ts";
import { typingProvider } from "./providers/typing.ts";
import { presenceProvider } from "./providers/presence.ts";
import { toDeviceProvider } from "./providers/to-device.ts";
import { deviceListsProvider } from "./providers/device-lists.ts";
import { pushRulesProvider } from "./providers/push-rules.ts";
import { SyncStreamCache } from "./stream-cache.ts";
import { SlidingConnections } from "./sliding/connections.ts";
import { Canceller, type Cancel } from "./wait.ts";

/** Called with a /sync's `set_presence` (online, offline, unavailable); the presence capability declares one. */
export type PresenceSetter = (s: Services, r: Requester, presence: "online" | "offline" | "unavailable") => Promise<void>;

/** Adds per-room data to a response's joined rooms after every provider ran (never ends a long poll). */
export type SyncDecorator = (ctx: SyncContext) => Promise<void>;

export class SyncServices {
  private readonly slots = new Map<StreamName, SyncProvider>();
  /** The filled slots in token order (fixed once constructed). */
  private readonly ordered: readonly SyncProvider[];
  /** Per device ("user|device"): room id → member user id → the member event id last sent (lazy-loading). */
  readonly sentMembers: LruCache<string, Map<string, Map<string, string>>>;
  private readonly closing = new Canceller();
  /**
   * Per-room additions computed for the joined rooms a response holds, after every provider ran (the
   * push capability's unread notification counts). They never end a long poll by themselves.
   */
  readonly decorators: readonly SyncDecorator[];
  /** Recent events per room and users' memberships, fed at commit (stream-cache.ts). */
  readonly streamCache: SyncStreamCache;
  /** Simplified sliding sync's per-connection state (sliding/connections.ts). */
  readonly sliding: SlidingConnections;

  /** The core providers, then `providers` (declared in src/main.ts) each replacing its stream's slot. */
  constructor(caches: CacheRegistry, providers: readonly SyncProvider[] = [], decorators: readonly SyncDecorator[] = []) {
    // Weighed by the member entries it holds (about 150 bytes each with the map's overhead).
    this.sentMembers = caches.get("sync_lazy_members", 10_000, {
      weigh: (rooms) => {
        let n = 0;
        for (const m of rooms.values()) n += m.size;
        return 200 + n * 150;
      },
      baseWeight: 64 * 1024 * 1024,
    });
    this.streamCache = new SyncStreamCache(caches);
    this.sliding = new SlidingConnections(caches);
    this.decorators = decorators;
    for (const p of [eventsProvider, accountDataProvider, receiptsProvider, typingProvider, presenceProvider, toDeviceProvider, deviceListsProvider, pushRulesProvider, ...providers]) this.slots.set(p.stream, p);
    this.ordered = STREAMS.map((s) => this.slots.get(s)).filter((p): p is SyncProvider => p !== undefined);
  }

  /** The providers in sync order: room events first (it decides the joined rooms), then the others in token order. */
  providers(): readonly SyncProvider[] {
    return this.ordered;
  }

  /**
   * Every stream's position. With several processes (replication on), a token another process handed
   * out (`notBefore`) may be a moment ahead of this one's positions: the answer then stays at it, never
   * behind (what lies at or below it the client has; what lies above is read once it is here), so a
   * client switching process sees nothing twice. Typing is per process, and is left as it is.
   */
  async currentToken(s: Services, notBefore?: SyncToken): Promise<SyncToken> {
    const t = zeroToken();
    // Most positions are known in memory: only a provider that answers with a promise is waited for.
    for (const p of this.ordered) {
      const pos = p.current(s);
      t[p.stream] = typeof pos === "number" ? pos : await pos;
    }
    if (notBefore && s.replication) for (const name of STREAMS) if (name !== "typing" && notBefore[name] > t[name]) t[name] = notBefore[name];
    return t;
  }

  /** Aborted when the server shuts down: waiting long polls and live subscriptions end at once. */
  get shuttingDown(): Cancel {
    return this.closing;
  }

  shutdown(): void {
    this.closing.abort();
  }
}
