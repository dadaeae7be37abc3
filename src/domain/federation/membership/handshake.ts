// The joining (knocking, leaving) server's side of the membership handshake, shared by joins, knocks and
// leaves: asking servers in turn until one answers — as Synapse, a server that fails (unreachable, a 5xx,
// a bad answer) or answers one of the operation's "try elsewhere" errcodes (M_NOT_FOUND; for joins also
// M_UNABLE_TO_AUTHORISE_JOIN, M_UNABLE_TO_GRANT_JOIN) makes way for the next, and any other 4xx ends the
// search —, make_join / make_knock / make_leave with its answer checked as the spec requires (a room
// version this server does not implement is 400 M_UNSUPPORTED_ROOM_VERSION), the member event completed
// from the template and signed as this server; and how a failure reaches our client: a remote 4xx passed
// through (status, errcode, message and its other fields, such as room_version; a 401 as 400 and
// M_UNKNOWN_TOKEN as M_UNKNOWN, which would log our user out), anything else 502.
// Spec: Server-Server API "Joining Rooms" (make_join), "Knocking Rooms" (make_knock), "Leaving Rooms"
// (make_leave); Room Versions "Event format", "Event IDs".
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { isPlainObject } from "../../events/types.ts";
import { MatrixError } from "../../errors.ts";
import { randomString } from "../../ids.ts";
import { canonicalJson } from "../../canonical-json.ts";
import { validatePduFormat } from "../../events/validate.ts";
import { fedPath } from "../../../federation/client.ts";
import { FederationError } from "../../../federation/errors.ts";
import { KNOWN_ROOM_VERSIONS, getRoomVersion, type RoomVersion } from "../../rooms/room-versions.ts";
import { sealEvent, type BuiltEvent } from "../../rooms/build-event.ts";

/** Most servers one membership change tries. */
const MAX_CANDIDATES = 10;

/** The servers to try, in order, without this one or repeats. */
export function candidateServers(s: Services, servers: readonly (string | undefined)[]): string[] {
  const out: string[] = [];
  for (const server of servers) if (server && server !== s.config.server_name && !out.includes(server)) out.push(server);
  return out.slice(0, MAX_CANDIDATES);
}

/** A remote answer this server cannot use: the server is skipped (a 502 if it was the last). */
export function badAnswer(server: string, msg: string): FederationError {
  return new FederationError("invalid_response", server, msg);
}

/** The errcodes of a remote 4xx that send a handshake to the next server (Synapse's failover codes). */
export const FAILOVER_ERRCODES = new Set(["M_NOT_FOUND"]);
export const JOIN_FAILOVER_ERRCODES = new Set(["M_NOT_FOUND", "M_UNABLE_TO_AUTHORISE_JOIN", "M_UNABLE_TO_GRANT_JOIN"]);

/** Would every server refuse alike? (Then asking another one is pointless.) */
function isFinal(err: unknown, failover: ReadonlySet<string>): boolean {
  // Our own refusals: a 403, or a room version this server lacks (a remote's bad answer is not final).
  if (!(err instanceof FederationError)) return !(err instanceof MatrixError) || err.httpStatus === 403 || err.errcode === "M_UNSUPPORTED_ROOM_VERSION";
  if (err.kind !== "remote" || err.remoteStatus === undefined) return false;
  return err.remoteStatus >= 400 && err.remoteStatus < 500 && !failover.has(err.remoteErrcode ?? "");
}

/**
 * The error our client sees for a failed handshake with another server: a remote 4xx as the remote server
 * said it (Synapse's pass-through, but for what would mean something else coming from us: a 401 is a 400,
 * M_UNKNOWN_TOKEN is M_UNKNOWN), anything else 502.
 */
export function clientError(err: unknown, what: string): MatrixError {
  if (!(err instanceof FederationError)) return err instanceof MatrixError ? err : new MatrixError("M_UNKNOWN", `Failed to ${what}`, 500);
  const status = err.kind === "remote" ? err.remoteStatus : undefined;
  if (status !== undefined && status >= 400 && status < 500) {
    const errcode = err.remoteErrcode === undefined || err.remoteErrcode === "M_UNKNOWN_TOKEN" ? "M_UNKNOWN" : err.remoteErrcode;
    const message = err.remoteError ?? `${err.destination} answered ${status}`;
    // The remote's errcode (a well-formed one: FederationError checks it), which may be none of ours.
    return new MatrixError(errcode as MatrixError["errcode"], message, status === 401 ? 400 : status, err.remoteFields ?? {});
  }
  return new MatrixError("M_UNKNOWN", `Failed to ${what} through ${err.destination}: ${err.message}`, 502);
}

/**
 * Runs `attempt` against each server until one succeeds. No server: 404. All failed: the error of the
 * last (or the first final one: see isFinal), as our client should see it.
 */
