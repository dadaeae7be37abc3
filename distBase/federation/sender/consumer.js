import { destinationsOfEvents } from "../../domain/federation/room-servers.js";
export const federationSenderConsumer = {
    name: "federation_sender",
    // Destinations come from the state group of each event: handling again decides the same (durable.ts).
    replayable: true,
    startAt: "now",
    batchSize: 100,
    async handle(tx, events, s) {
        if (!s.config.send_federation)
            return;
        const destinations = await destinationsOfEvents(s, events);
        if (destinations.size === 0)
            return;
        const rows = [];
        for (const e of events)
            for (const destination of destinations.get(e.eventId) ?? [])
                rows.push({ destination, streamOrdering: e.streamOrdering, roomId: e.roomId, eventId: e.eventId });
        if (rows.length === 0)
            return;
        const sender = s.federationSender;
        await sender.store.enqueue(tx, rows);
        const touched = new Set(rows.map((r) => r.destination));
        tx.onSettled?.((committed) => {
            if (committed)
                sender.wake(touched);
        });
    },
};
