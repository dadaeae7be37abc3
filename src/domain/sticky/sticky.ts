// What makes an event sticky (MSC4354 "Sticky Events", as Synapse 1.163 serves it behind
// `experimental_features.msc4354_enabled`): the top-level `msc4354_sticky: {duration_ms}` of a PDU, set by
// the sender's server from the `org.matrix.msc4354.sticky_duration_ms` query parameter of /send; sticky
// from min(origin_server_ts, when this server received it) for min(duration_ms, 1 hour); clients are told
// what is left in `unsigned.msc4354_sticky_duration_ttl_ms`. `sticky` is not kept by redaction: a
// redacted sticky event is a plain event.
import { MatrixError } from "../errors.ts";
import { MAX_SAFE } from "../canonical-json.ts";
import type { Pdu } from "../events/types.ts";

/** The send endpoint's query parameter (Synapse's unstable name). */
export const STICKY_QUERY_PARAM = "org.matrix.msc4354.sticky_duration_ms";
/** The PDU's (and client event's) top-level field. */
export const STICKY_FIELD = "msc4354_sticky";
/** The unsigned field: milliseconds until the event is no longer sticky (absent once it is not). */
export const STICKY_TTL_FIELD = "msc4354_sticky_duration_ttl_ms";
/** The longest an event stays sticky, whatever its duration_ms says (MSC4354: 1 hour). */
export const MAX_STICKY_DURATION_MS = 3_600_000;
/** Most sticky events in one /sync or sliding-sync answer (MSC4354's suggestion, Synapse's limit); not applied to rooms joined since the token. */
export const MAX_STICKY_EVENTS_IN_SYNC = 100;

/**
 * The value of `org.matrix.msc4354.sticky_duration_ms` (undefined: not given), read as Synapse reads an
 * integer query parameter (Python's int(): surrounding blanks, a sign and `_` between digits allowed), with
 * its errors: 400 M_INVALID_PARAM "must be an integer" / "must be a positive integer."; a value past
 * JSON's integer range is 400 M_BAD_JSON "JSON integer out of range" (Synapse's answer when it builds the
 * event). Durations over an hour are accepted and stay in the event: the hour bound applies when read.
 */
export function parseStickyDurationParam(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const m = /^[ \t\n\r\f\v]*([+-]?)([0-9]+(?:_[0-9]+)*)[ \t\n\r\f\v]*$/.exec(raw);
  if (!m) throw new MatrixError("M_INVALID_PARAM", `Query parameter ${STICKY_QUERY_PARAM} must be an integer`, 400);
  const digits = m[2]!.replace(/_/g, "").replace(/^0+(?=.)/, "");
  if (m[1] === "-" && /[1-9]/.test(digits)) throw new MatrixError("M_INVALID_PARAM", `Query parameter ${STICKY_QUERY_PARAM} must be a positive integer.`, 400);
  if (digits.length > 16 || Number(digits) > MAX_SAFE) throw new MatrixError("M_BAD_JSON", "JSON integer out of range", 400);
  return Number(digits);
}

/** The sticky field a send puts on its event. */
export function stickyField(durationMs: number): { duration_ms: number } {
  return { duration_ms: durationMs };
}

/** The effective sticky duration of a PDU (bounded to an hour), or undefined when it is not sticky. */
export function stickyDurationOf(pdu: Pdu): number | undefined {
  const sticky = pdu[STICKY_FIELD];
  if (typeof sticky !== "object" || sticky === null || Array.isArray(sticky)) return undefined;
  const d = (sticky as { duration_ms?: unknown }).duration_ms;
  if (typeof d !== "number" || !Number.isSafeInteger(d) || d < 0) return undefined;
  return Math.min(d, MAX_STICKY_DURATION_MS);
}

/** When a sticky PDU stops being sticky: min(origin_server_ts, receivedTs) + its bounded duration. */
export function stickyExpiry(pdu: Pdu, receivedTs: number): number | undefined {
  const d = stickyDurationOf(pdu);
  if (d === undefined) return undefined;
  const ts = typeof pdu.origin_server_ts === "number" ? pdu.origin_server_ts : receivedTs;
  return Math.min(ts, receivedTs) + d;
}

/**
 * What a client is told of a served PDU's stickiness: the field itself and the milliseconds left (none
 * once expired). The start is min(origin_server_ts, now): a timestamp from the future counts from now.
 */
export function stickyForClient(pdu: Pdu, now: number): { field: unknown; ttl: number | undefined } | undefined {
  const expires = stickyExpiry(pdu, now);
  if (expires === undefined) return undefined;
  const ttl = expires - now;
  return { field: pdu[STICKY_FIELD], ttl: ttl > 0 ? ttl : undefined };
}
