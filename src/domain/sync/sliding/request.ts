// The request of simplified sliding sync (MSC4186, as Synapse serves it at
// /unstable/org.matrix.simplified_msc3575/sync): its JSON body parsed into typed lists, room
// subscriptions and extensions, with Synapse's limits (100 lists, list keys of 64 bytes at most,
// timeline_limit 0..1000, ranges of non-negative integers). A body that breaks the schema answers
// M_BAD_JSON; a range whose start is past its end M_INVALID_PARAM. Unknown fields are ignored, as the MSC
// asks of extensions. Also: how room configs combine (the superset: the larger timeline_limit, the union
// of required_state) and whether a new one asks for more than an old one.
import { MatrixError } from "../../errors.ts";
import { isPlainObject } from "../../events/types.ts";

export const MAX_LISTS = 100;
export const MAX_TIMELINE_LIMIT = 1000;
export const WILDCARD = "*";
export const LAZY = "$LAZY";
export const ME = "$ME";

/** required_state as a map: event type ("*": any) → the state keys asked for ("*", "$ME", "$LAZY" or a key). */
export type RequiredState = ReadonlyMap<string, ReadonlySet<string>>;

export interface RoomConfig {
  timelineLimit: number;
  requiredState: RequiredState;
}

export interface ListFilters {
  isDm?: boolean;
  spaces?: string[];
  isEncrypted?: boolean;
  isInvite?: boolean;
  roomTypes?: (string | null)[];
  notRoomTypes?: (string | null)[];
  roomNameLike?: string;
  tags?: string[];
  notTags?: string[];
}

export interface ListConfig extends RoomConfig {
  /** Inclusive [start, end] windows into the sorted, filtered list; none: the list is counted only. */
  ranges: [number, number][];
  filters?: ListFilters;
}

/** Which rooms a per-room extension covers: lists by key and subscribed rooms by id ("*": all). */
export interface ExtensionScope {
  lists: string[];
  rooms: string[];
}

export interface SlidingExtensions {
  toDevice?: { limit: number; since?: number };
  e2ee?: true;
  accountData?: ExtensionScope;
  receipts?: ExtensionScope;
  typing?: ExtensionScope;
  threadSubscriptions?: { limit: number };
  /** MSC4354's sticky events: at most `limit`, after the extension's own `since` (a position of its stream). */
  stickyEvents?: { limit: number; since?: number };
}

export interface SlidingRequest {
  connId: string;
  lists: Map<string, ListConfig>;
  roomSubscriptions: Map<string, RoomConfig>;
  extensions: SlidingExtensions;
}

export const THREAD_SUBSCRIPTIONS_EXTENSION = "io.element.msc4308.thread_subscriptions";
export const STICKY_EVENTS_EXTENSION = "org.matrix.msc4354.sticky_events";
const MAX_THREAD_SUBSCRIPTIONS_LIMIT = 512;

const bad = (msg: string) => new MatrixError("M_BAD_JSON", msg, 400);
const absent = (v: unknown) => v === undefined || v === null;

function object(v: unknown, where: string): Record<string, unknown> | undefined {
  if (absent(v)) return undefined;
  if (!isPlainObject(v)) throw bad(`${where} must be an object`);
  return v;
}
function bool(v: unknown, where: string): boolean | undefined {
  if (absent(v)) return undefined;
  if (typeof v !== "boolean") throw bad(`${where} must be a boolean`);
  return v;
}
function int(v: unknown, where: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (absent(v)) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < min || v > max) throw bad(`${where} must be an integer from ${min} to ${max}`);
  return v;
}
function strings(v: unknown, where: string): string[] | undefined {
  if (absent(v)) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) throw bad(`${where} must be an array of strings`);
  return v as string[];
}
function nullableStrings(v: unknown, where: string): (string | null)[] | undefined {
  if (absent(v)) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string" && x !== null)) throw bad(`${where} must be an array of strings or nulls`);
  return v as (string | null)[];
}

function requiredState(v: unknown, where: string): RequiredState {
  const out = new Map<string, Set<string>>();
  if (absent(v)) return out;
  if (!Array.isArray(v)) throw bad(`${where} must be an array of [type, state_key] pairs`);
  for (const pair of v) {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string" || typeof pair[1] !== "string") throw bad(`${where} must be an array of [type, state_key] pairs`);
    const [type, key] = pair as [string, string];
    let keys = out.get(type);
    if (!keys) out.set(type, (keys = new Set()));
    keys.add(key);
  }
  return out;
}

