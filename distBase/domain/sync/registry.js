// The sync machinery on Services (`s.sync`): the ordered list of stream providers (one slot per stream,
// filled by the capability that owns the stream: `syncProviders` in src/main.ts), the in-memory record of
// which member events each device already received (lazy-loading), and the shutdown signal that ends
// waiting long polls. See sync.ts for the plug-in rules.
import { setMaxListeners } from "node:events";
import { STREAMS, zeroToken } from "./token.js";
import { eventsProvider } from "./providers/events.js";
import { accountDataProvider } from "./providers/account-data.js";
import { receiptsProvider } from "./providers/receipts.js";
import { typingProvider } from "./providers/typing.js";
import { presenceProvider } from "./providers/presence.js";
import { toDeviceProvider } from "./providers/to-device.js";
import { deviceListsProvider } from "./providers/device-lists.js";
import { pushRulesProvider } from "./providers/push-rules.js";
import { SyncStreamCache } from "./stream-cache.js";
export class SyncServices {
    slots = new Map();
    /** Per device ("user|device"): room id → member user id → the member event id last sent (lazy-loading). */
    sentMembers;
    closing = ((c) => (setMaxListeners(0, c.signal), c))(new AbortController()); // one listener per live subscriber
    /**
     * Per-room additions computed for the joined rooms a response holds, after every provider ran (the
     * push capability's unread notification counts). They never end a long poll by themselves.
     */
    decorators;
    /** Recent events per room and users' memberships, fed at commit (stream-cache.ts). */
    streamCache;
    /** The core providers, then `providers` (declared in src/main.ts) each replacing its stream's slot. */
    constructor(caches, providers = [], decorators = []) {
        // Weighed by the member entries it holds (about 150 bytes each with the map's overhead).
        this.sentMembers = caches.get("sync_lazy_members", 10_000, {
            weigh: (rooms) => {
                let n = 0;
                for (const m of rooms.values())
                    n += m.size;
                return 200 + n * 150;
            },
            baseWeight: 64 * 1024 * 1024,
        });
        this.streamCache = new SyncStreamCache(caches);
        this.decorators = decorators;
        for (const p of [eventsProvider, accountDataProvider, receiptsProvider, typingProvider, presenceProvider, toDeviceProvider, deviceListsProvider, pushRulesProvider, ...providers])
            this.slots.set(p.stream, p);
    }
    /** The providers in sync order: room events first (it decides the joined rooms), then the others in token order. */
    providers() {
        return STREAMS.map((s) => this.slots.get(s)).filter((p) => p !== undefined);
    }
    async currentToken(s) {
        const t = zeroToken();
        for (const p of this.providers())
            t[p.stream] = await p.current(s);
        return t;
    }
    /** Aborted when the server shuts down: waiting long polls return at once. */
    get shutdownSignal() {
        return this.closing.signal;
    }
    shutdown() {
        this.closing.abort();
    }
}
