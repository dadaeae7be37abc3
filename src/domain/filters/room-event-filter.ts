// RoomEventFilter (spec: Client-Server API "Filtering"): which events a read returns — types and
// not_types with `*` wildcards, senders, not_senders, rooms, not_rooms, contains_url, limit — plus the
// lazy-loading flags. Parsed once per request; /messages, /context, /search and /sync share it. MSC3874
// (experimental_features.msc3874_enabled, as Synapse): `org.matrix.msc3874.rel_types` / `not_rel_types`
// keep or drop events by their relation's rel_type (an event without a relation passes not_rel_types only).
import { MatrixError } from "../errors.ts";
import { parseJsonText } from "../json-limits.ts";
import { isPlainObject, type Pdu } from "../events/types.ts";
import { relationOf } from "../relations/parse.ts";
import type { Services } from "../services.ts";

/** What a server's filters understand beyond the spec (Synapse's experimental flags). */
export interface FilterOptions {
  /** MSC3874's rel_types / not_rel_types. */
  msc3874?: boolean;
}

/** The filter options of a server's configuration. */
export function filterOptions(s: Pick<Services, "config">): FilterOptions {
  return { msc3874: s.config.experimental_features.msc3874_enabled };
}

const REL_TYPES = "org.matrix.msc3874.rel_types";
const NOT_REL_TYPES = "org.matrix.msc3874.not_rel_types";

export interface RoomEventFilter {
  limit?: number;
  types?: string[];
  not_types?: string[];
  senders?: string[];
  not_senders?: string[];
  rooms?: string[];
  not_rooms?: string[];
  contains_url?: boolean;
  lazy_load_members?: boolean;
  include_redundant_members?: boolean;
  /** Notification counts per thread in /sync (spec: threaded notifications). */
  unread_thread_notifications?: boolean;
  /** MSC3874: only events whose relation has one of these rel_types. */
  rel_types?: string[];
  /** MSC3874: no event whose relation has one of these rel_types. */
  not_rel_types?: string[];
}

function stringList(v: unknown, name: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) throw new MatrixError("M_BAD_JSON", `${name} must be a list of strings`);
  return v as string[];
}

function bool(v: unknown, name: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw new MatrixError("M_BAD_JSON", `${name} must be a boolean`);
  return v;
}

export function parseRoomEventFilter(raw: unknown, where = "filter", opts: FilterOptions = {}): RoomEventFilter {
  if (raw === undefined || raw === null) return {};
  if (!isPlainObject(raw)) throw new MatrixError("M_BAD_JSON", `${where} must be an object`);
  const limit = raw.limit;
  if (limit !== undefined && (typeof limit !== "number" || !Number.isInteger(limit) || limit < 0))
    throw new MatrixError("M_BAD_JSON", `${where}.limit must be a non-negative integer`);
  // Validated whether or not they are honoured (as Synapse's filter schema does).
  const relTypes = stringList(raw[REL_TYPES], `${where}.${REL_TYPES}`);
  const notRelTypes = stringList(raw[NOT_REL_TYPES], `${where}.${NOT_REL_TYPES}`);
  return {
    ...(opts.msc3874 ? { rel_types: relTypes, not_rel_types: notRelTypes } : {}),
    limit: limit as number | undefined,
    types: stringList(raw.types, `${where}.types`),
    not_types: stringList(raw.not_types, `${where}.not_types`),
    senders: stringList(raw.senders, `${where}.senders`),
    not_senders: stringList(raw.not_senders, `${where}.not_senders`),
    rooms: stringList(raw.rooms, `${where}.rooms`),
    not_rooms: stringList(raw.not_rooms, `${where}.not_rooms`),
    contains_url: bool(raw.contains_url, `${where}.contains_url`),
    lazy_load_members: bool(raw.lazy_load_members, `${where}.lazy_load_members`),
    include_redundant_members: bool(raw.include_redundant_members, `${where}.include_redundant_members`),
    unread_thread_notifications: bool(raw.unread_thread_notifications, `${where}.unread_thread_notifications`),
  };
}

/** Parses the `filter` query parameter of /messages and /context (URL-encoded JSON). */
export function parseFilterParam(text: string | undefined, opts: FilterOptions = {}): RoomEventFilter {
  if (text === undefined) return {};
  return parseRoomEventFilter(parseJsonText(text, { what: "filter" }), "filter", opts);
}

/**
 * Does `value` match `pattern`, where `*` matches any run of characters? Linear-time two-pointer
 * matching (a regular expression built from a client's pattern could backtrack for ages).
 */
export function globMatch(pattern: string, value: string): boolean {
  if (!pattern.includes("*")) return pattern === value;
  let p = 0;
  let v = 0;
  let star = -1;
  let resume = 0;
  while (v < value.length) {
    if (p < pattern.length && pattern[p] !== "*" && pattern[p] === value[v]) {
      p++;
      v++;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      resume = v;
    } else if (star >= 0) {
      p = star + 1;
      v = ++resume;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === "*") p++;
  return p === pattern.length;
}

export function matchesFilter(f: RoomEventFilter, pdu: Pdu, roomId: string): boolean {
  if (f.not_rooms?.includes(roomId)) return false;
  if (f.rooms && !f.rooms.includes(roomId)) return false;
  if (f.not_senders?.includes(pdu.sender)) return false;
  if (f.senders && !f.senders.includes(pdu.sender)) return false;
  if (f.not_types?.some((t) => globMatch(t, pdu.type))) return false;
  if (f.types && !f.types.some((t) => globMatch(t, pdu.type))) return false;
  if (f.contains_url !== undefined) {
    const hasUrl = typeof (pdu.content as Record<string, unknown>)?.url === "string";
    if (hasUrl !== f.contains_url) return false;
  }
  if (f.rel_types || f.not_rel_types?.length) {
    const relType = relationOf(pdu)?.relType;
    if (relType !== undefined && f.not_rel_types?.includes(relType)) return false;
    if (f.rel_types && (relType === undefined || !f.rel_types.includes(relType))) return false;
  }
  return true;
}
