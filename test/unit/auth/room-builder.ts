// Test helper: builds the events of a room in a given room version (create, members, power levels, join
// rules ...) with the right event shape for the version, and keeps the room state to authorise against.
import { checkAuth, stateMapKey, type AuthOptions } from "../../../src/domain/auth/index.ts";
import { eventIdOf, eventReference, roomIdFromCreateEvent, withContentHash } from "../../../src/domain/events/hashes.ts";
import type { Pdu } from "../../../src/domain/events/types.ts";
import { getRoomVersion, type RoomVersion } from "../../../src/domain/rooms/room-versions.ts";
import { authTypesForEvent } from "../../../src/domain/auth/selection.ts";

export const ALICE = "@alice:a.example";
export const BOB = "@bob:b.example";
export const CAROL = "@carol:c.example";
export const DAVE = "@dave:a.example";

let counter = 0;

export interface BuildOptions {
  createContent?: Record<string, unknown>;
  /** Skip the creator's join, the power levels and join rules events. */
  bare?: boolean;
  powerLevels?: Record<string, unknown>;
  joinRule?: string;
}

export class RoomBuilder {
  readonly v: RoomVersion;
  readonly state = new Map<string, Pdu>();
  create: Pdu;
  roomId: string;
  private last: Pdu;
  private depth = 1;
  options: AuthOptions = {};

  constructor(
    version: string,
    readonly creator = ALICE,
    opts: BuildOptions = {},
  ) {
    const v = getRoomVersion(version);
    if (!v) throw new Error(`unknown version ${version}`);
    this.v = v;
    const content: Record<string, unknown> = { room_version: version, ...(opts.createContent ?? {}) };
    if (v.createHasCreator && !("creator" in content)) content["creator"] = creator;
    const server = creator.slice(creator.indexOf(":") + 1);
    const provisionalRoomId = `!room${++counter}:${server}`;
    const create = this.raw({
      type: "m.room.create",
      state_key: "",
      sender: creator,
      content,
      room_id: v.roomIdIsCreateEventHash ? undefined : provisionalRoomId,
      prev_events: [],
      auth_events: [],
      depth: 1,
    });
    this.create = create;
    this.roomId = v.roomIdIsCreateEventHash ? roomIdFromCreateEvent(create, v) : provisionalRoomId;
    this.state.set(stateMapKey("m.room.create", ""), create);
    this.last = create;
    if (!opts.bare) {
      this.send(this.member(creator, creator, "join"));
      this.send(this.event("m.room.power_levels", "", creator, opts.powerLevels ?? { users: this.adminUsers() }));
      this.send(this.event("m.room.join_rules", "", creator, { join_rule: opts.joinRule ?? "public" }));
    }
  }

  /** A PDU with the version's shape (event_id and tuple references in v1–2) and a content hash. */
  raw(fields: Partial<Pdu> & { type: string; sender: string; content: Record<string, unknown> }): Pdu {
    const pdu: Pdu = {
      origin_server_ts: 1_700_000_000_000 + counter,
      prev_events: [],
      auth_events: [],
      depth: 1,
      hashes: { sha256: "" },
      signatures: {},
      ...fields,
    };
    if (pdu.room_id === undefined) delete pdu.room_id;
    if (this.v.eventIdFormat === "server-assigned") {
      const server = fields.sender.slice(fields.sender.indexOf(":") + 1);
      pdu.event_id = `$ev${++counter}:${server}`;
    }
    return withContentHash(pdu);
  }

  /** A reference to `e` in the version's prev_events/auth_events shape. */
  ref(e: Pdu): string | [string, { sha256: string }] {
    return this.v.eventIdFormat === "server-assigned" ? eventReference(e, this.v) : eventIdOf(e, this.v);
  }

  id(e: Pdu): string {
    return eventIdOf(e, this.v);
  }

  /** An event following the latest one, with auth_events selected from the current state. */
  event(type: string, stateKey: string | undefined, sender: string, content: Record<string, unknown>, extra: Partial<Pdu> = {}): Pdu {
    const auth = authTypesForEvent(this.v, type, stateKey, sender, content)
      .map(([t, k]) => this.state.get(stateMapKey(t, k)))
      .filter((e): e is Pdu => e !== undefined);
    const fields: Partial<Pdu> & { type: string; sender: string; content: Record<string, unknown> } = {
      type,
      sender,
      content,
      room_id: this.roomId,
      prev_events: [this.ref(this.last)] as Pdu["prev_events"],
      auth_events: auth.map((e) => this.ref(e)) as Pdu["auth_events"],
      depth: ++this.depth,
      ...extra,
    };
    if (stateKey !== undefined) fields.state_key = stateKey;
    return this.raw(fields);
  }

  member(sender: string, target: string, membership: string, content: Record<string, unknown> = {}): Pdu {
    return this.event("m.room.member", target, sender, { membership, ...content });
  }

  check(e: Pdu, options: AuthOptions = this.options): void {
    checkAuth(e, this.state, this.v, options);
  }

  /** Authorises `e` against the current state and applies it. */
  send(e: Pdu, options: AuthOptions = this.options): Pdu {
    this.check(e, options);
    return this.apply(e);
  }

  /** Applies `e` without authorising it. */
  apply(e: Pdu): Pdu {
    if (typeof e.state_key === "string") this.state.set(stateMapKey(e.type, e.state_key), e);
    this.last = e;
    return e;
  }

  join(user: string): Pdu {
    return this.send(this.member(user, user, "join"));
  }

  /** `users` giving the creator 100 (v1–11); empty in v12, where creators may not be listed. */
  adminUsers(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return { ...(this.v.privilegedCreators ? {} : { [this.creator]: 100 }), ...extra };
  }

  setPowerLevels(content: Record<string, unknown>, sender = this.creator): Pdu {
    return this.send(this.event("m.room.power_levels", "", sender, content));
  }

  setJoinRule(rule: string, extra: Record<string, unknown> = {}, sender = this.creator): Pdu {
    return this.send(this.event("m.room.join_rules", "", sender, { join_rule: rule, ...extra }));
  }
}

export const ALL_VERSIONS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"];
export const versionsWhere = (pred: (v: RoomVersion) => boolean) => ALL_VERSIONS.filter((id) => pred(getRoomVersion(id)!));