function roomConfig(v: Record<string, unknown>, where: string): RoomConfig {
  return {
    timelineLimit: int(v.timeline_limit, `${where}.timeline_limit`, 0, MAX_TIMELINE_LIMIT) ?? 0,
    requiredState: requiredState(v.required_state, `${where}.required_state`),
  };
}

function filters(v: unknown, where: string): ListFilters | undefined {
  const f = object(v, where);
  if (!f) return undefined;
  const roomNameLike = f.room_name_like;
  if (!absent(roomNameLike) && typeof roomNameLike !== "string") throw bad(`${where}.room_name_like must be a string`);
  const out: ListFilters = {
    isDm: bool(f.is_dm, `${where}.is_dm`),
    spaces: strings(f.spaces, `${where}.spaces`),
    isEncrypted: bool(f.is_encrypted, `${where}.is_encrypted`),
    isInvite: bool(f.is_invite, `${where}.is_invite`),
    roomTypes: nullableStrings(f.room_types, `${where}.room_types`),
    notRoomTypes: nullableStrings(f.not_room_types, `${where}.not_room_types`),
    roomNameLike: absent(roomNameLike) ? undefined : (roomNameLike as string),
    tags: strings(f.tags, `${where}.tags`),
    notTags: strings(f.not_tags, `${where}.not_tags`),
  };
  for (const k of Object.keys(out) as (keyof ListFilters)[]) if (out[k] === undefined) delete out[k];
  return out;
}

function ranges(v: unknown, where: string): [number, number][] {
  if (absent(v)) return [];
  if (!Array.isArray(v)) throw bad(`${where} must be an array of [start, end] pairs`);
  return v.map((r, i) => {
    if (!Array.isArray(r) || r.length !== 2) throw bad(`${where}[${i}] must be a [start, end] pair`);
    const start = int(r[0], `${where}[${i}][0]`, 0)!;
    const end = int(r[1], `${where}[${i}][1]`, 0)!;
    if (start === undefined || end === undefined) throw bad(`${where}[${i}] must be a [start, end] pair`);
    if (start > end) throw new MatrixError("M_INVALID_PARAM", `${where}[${i}]: the start ${start} is past the end ${end}`, 400);
    return [start, end];
  });
}

function scope(v: Record<string, unknown>, where: string): ExtensionScope {
  return { lists: strings(v.lists, `${where}.lists`) ?? [WILDCARD], rooms: strings(v.rooms, `${where}.rooms`) ?? [WILDCARD] };
}

function extensions(v: unknown): SlidingExtensions {
  const e = object(v, "extensions");
  const out: SlidingExtensions = {};
  if (!e) return out;
  const enabled = (name: string) => {
    const x = object(e[name], `extensions.${name}`);
    return x && bool(x.enabled, `extensions.${name}.enabled`) === true ? x : undefined;
  };
  const toDevice = enabled("to_device");
  if (toDevice) {
    const since = toDevice.since;
    if (!absent(since) && (typeof since !== "string" || !/^(0|[1-9][0-9]{0,15})$/.test(since))) throw bad("extensions.to_device.since must be a to-device next_batch");
    out.toDevice = { limit: int(toDevice.limit, "extensions.to_device.limit", 0) ?? 100, ...(absent(since) ? {} : { since: Number(since) }) };
  }
  if (enabled("e2ee")) out.e2ee = true;
  for (const [name, key] of [["account_data", "accountData"], ["receipts", "receipts"], ["typing", "typing"]] as const) {
    const x = enabled(name);
    if (x) out[key] = scope(x, `extensions.${name}`);
  }
  const threads = enabled(THREAD_SUBSCRIPTIONS_EXTENSION);
  if (threads) out.threadSubscriptions = { limit: Math.min(int(threads.limit, `extensions.${THREAD_SUBSCRIPTIONS_EXTENSION}.limit`, 0) ?? 100, MAX_THREAD_SUBSCRIPTIONS_LIMIT) };
  // Checked whenever given, enabled or not (as Synapse's model); served only with msc4354_enabled (extensions.ts).
  const sticky = object(e[STICKY_EVENTS_EXTENSION], `extensions.${STICKY_EVENTS_EXTENSION}`);
  if (sticky) {
    const on = bool(sticky.enabled, `extensions.${STICKY_EVENTS_EXTENSION}.enabled`) === true;
    const limit = int(sticky.limit, `extensions.${STICKY_EVENTS_EXTENSION}.limit`, 0) ?? 100;
    const since = sticky.since;
    if (!absent(since) && (typeof since !== "string" || !/^sticky_(0|[1-9][0-9]{0,15})$/.test(since))) throw bad(`extensions.${STICKY_EVENTS_EXTENSION}.since must be a sticky events next_batch`);
    if (on) out.stickyEvents = { limit, ...(absent(since) ? {} : { since: Number((since as string).slice("sticky_".length)) }) };
  }
  return out;
}

