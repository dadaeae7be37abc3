// The push capability's state on Services (`s.push`): the rule cache, the notification records, each
// room's push state in memory, the unread counts in memory and the pushers with their gateway queues.
import type { Services } from "../services.ts";
import { PushRuleStore } from "../store/push-rules.ts";
import { PushNotificationStore } from "../store/push-notifications.ts";
import { PusherStore } from "../store/pushers.ts";
import type { LruCache } from "../cache/lru.ts";
import { RuleCache, type UserRules } from "./rule-cache.ts";
import { defaultRuleFeatures } from "./default-rules.ts";
import type { RoomPushState } from "./room-state.ts";
import { UnreadCounts } from "./counts.ts";
import { PusherPool } from "./gateway/pool.ts";

export class PushServices {
  readonly rules: RuleCache;
  readonly notifications: PushNotificationStore;
  readonly rooms: LruCache<string, RoomPushState>;
  readonly counts = new UnreadCounts();
  readonly pushers: PusherPool;

  constructor(s: Services) {
    this.rules = new RuleCache(new PushRuleStore(s.storage.sql), s.caches.get<string, UserRules>("push_rules", 10_000), defaultRuleFeatures(s.config));
    this.notifications = new PushNotificationStore(s.storage.sql);
    this.rooms = s.caches.get<string, RoomPushState>("push_room_state", 10_000);
    this.pushers = new PusherPool(s, new PusherStore(s.storage.sql));
  }

  /** A read receipt of `userId` moved in `roomId`: their counts there change, and their badge may. */
  receiptMoved(userId: string, roomId: string): void {
    this.counts.drop(userId, roomId);
    this.pushers.badge(userId);
  }
}
