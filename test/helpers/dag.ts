// Hand-built room DAGs for pipeline tests: events built and signed with the real builder
// (src/domain/rooms/build-event.ts) as any server — this one or a made-up remote one with its own test
// key — on the prev_events the test chooses, so forks, merges and stale branches are easy to write. A
// key ring that knows every test server's keys stands in for federation's key fetching.
import { randomBytes, type KeyObject } from "node:crypto";
import type { Services } from "../../src/domain/services.ts";
import type { KeyRing } from "../../src/domain/keys/key-ring.ts";
import { referencedIds, type Pdu } from "../../src/domain/events/types.ts";
import { generateSigningKey, type SigningKey } from "../../src/domain/signing-key.ts";
import { buildEvent, type BuiltEvent, type EventDraft, type EventSigner } from "../../src/domain/rooms/build-event.ts";
import { getRoomVersion, type RoomVersion } from "../../src/domain/rooms/room-versions.ts";
import { roomIdFromCreateEvent } from "../../src/domain/events/hashes.ts";
import { stateKeyOf } from "../../src/domain/store/state-groups.ts";

/** origin_server_ts of built events: distinct for every event (two rooms' create events never coincide). */
let clock = 1_700_000_000_000;

/** A key ring knowing the servers' keys given to it (and nothing else). */
export class TestKeyRing implements KeyRing {
  private readonly keys = new Map<string, KeyObject>();
  add(serverName: string, key: SigningKey): this {
    this.keys.set(`${serverName}\u0000${key.keyId}`, key.publicKeyObject);
    return this;
  }
  async verifyKey(serverName: string, keyId: string): Promise<KeyObject | undefined> {
    return this.keys.get(`${serverName}\u0000${keyId}`);
  }
  async refreshDirect(): Promise<void> {}
}

export interface TestServerIdentity extends EventSigner {
  user(localpart: string): string;
}

export function remoteServer(serverName: string, key: SigningKey = generateSigningKey()): TestServerIdentity {
  return { serverName, key, user: (l) => `@${l}:${serverName}` };
}

export function localServer(s: Services): TestServerIdentity {
  return { serverName: s.config.server_name, key: s.signingKeys[0]!, user: (l) => `@${l}:${s.config.server_name}` };
}

/** The events of one room, built on chosen prev_events; tracks each event's state after and depth. */
export class Dag {
  readonly v: RoomVersion;
  roomId = "";
  private readonly pdus = new Map<string, Pdu>();
  private readonly after = new Map<string, Map<string, string>>();
  private readonly depth = new Map<string, number>();

  constructor(private readonly s: Services, version: string) {
    this.v = getRoomVersion(version)!;
  }

  /**
   * Builds an event on `prev`, signed by `by`. Its auth events are selected from the state after the
   * first prev, or after `authFrom` (an older event: auth events that no longer hold).
   */
  async event(by: EventSigner, draft: EventDraft, prev: string[], authFrom?: string): Promise<BuiltEvent> {
    const from = authFrom ?? prev[0];
    const state = from !== undefined ? this.after.get(from)! : new Map<string, string>();
    const maxDepth = Math.max(0, ...prev.map((id) => this.depth.get(id)!));
    const isCreate = draft.type === "m.room.create";
    const roomId = isCreate && this.v.roomIdIsCreateEventHash ? undefined : this.roomId || `!dag${randomBytes(6).toString("hex")}:${by.serverName}`;
    const ctx = { roomId, version: this.v, state, extremities: prev, maxDepth, lookup: async (id: string) => this.pdus.get(id) };
    const built = await buildEvent(this.s, ctx, draft, ++clock, by);
    if (isCreate) this.roomId = roomId ?? roomIdFromCreateEvent(built.pdu, this.v);
    this.pdus.set(built.eventId, built.pdu);
    this.depth.set(built.eventId, built.pdu.depth);
    const next = new Map(prev.length > 0 ? this.after.get(prev[0]!)! : []);
    if (draft.stateKey !== undefined) next.set(stateKeyOf(draft.type, draft.stateKey), built.eventId);
    this.after.set(built.eventId, next);
    return built;
  }

  /** Takes in an event built elsewhere (e.g. by a local send), so later events can build on it. */
  adopt(eventId: string, pdu: Pdu): void {
    const prev = referencedIds(pdu.prev_events)[0];
    const next = new Map(prev ? this.after.get(prev)! : []);
    if (pdu.state_key !== undefined) next.set(stateKeyOf(pdu.type, pdu.state_key), eventId);
    this.pdus.set(eventId, pdu);
    this.depth.set(eventId, pdu.depth);
    this.after.set(eventId, next);
  }

  /** A room's first events: create, the creator's join, power levels (creator 100), public join rules. */
  async create(by: TestServerIdentity, creator: string): Promise<BuiltEvent[]> {
    const content: Record<string, unknown> = { room_version: this.v.id };
    if (this.v.createHasCreator) content.creator = creator;
    const create = await this.event(by, { type: "m.room.create", stateKey: "", sender: creator, content }, []);
    const join = await this.event(by, { type: "m.room.member", stateKey: creator, sender: creator, content: { membership: "join" } }, [create.eventId]);
    const users = this.v.privilegedCreators ? {} : { [creator]: 100 };
    const pl = await this.event(by, { type: "m.room.power_levels", stateKey: "", sender: creator, content: { users } }, [join.eventId]);
    const rules = await this.event(by, { type: "m.room.join_rules", stateKey: "", sender: creator, content: { join_rule: "public" } }, [pl.eventId]);
    return [create, join, pl, rules];
  }

  message(by: EventSigner, sender: string, body: string, prev: string[]): Promise<BuiltEvent> {
    return this.event(by, { type: "m.room.message", sender, content: { msgtype: "m.text", body } }, prev);
  }

  member(by: EventSigner, sender: string, target: string, membership: string, prev: string[]): Promise<BuiltEvent> {
    return this.event(by, { type: "m.room.member", stateKey: target, sender, content: { membership } }, prev);
  }
}
