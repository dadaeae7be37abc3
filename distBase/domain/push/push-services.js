import { PushRuleStore } from "../store/push-rules.js";
import { PushNotificationStore } from "../store/push-notifications.js";
import { PusherStore } from "../store/pushers.js";
import { RuleCache } from "./rule-cache.js";
import { UnreadCounts } from "./counts.js";
import { PusherPool } from "./gateway/pool.js";
export class PushServices {
    rules;
    notifications;
    rooms;
    counts = new UnreadCounts();
    pushers;
    constructor(s) {
        this.rules = new RuleCache(new PushRuleStore(s.storage.sql), s.caches.get("push_rules", 10_000));
        this.notifications = new PushNotificationStore(s.storage.sql);
        this.rooms = s.caches.get("push_room_state", 10_000);
        this.pushers = new PusherPool(s, new PusherStore(s.storage.sql));
    }
    /** A read receipt of `userId` moved in `roomId`: their counts there change, and their badge may. */
    receiptMoved(userId, roomId) {
        this.counts.drop(userId, roomId);
        this.pushers.badge(userId);
    }
}
