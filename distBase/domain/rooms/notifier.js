// The notifier: tells waiting readers (sync long-polls, GraphQL subscriptions, live timelines) that a
// stream moved. It carries positions only; readers fetch what changed. Room events reach it through the
// commit notice (consumers/commit-feed.ts); work that must not miss an event (push, appservices, the
// federation sender) is a durable consumer instead (consumers/durable.ts).
// ARCHITECTURE "Streams, tokens and live updates".
import { EventEmitter } from "node:events";
export class Notifier {
    emitter = new EventEmitter().setMaxListeners(0);
    gates = new Map();
    parkedReaders = 0;
    /** Readers parked until a notice wakes them (long polls, live subscriptions between updates). */
    get waiting() {
        return this.parkedReaders;
    }
    /** Counts one reader as parked until the returned function is called (once). */
    park() {
        this.parkedReaders++;
        let done = false;
        return () => {
            if (!done)
                this.parkedReaders--;
            done = true;
        };
    }
    /**
     * Holds notices of `stream` back until its position is persisted (every lower position committed or
     * abandoned, src/domain/store/ids.ts): a reader woken by a notice can then read up to it. Set once per
     * stream with allocated positions (services.ts).
     */
    gate(stream, gate) {
        this.gates.set(stream, gate);
    }
    when(stream, position, fn) {
        const g = this.gates.get(stream);
        if (g)
            g.whenPersisted(position, fn);
        else
            fn();
    }
    newEvent(n) {
        this.when("events", n.streamOrdering, () => {
            this.emitter.emit("event", n);
            this.emitter.emit("stream", { stream: "events", position: n.streamOrdering, roomIds: [n.roomId], ...(n.type === "m.room.member" && n.stateKey ? { userIds: [n.stateKey] } : {}) });
        });
    }
    onEvent(fn) {
        this.emitter.on("event", fn);
        return () => this.emitter.off("event", fn);
    }
    /** Any stream other than room events moved (room events also arrive here, as stream "events"). */
    notify(n) {
        this.when(n.stream, n.position, () => this.emitter.emit("stream", n));
    }
    onStream(fn) {
        this.emitter.on("stream", fn);
        return () => this.emitter.off("stream", fn);
    }
}
