// A test client's incremental /sync against any homeserver (Weft or Synapse): it remembers its `since`
// token and accumulates what each sync brings per room (timeline, ephemeral events, invites, left rooms),
// and long-polls until a condition on what it has seen holds — waiting on the server, never sleeping.
import { expect } from "vitest";
import { expectMatchesSpec } from "./spec.ts";

const enc = encodeURIComponent;

export interface SyncEvent {
  event_id: string;
  type: string;
  sender: string;
  state_key?: string;
  content: Record<string, any>;
}

/** Anything with a client API: a Weft test server or a Synapse. */
export interface ClientApi {
  call(method: string, path: string, opts?: { body?: unknown; token?: string }): Promise<{ status: number; json: any }>;
}

export class SyncClient {
  since?: string;
  readonly timeline = new Map<string, SyncEvent[]>();
  readonly ephemeral = new Map<string, { type: string; content: any }[]>();
  readonly invites = new Map<string, SyncEvent[]>();
  readonly left = new Map<string, SyncEvent[]>();

  /** `spec`: validate every answer against the spec's /sync schema (Weft's; Synapse adds fields of its own). */
  constructor(
    readonly server: ClientApi,
    readonly who: { user_id: string; access_token: string },
    readonly spec = true,
  ) {}

  async sync(timeout = 0): Promise<void> {
    const filter = enc(JSON.stringify({ room: { timeline: { limit: 100 } } }));
    const res = await this.server.call("GET", `/_matrix/client/v3/sync?timeout=${timeout}&filter=${filter}${this.since ? `&since=${enc(this.since)}` : ""}`, { token: this.who.access_token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    if (this.spec) expectMatchesSpec(res, "GET", "/_matrix/client/v3/sync");
    this.since = res.json.next_batch;
    const add = <T>(m: Map<string, T[]>, k: string, v: T[] | undefined) => v?.length && m.set(k, [...(m.get(k) ?? []), ...v]);
    for (const [roomId, room] of Object.entries<any>(res.json.rooms?.join ?? {})) {
      add(this.timeline, roomId, room.timeline?.events);
      add(this.ephemeral, roomId, room.ephemeral?.events);
    }
    for (const [roomId, room] of Object.entries<any>(res.json.rooms?.invite ?? {})) add(this.invites, roomId, room.invite_state?.events);
    for (const [roomId, room] of Object.entries<any>(res.json.rooms?.leave ?? {})) add(this.left, roomId, room.timeline?.events);
  }

  /** Long-polls /sync until `check` returns a value (not undefined/false); fails after `ms`. */
  async until<T>(check: () => T | undefined | false, what: string, ms = 30_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = check();
      if (v !== undefined && v !== false) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} on ${this.who.user_id}'s /sync`);
      await this.sync(Math.max(0, Math.min(2000, deadline - Date.now())));
    }
  }

  /** The bodies of the messages seen in a joined room, in order. */
  bodies(roomId: string): string[] {
    return (this.timeline.get(roomId) ?? []).filter((e) => e.type === "m.room.message").map((e) => String(e.content.body));
  }

  /** Whether the event was seen in the room's timeline (joined or left). */
  has(roomId: string, eventId: string): boolean {
    return [...(this.timeline.get(roomId) ?? []), ...(this.left.get(roomId) ?? [])].some((e) => e.event_id === eventId);
  }

  /** The user ids typing in the room, as the last m.typing seen says. */
  typing(roomId: string): string[] | undefined {
    return (this.ephemeral.get(roomId) ?? []).filter((e) => e.type === "m.typing").at(-1)?.content.user_ids;
  }

  /** A user's receipt of `type` on `eventId`, if one was seen. */
  receipt(roomId: string, eventId: string, userId: string, type = "m.read"): { ts: number; thread_id?: string } | undefined {
    return (this.ephemeral.get(roomId) ?? []).filter((e) => e.type === "m.receipt").map((e) => e.content[eventId]?.[type]?.[userId]).find(Boolean);
  }
}
