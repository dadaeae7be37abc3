// Last-seen tracking of devices (ip, user agent, time) for GET /devices, written in batches every few
// seconds rather than once per request: authentication is the hottest path there is.
import type { Logger } from "pino";
import type { SessionStore } from "../store/sessions.ts";

interface Seen {
  userId: string;
  deviceId: string;
  ts: number;
  ip: string;
  userAgent: string | null;
}

export class DeviceActivity {
  private pending = new Map<string, Seen>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly store: SessionStore, private readonly log: Logger, private readonly intervalMs = 5000) {}

  record(seen: Seen): void {
    this.pending.set(`${seen.userId}\u0000${seen.deviceId}`, seen);
    this.timer ??= setTimeout(() => void this.flush(), this.intervalMs).unref();
  }

  /** What was seen but not yet written, so reads can show it at once. */
  peek(userId: string, deviceId: string): Seen | undefined {
    return this.pending.get(`${userId}\u0000${deviceId}`);
  }

  forget(userId: string, deviceIds?: string[]): void {
    for (const [k, v] of this.pending) if (v.userId === userId && (!deviceIds || deviceIds.includes(v.deviceId))) this.pending.delete(k);
  }

  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    this.flushing = this.flushing.then(() =>
      this.store.recordLastSeen(batch).catch((err: unknown) => this.log.warn({ err }, "could not record device activity")),
    );
    return this.flushing;
  }

  async stop(): Promise<void> {
    await this.flush();
  }
}
