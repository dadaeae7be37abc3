// Test helper for state resolution: builds named events of any room version (v1–2 explicit ids, v3+
// reference-hash ids, v12 rooms named by their create event), state maps from names, in-memory loaders
// (counting calls, shuffling their answers, hiding events), and a DAG walker that computes the state at
// every event of a prev_events graph the way a server does (resolving at merges), in the manner of
// Synapse's and ruma's state resolution tests.
import { authTypesForEvent, checkAuth, stateMapKey } from "../../../src/domain/auth/index.ts";
import { eventIdOf, eventReference, roomIdFromCreateEvent, withContentHash } from "../../../src/domain/events/hashes.ts";
import type { Pdu } from "../../../src/domain/events/types.ts";
import { getRoomVersion, type RoomVersion } from "../../../src/domain/rooms/room-versions.ts";
import { resolveState, type StateResolutionInput } from "../../../src/domain/state/resolve.ts";
import type { StateMap } from "../../../src/domain/store/state-groups.ts";

export const ALICE = "@alice:example.com";
export const BOB = "@bob:example.com";
export const CHARLIE = "@charlie:example.com";
export const EVELYN = "@evelyn:example.com";
export const ZARA = "@zara:example.com";

export interface EventSpec {
  name: string;
  sender: string;
  type: string;
  stateKey?: string;
  content?: Record<string, unknown>;
  /** Names of the auth events (the create event is dropped in v12, where the room id names it). */
  auth?: string[];
  /** Names of the prev events. */
  prev?: string[];
  ts?: number;
  depth?: number;
}

/** A small seeded PRNG (mulberry32): the same seed gives the same sequence. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffled<T>(items: Iterable<T>, random: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

export interface LoaderOptions {
  /** Shuffle the order of each answer with this seed. */
  seed?: number;
  /** Names of events the loader pretends not to have. */
  hide?: Iterable<string>;
}

export class EventSet {
  readonly v: RoomVersion;
  /** Event id → PDU. */
  readonly events = new Map<string, Pdu>();
  private readonly ids = new Map<string, string>();
  private readonly names = new Map<string, string>();
  roomId = "!room:example.com";
  private clock = 0;
  /** Every id passed to a loader, one entry per call. */
  readonly calls: string[][] = [];

  constructor(readonly versionId: string) {
    const v = getRoomVersion(versionId);
    if (!v) throw new Error(`unknown room version ${versionId}`);
    this.v = v;
  }

  id(name: string): string {
    const id = this.ids.get(name);
    if (!id) throw new Error(`no event named ${name}`);
    return id;
  }

  nameOf(id: string): string {
    return this.names.get(id) ?? id;
  }

  pdu(name: string): Pdu {
    return this.events.get(this.id(name))!;
  }

  has(name: string): boolean {
    return this.ids.has(name);
  }

  /** A power levels `users` map as the version allows it (v12 creators may not be listed). */
  users(levels: Record<string, number>, creator = ALICE): Record<string, number> {
    if (!this.v.privilegedCreators) return levels;
    const out = { ...levels };
    delete out[creator];
    return out;
  }

  private ref(name: string): string | [string, { sha256: string }] {
    const pdu = this.pdu(name);
    return this.v.eventIdFormat === "server-assigned" ? eventReference(pdu, this.v) : this.id(name);
  }

  add(spec: EventSpec): string {
    if (this.ids.has(spec.name)) throw new Error(`duplicate event name ${spec.name}`);
    const isCreate = spec.type === "m.room.create";
    const content = { ...(spec.content ?? {}) };
    if (isCreate && !("room_version" in content)) content["room_version"] = this.versionId;
    if (isCreate && this.v.createHasCreator && !("creator" in content)) content["creator"] = spec.sender;
    const prev = spec.prev ?? [];
    const auth = (spec.auth ?? []).filter((n) => !(this.v.roomIdIsCreateEventHash && this.pdu(n).type === "m.room.create"));
    const depth = spec.depth ?? 1 + Math.max(0, ...prev.map((n) => this.pdu(n).depth));
    const pdu: Pdu = {
      room_id: this.roomId,
      sender: spec.sender,
      type: spec.type,
      content,
      origin_server_ts: spec.ts ?? this.clock++,
      prev_events: prev.map((n) => this.ref(n)) as Pdu["prev_events"],
      auth_events: auth.map((n) => this.ref(n)) as Pdu["auth_events"],
      depth,
      hashes: { sha256: "" },
      signatures: {},
    };
    if (spec.stateKey !== undefined) pdu.state_key = spec.stateKey;
    if (isCreate && this.v.roomIdIsCreateEventHash) delete pdu.room_id;
    if (this.v.eventIdFormat === "server-assigned") pdu.event_id = `$${spec.name}:example.com`;
    const hashed = withContentHash(pdu);
    const id = eventIdOf(hashed, this.v);
    if (isCreate && this.v.roomIdIsCreateEventHash) this.roomId = roomIdFromCreateEvent(hashed, this.v);
    this.events.set(id, hashed);
    this.ids.set(spec.name, id);
    this.names.set(id, spec.name);
    return id;
  }

