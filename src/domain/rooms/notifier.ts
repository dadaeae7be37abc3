// The notifier: tells waiting readers (sync long-polls, GraphQL subscriptions, live timelines) that a
// stream moved. It carries positions only; readers fetch what changed. Room events reach it through the
// commit notice (consumers/commit-feed.ts); work that must not miss an event (push, appservices, the
// federation sender) is a durable consumer instead (consumers/durable.ts).
// ARCHITECTURE "Streams, tokens and live updates".
import { EventEmitter } from "node:events";
import type { PositionGate } from "../store/ids.ts";

export interface NewEventNotice {
  roomId: string;
  eventId: string;
  streamOrdering: number;
  type: string;
  stateKey?: string;
  sender: string;
}

/** The ordered streams a sync token is the tuple of. */
export type StreamName =
  | "events"
  | "account_data"
  | "receipts"
  | "typing"
  | "presence"
  | "to_device"
  | "device_lists"
  | "push_rules"
  | "sticky_events";

/** A stream moved to `position`; the change concerns these users and/or the members of these rooms. */
export interface StreamNotice {
  stream: StreamName;
  position: number;
  userIds?: readonly string[];
  roomIds?: readonly string[];
  /**
   * Not a new event: the state of these rooms became complete (a partial-state join finished), so readers
   * that left them out show them now. Stream "events", at a position already read.
   */
  stateCompleted?: boolean;
}

export class Notifier {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private readonly gates = new Map<StreamName, PositionGate>();
  private parkedReaders = 0;
  /** Several processes: hears every local stream notice once released (cluster/replication.ts relays it). */
  private relay: ((n: StreamNotice) => void) | undefined;

  /** Readers parked until a notice wakes them (long polls, live subscriptions between updates). */
  get waiting(): number {
    return this.parkedReaders;
  }

  /** Counts one reader as parked until the returned function is called (once). */
  park(): () => void {
    this.parkedReaders++;
    let done = false;
    return () => {
      if (!done) this.parkedReaders--;
      done = true;
    };
  }

  /**
   * Holds notices of `stream` back until its position is persisted (every lower position committed or
   * abandoned, src/domain/store/ids.ts): a reader woken by a notice can then read up to it. Set once per
   * stream with allocated positions (services.ts).
   */
  gate(stream: StreamName, gate: PositionGate): void {
    this.gates.set(stream, gate);
  }

  private when(stream: StreamName, position: number, fn: () => void): void {
    const g = this.gates.get(stream);
    if (g) g.whenPersisted(position, fn);
    else fn();
  }

  newEvent(n: NewEventNotice): void {
    this.when("events", n.streamOrdering, () => {
      this.emitter.emit("event", n);
      this.emitter.emit("stream", { stream: "events", position: n.streamOrdering, roomIds: [n.roomId], ...(n.type === "m.room.member" && n.stateKey ? { userIds: [n.stateKey] } : {}) } satisfies StreamNotice);
    });
  }

  onEvent(fn: (n: NewEventNotice) => void): () => void {
    this.emitter.on("event", fn);
    return () => this.emitter.off("event", fn);
  }

  /** Any stream other than room events moved (room events also arrive here, as stream "events"). */
  notify(n: StreamNotice): void {
    this.when(n.stream, n.position, () => {
      this.emitter.emit("stream", n);
      this.relay?.(n);
    });
  }

  /** A notice another process relayed (its stream's position here was moved first): not relayed again. */
  notifyRemote(n: StreamNotice): void {
    this.when(n.stream, n.position, () => this.emitter.emit("stream", n));
  }

  /** Several processes: `fn` hears each notice `notify` releases (one relay; replication sets it). */
  relayTo(fn: ((n: StreamNotice) => void) | undefined): void {
    this.relay = fn;
  }

  onStream(fn: (n: StreamNotice) => void): () => void {
    this.emitter.on("stream", fn);
    return () => this.emitter.off("stream", fn);
  }
}