export function parseSlidingRequest(body: Record<string, unknown>): SlidingRequest {
  const connId = body.conn_id;
  if (!absent(connId) && typeof connId !== "string") throw bad("conn_id must be a string");
  const lists = new Map<string, ListConfig>();
  const rawLists = object(body.lists, "lists");
  if (rawLists) {
    const keys = Object.keys(rawLists);
    if (keys.length > MAX_LISTS) throw bad(`At most ${MAX_LISTS} lists`);
    for (const key of keys) {
      if (Buffer.byteLength(key) > 64) throw bad("A list key is at most 64 bytes");
      const l = object(rawLists[key], `lists.${key}`) ?? {};
      lists.set(key, { ...roomConfig(l, `lists.${key}`), ranges: ranges(l.ranges, `lists.${key}.ranges`), filters: filters(l.filters, `lists.${key}.filters`) });
    }
  }
  const roomSubscriptions = new Map<string, RoomConfig>();
  const rawSubs = object(body.room_subscriptions, "room_subscriptions");
  if (rawSubs) for (const [roomId, v] of Object.entries(rawSubs)) roomSubscriptions.set(roomId, roomConfig(object(v, `room_subscriptions.${roomId}`) ?? {}, `room_subscriptions.${roomId}`));
  return { connId: (connId as string | undefined) ?? "", lists, roomSubscriptions, extensions: extensions(body.extensions) };
}

/** The superset of two room configs (MSC4186 "Combining room configs"). */
export function combineConfigs(a: RoomConfig, b: RoomConfig): RoomConfig {
  const state = new Map<string, Set<string>>();
  for (const rs of [a.requiredState, b.requiredState]) for (const [type, keys] of rs) state.set(type, new Set([...(state.get(type) ?? []), ...keys]));
  return { timelineLimit: Math.max(a.timelineLimit, b.timelineLimit), requiredState: state };
}

/** The required_state entries `next` asks for that `prev` did not ((type, key) pairs, wildcards as written). */
export function addedState(prev: RequiredState, next: RequiredState): [string, string][] {
  const out: [string, string][] = [];
  for (const [type, keys] of next) for (const key of keys) if (!prev.get(type)?.has(key)) out.push([type, key]);
  return out;
}

/** Whether the state entry (type, stateKey) is one `rs` asks for (`me`: the requesting user, for "$ME"). */
export function stateWanted(rs: RequiredState, type: string, stateKey: string, me: string): boolean {
  for (const t of [type, WILDCARD]) {
    const keys = rs.get(t);
    if (!keys) continue;
    if (keys.has(WILDCARD) || keys.has(stateKey) || (stateKey === me && keys.has(ME))) return true;
  }
  return false;
}

/** Whether `rs` lazy-loads members (["m.room.member", "$LAZY"]). */
export const lazyMembers = (rs: RequiredState) => rs.get("m.room.member")?.has(LAZY) ?? false;

/**
 * Checks a request built by another face (GraphQL's room list) against the limits the REST body's parse
 * applies: at most 100 lists, list keys of 64 bytes, timeline_limit 0..1000, ranges in order.
 */
export function checkSlidingRequest(req: SlidingRequest): SlidingRequest {
  if (req.lists.size > MAX_LISTS) throw bad(`At most ${MAX_LISTS} lists`);
  const configs: [string, RoomConfig][] = [...req.lists.entries(), ...req.roomSubscriptions.entries()];
  for (const [key, c] of configs) {
    if (!Number.isSafeInteger(c.timelineLimit) || c.timelineLimit < 0 || c.timelineLimit > MAX_TIMELINE_LIMIT) throw bad(`${key}: timelineLimit must be an integer from 0 to ${MAX_TIMELINE_LIMIT}`);
  }
  for (const [key, l] of req.lists) {
    if (Buffer.byteLength(key) > 64) throw bad("A list key is at most 64 bytes");
    for (const [start, end] of l.ranges) {
      if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < 0) throw bad(`${key}: ranges are of non-negative integers`);
      if (start > end) throw new MatrixError("M_INVALID_PARAM", `${key}: the start ${start} is past the end ${end}`, 400);
    }
  }
  return req;
}