  /** A state map holding the named events. */
  state(...names: string[]): Map<string, string> {
    const out = new Map<string, string>();
    for (const n of names) {
      const e = this.pdu(n);
      out.set(stateMapKey(e.type, e.state_key!), this.id(n));
    }
    return out;
  }

  /** A `loadEvents` over the events built so far; records its calls. */
  loader(opts: LoaderOptions = {}): StateResolutionInput["loadEvents"] {
    const hidden = new Set([...(opts.hide ?? [])].map((n) => this.id(n)));
    const random = opts.seed === undefined ? undefined : prng(opts.seed);
    return async (ids) => {
      this.calls.push([...ids]);
      const found: Array<[string, Pdu]> = [];
      for (const id of ids) {
        const e = this.events.get(id);
        if (e && !hidden.has(id)) found.push([id, e]);
      }
      return new Map(random ? shuffled(found, random) : found);
    };
  }

  /** A result keyed "type|state_key" → event name, for readable assertions. */
  named(state: StateMap): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, id] of [...state].sort(([a], [b]) => (a < b ? -1 : 1))) out[key.replace("\u0000", "|")] = this.nameOf(id);
    return out;
  }

  resolve(stateSets: StateMap[], extra: Partial<StateResolutionInput> = {}): Promise<StateMap> {
    return resolveState({ version: this.v, stateSets, loadEvents: this.loader(), ...extra });
  }
}

// --- the DAG walker ------------------------------------------------------------------------------------

export interface NodeSpec {
  name: string;
  sender: string;
  type: string;
  stateKey?: string;
  content?: Record<string, unknown>;
}

/** The events every classic graph starts with (Synapse's and ruma's INITIAL_EVENTS), in order. */
export function initialEvents(set: EventSet): NodeSpec[] {
  const join = { membership: "join" };
  return [
    { name: "CREATE", sender: ALICE, type: "m.room.create", stateKey: "", content: {} },
    { name: "IMA", sender: ALICE, type: "m.room.member", stateKey: ALICE, content: join },
    { name: "IPOWER", sender: ALICE, type: "m.room.power_levels", stateKey: "", content: { users: set.users({ [ALICE]: 100 }) } },
    { name: "IJR", sender: ALICE, type: "m.room.join_rules", stateKey: "", content: { join_rule: "public" } },
    { name: "IMB", sender: BOB, type: "m.room.member", stateKey: BOB, content: join },
    { name: "IMC", sender: CHARLIE, type: "m.room.member", stateKey: CHARLIE, content: join },
    { name: "IMZ", sender: ZARA, type: "m.room.member", stateKey: ZARA, content: join },
    { name: "START", sender: ZARA, type: "m.room.message", content: { body: "start" } },
    { name: "END", sender: ZARA, type: "m.room.message", content: { body: "end" } },
  ];
}

export const INITIAL_EDGES = ["START", "IMZ", "IMC", "IMB", "IJR", "IPOWER", "IMA", "CREATE"];

export interface DagResult {
  set: EventSet;
  /** Node name → the state after it. */
  stateAfter: Map<string, StateMap>;
  /** Node names whose event failed auth against the state before it. */
  unauthorised: string[];
}

/**
 * Walks a prev_events DAG given as chains of names (`[A, B, C]`: A's prev is B, B's prev is C), building
 * each event with auth events selected from the state before it and resolving that state at merges.
 */
