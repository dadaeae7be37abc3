// The notifier: tells waiting readers (sync long-polls, GraphQL subscriptions, later push, appservices
// and federation senders) that a stream moved. It carries positions only; readers fetch what changed.
import { EventEmitter } from "node:events";

export interface NewEventNotice {
  roomId: string;
  eventId: string;
  streamOrdering: number;
  type: string;
  stateKey?: string;
  sender: string;
}

export class Notifier {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  newEvent(n: NewEventNotice): void {
    this.emitter.emit("event", n);
  }

  onEvent(fn: (n: NewEventNotice) => void): () => void {
    this.emitter.on("event", fn);
    return () => this.emitter.off("event", fn);
  }
}