export async function throughServers<T>(s: Services, servers: readonly string[], what: string, attempt: (server: string) => Promise<T>, failover: ReadonlySet<string> = FAILOVER_ERRCODES): Promise<T> {
  if (servers.length === 0) throw new MatrixError("M_NOT_FOUND", `No known servers to ${what} through`, 404);
  let last: unknown;
  for (const server of servers) {
    try {
      return await attempt(server);
    } catch (err) {
      last = err;
      s.log.info({ server, err: (err as Error).message }, `could not ${what} through this server`);
      if (isFinal(err, failover)) break;
    }
  }
  throw clientError(last, what);
}

export interface SignedMembership {
  version: RoomVersion;
  built: BuiltEvent;
}

/** The template's integer field, or a bad answer. */
function intField(server: string, t: Record<string, unknown>, name: string): number {
  const n = t[name];
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) throw badAnswer(server, `template ${name} is not an integer`);
  return n;
}

/**
 * make_join / make_leave on `server`, then the event completed from its template and signed as this
 * server: the template's room, sender, state_key, type and membership checked (the spec's MUSTs), its
 * prev_events, auth_events and depth kept, the timestamp and `content` ours (plus a restricted join's
 * `join_authorised_via_users_server`, which the resident server chose).
 */
export async function makeAndSign(s: Services, server: string, roomId: string, userId: string, membership: "join" | "leave" | "knock", content: Record<string, unknown>): Promise<SignedMembership> {
  const path =
    membership === "join" ? fedPath`/_matrix/federation/v1/make_join/${roomId}/${userId}`
    : membership === "knock" ? fedPath`/_matrix/federation/v1/make_knock/${roomId}/${userId}`
    : fedPath`/_matrix/federation/v1/make_leave/${roomId}/${userId}`;
  const answer = await s.federation.getJson<unknown>(server, path, membership !== "leave" ? { ver: KNOWN_ROOM_VERSIONS } : undefined, { maxBytes: 1024 * 1024 });
  if (!isPlainObject(answer) || !isPlainObject(answer.event)) throw badAnswer(server, `make_${membership} answered no event template`);
  // No room_version: the spec says the room is version 1 or 2, which share an event format.
  const versionId = answer.room_version === undefined ? "1" : answer.room_version;
  if (typeof versionId !== "string") throw badAnswer(server, `make_${membership} named no room version`);
  const version = getRoomVersion(versionId);
  // A version this server does not implement: no other server's answer would do (Synapse: the same 400).
  if (!version) throw new MatrixError("M_UNSUPPORTED_ROOM_VERSION", `This server does not support room version ${versionId.slice(0, 100)}`, 400, { room_version: versionId.slice(0, 100) });
  if (membership === "knock" && !version.knock) throw badAnswer(server, `make_knock named room version ${version.id}, which has no knocking`);
  const t = answer.event;
  if (t.room_id !== roomId || t.sender !== userId || t.state_key !== userId || t.type !== "m.room.member" || !isPlainObject(t.content) || t.content.membership !== membership)
    throw badAnswer(server, `make_${membership} answered a template for another event`);

  const eventContent: Record<string, unknown> = { ...content, membership };
  const via = t.content.join_authorised_via_users_server;
  if (membership === "join" && version.restricted && typeof via === "string") eventContent.join_authorised_via_users_server = via;
  const pdu: Pdu = {
    room_id: roomId,
    sender: userId,
    type: "m.room.member",
    state_key: userId,
    content: eventContent,
    // The event is ours: its timestamp is our clock's, as for any event we build (templates need not
    // carry one: Complement's do not).
    origin_server_ts: s.clock.now(),
    depth: intField(server, t, "depth"),
    prev_events: t.prev_events as Pdu["prev_events"],
    auth_events: t.auth_events as Pdu["auth_events"],
    hashes: { sha256: "" },
    signatures: {},
  };
  if (!version.updatedRedactionRules) pdu.origin = s.config.server_name;
  if (version.eventIdFormat === "server-assigned") pdu.event_id = `$${randomString(18)}:${s.config.server_name}`;
  try {
    validatePduFormat(pdu, version);
  } catch (err) {
    throw badAnswer(server, `make_${membership} answered a malformed template: ${(err as Error).message}`);
  }
  return { version, built: sealEvent(pdu, version, { serverName: s.config.server_name, key: s.signingKeys[0]! }) };
}

/** The same event (all but signatures and unsigned), as `a` and `b` carry it. */
export function sameEvent(a: Pdu, b: unknown): b is Pdu {
  if (!isPlainObject(b)) return false;
  const { signatures: _as, unsigned: _au, ...x } = a;
  const { signatures: _bs, unsigned: _bu, ...y } = b;
  try {
    return canonicalJson(x) === canonicalJson(y);
  } catch {
    return false;
  }
}