export async function walkDag(version: string, nodes: (set: EventSet) => NodeSpec[], edges: string[][], withInitial = true): Promise<DagResult> {
  const set = new EventSet(version);
  const specs = [...(withInitial ? initialEvents(set) : []), ...nodes(set)];
  const byName = new Map(specs.map((s) => [s.name, s]));
  const prevs = new Map<string, Set<string>>(specs.map((s) => [s.name, new Set<string>()]));
  const chains = withInitial ? [INITIAL_EDGES, ...edges] : edges;
  for (const chain of chains) for (let i = 0; i + 1 < chain.length; i++) prevs.get(chain[i]!)!.add(chain[i + 1]!);

  // Topological order, smallest name first among the ready ones.
  const order: string[] = [];
  const done = new Set<string>();
  while (order.length < specs.length) {
    const ready = specs.map((s) => s.name).filter((n) => !done.has(n) && [...prevs.get(n)!].every((p) => done.has(p)));
    if (ready.length === 0) throw new Error("the DAG has a cycle");
    const next = ready.sort()[0]!;
    order.push(next);
    done.add(next);
  }

  const stateAfter = new Map<string, StateMap>();
  const unauthorised: string[] = [];
  for (const name of order) {
    const spec = byName.get(name)!;
    const prev = [...prevs.get(name)!];
    let before: StateMap;
    if (prev.length === 0) before = new Map();
    else if (prev.length === 1) before = stateAfter.get(prev[0]!)!;
    else before = await set.resolve(prev.map((p) => stateAfter.get(p)!));

    const content = spec.content ?? {};
    const auth = authTypesForEvent(set.v, spec.type, spec.stateKey, spec.sender, content)
      .map(([t, k]) => before.get(stateMapKey(t, k)))
      .filter((id): id is string => id !== undefined)
      .map((id) => set.nameOf(id));
    set.add({ name, sender: spec.sender, type: spec.type, stateKey: spec.stateKey, content, prev, auth });

    const pdu = set.pdu(name);
    const authState = new Map<string, Pdu>();
    for (const [key, id] of before) authState.set(key, set.events.get(id)!);
    try {
      const createId = before.get(stateMapKey("m.room.create", ""));
      checkAuth(pdu, authState, set.v, { createEventId: createId });
    } catch {
      unauthorised.push(name);
    }

    const after = new Map(before);
    if (spec.stateKey !== undefined) after.set(stateMapKey(spec.type, spec.stateKey), set.id(name));
    stateAfter.set(name, after);
  }
  return { set, stateAfter, unauthorised };
}

/**
 * The state at END restricted to the keys that changed since START plus the expected ones (the check of
 * Synapse's `do_check`), as "type|state_key" → name.
 */
export function changedSinceStart(dag: DagResult, expectedNames: string[]): Record<string, string> {
  const { set } = dag;
  const start = dag.stateAfter.get("START")!;
  const end = dag.stateAfter.get("END")!;
  const expectedKeys = new Set(expectedNames.map((n) => stateMapKey(set.pdu(n).type, set.pdu(n).state_key!)));
  const out = new Map<string, string>();
  for (const [key, id] of end) if (expectedKeys.has(key) || start.get(key) !== id) out.set(key, id);
  return set.named(out);
}

export function expectedNamed(set: EventSet, names: string[]): Record<string, string> {
  return set.named(set.state(...names));
}

/**
 * A small room built by hand in `set`: CREATE, IMA (Alice joins), IPOWER (`levels`), IJR (public), then a
 * join for every other user in `levels`. Returns the names of its state events.
 */
export function baseRoom(set: EventSet, levels: Record<string, number> = { [ALICE]: 100, [BOB]: 50, [CHARLIE]: 50 }): string[] {
  set.add({ name: "CREATE", sender: ALICE, type: "m.room.create", stateKey: "" });
  set.add({ name: "IMA", sender: ALICE, type: "m.room.member", stateKey: ALICE, content: { membership: "join" }, auth: ["CREATE"], prev: ["CREATE"] });
  set.add({
    name: "IPOWER",
    sender: ALICE,
    type: "m.room.power_levels",
    stateKey: "",
    content: { users: set.users(levels) },
    auth: ["CREATE", "IMA"],
    prev: ["IMA"],
  });
  set.add({ name: "IJR", sender: ALICE, type: "m.room.join_rules", stateKey: "", content: { join_rule: "public" }, auth: ["CREATE", "IMA", "IPOWER"], prev: ["IPOWER"] });
  const names = ["CREATE", "IMA", "IPOWER", "IJR"];
  let prev = "IJR";
  for (const user of Object.keys(levels)) {
    if (user === ALICE) continue;
    const name = "IM-" + user.slice(1, user.indexOf(":"));
    set.add({ name, sender: user, type: "m.room.member", stateKey: user, content: { membership: "join" }, auth: ["CREATE", "IPOWER", "IJR"], prev: [prev] });
    names.push(name);
    prev = name;
  }
  return names;
}

/** The auth events a state event sent by `sender` in the base room cites (create, power levels, member). */
export function baseAuth(sender: string): string[] {
  return ["CREATE", "IPOWER", sender === ALICE ? "IMA" : "IM-" + sender.slice(1, sender.indexOf(":"))];
}
