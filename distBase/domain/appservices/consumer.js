import { inTimeline } from "../store/events.js";
import { reachableServices, RoomInterest, wantsEvent } from "./interest.js";
export const appServiceEvents = {
    name: "appservices",
    async handle(tx, events, s) {
        const services = reachableServices(s);
        if (services.length === 0)
            return;
        const timeline = events.filter(inTimeline);
        if (timeline.length === 0)
            return;
        const rooms = await RoomInterest.load(s, timeline.map((e) => e.roomId));
        const items = [];
        const woken = new Set();
        for (const e of timeline) {
            for (const as of services) {
                if (!wantsEvent(s, as, e, rooms))
                    continue;
                items.push({ serviceId: as.id, kind: "event", eventId: e.eventId });
                woken.add(as.id);
            }
        }
        if (items.length === 0)
            return;
        await s.appservices.queue.enqueue(tx, items);
        tx.onSettled?.((committed) => {
            if (committed)
                s.appservices.senders.wake(woken);
        });
    },
};
