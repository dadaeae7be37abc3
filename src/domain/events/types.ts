// The PDU (persistent data unit) shape shared by every room version, and small readers over it that hide
// the v1–2 / v3+ differences (event_id field, tuple-shaped prev_events/auth_events, room_id on v12 create).
// Spec: Server-Server API "PDUs"; Room Versions "Event format" (pdu_v1, v3, v4, v6, v11, v12).

/** v1–2 reference to another event: `[event_id, {sha256: reference hash}]`. */
export type EventReference = [string, { sha256?: string; [alg: string]: string | undefined }];

export interface EventHashes {
  sha256: string;
  [alg: string]: string;
}

/** server name → key id → unpadded base64 signature. */
export type Signatures = Record<string, Record<string, string>>;

export interface Pdu {
  /** v1–2 only. From v3 the id is the reference hash and is never carried in the PDU. */
  event_id?: string;
  /** Absent only on the `m.room.create` event of v12 rooms (its id is the room id). */
  room_id?: string;
  sender: string;
  type: string;
  /** Present (possibly "") exactly when this is a state event. */
  state_key?: string;
  content: Record<string, unknown>;
  origin_server_ts: number;
  /** v1–2: `[id, {sha256}]` tuples; v3+: event ids. */
  prev_events: string[] | EventReference[];
  auth_events: string[] | EventReference[];
  depth: number;
  hashes: EventHashes;
  signatures: Signatures;
  unsigned?: Record<string, unknown>;
  /** v1–10 redactions. From v11 `redacts` lives in `content`. */
  redacts?: string;
  /** Legacy top-level fields some servers still send; kept by redaction in v1–10 only. */
  origin?: string;
  membership?: string;
  prev_state?: unknown;
  /** Any other top-level key a remote server sent: covered by the content hash, removed by redaction. */
  [extra: string]: unknown;
}

/** Ids of the events an event references, whatever the room version's shape. */
export function referencedIds(refs: Pdu["prev_events"] | Pdu["auth_events"] | undefined): string[] {
  if (!Array.isArray(refs)) return [];
  return (refs as unknown[]).map((r) => (Array.isArray(r) ? String(r[0]) : String(r)));
}

export function prevEventIds(pdu: Pdu): string[] {
  return referencedIds(pdu.prev_events);
}

export function authEventIds(pdu: Pdu): string[] {
  return referencedIds(pdu.auth_events);
}

export function isStateEvent(pdu: Pdu): boolean {
  return typeof pdu.state_key === "string";
}

/** The server name of a user id, room id (v1–11) or v1–2 event id: everything after the first `:`. */
export function domainOf(id: string): string | undefined {
  const i = id.indexOf(":");
  return i < 0 ? undefined : id.slice(i + 1);
}

/** Deep copy of a JSON value (events are plain JSON), at any depth. */
export { cloneJson } from "../json-limits.ts";

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
