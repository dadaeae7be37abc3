// Sending room events: messages with per-device transaction ids (a retry returns the same event, whatever
// its body, as Synapse), state events (an identical re-send is a no-op, as in
// Synapse), and redactions — by /redact or by /send/m.room.redaction alike (MSC4169, spec v1.18): v1–10
// put `redacts` at the top level, v11+ in content. rc_message applies.
// An application service may set a message's or state event's origin_server_ts (`ts`).
// Spec: Client-Server API "Sending events to a room", "Redactions", "Transaction identifiers";
// Application Service API "Timestamp massaging".
import { hash } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { canonicalJson } from "../canonical-json.ts";
import { appendEvent } from "./append.ts";
import type { EventDraft } from "./build-event.ts";
import { stickyField } from "../sticky/sticky.ts";
import { currentStateEvent, requireRoom } from "./room-cache.ts";
import { checkPowerLevelsContent, powerLevelsOf } from "./power-levels.ts";
import { authStateFromEvents, redactionTakesEffect } from "../auth/index.ts";
import { stateKeyOf } from "../store/state-groups.ts";
import { joinRoom, leaveRoom } from "./membership.ts";
import { requireNotGuest, type GuestRefusedOperation } from "../accounts/guest-access.ts";
import { isRateLimitExempt } from "../accounts/appservices.ts";
import { awaitFullState } from "../federation/partial-state/flag.ts";
import { assertLocalInviteAllowed } from "../account-data/invite-filter.ts";
import { requireNotSuspended, requireMembershipAllowed, requireRedactionAllowed } from "../accounts/moderation.ts";

export function deviceKeyOf(r: Requester): string {
  return r.deviceId ?? (r.accessTokenId ? `token:${r.accessTokenId}` : `as:${r.appserviceId ?? ""}`);
}

/** An event type over 255 bytes is an oversized event (spec "Size limits"; 413 M_TOO_LARGE as in Synapse). */
export function checkEventType(type: string): void {
  if (type.length === 0) throw new MatrixError("M_INVALID_PARAM", "Event type must not be empty", 400);
  if (Buffer.byteLength(type) > 255) throw new MatrixError("M_TOO_LARGE", "'type' is longer than 255 bytes", 413);
}

/** rc_message: every sent event (and every delayed one scheduled) takes one from the sender's bucket. */
export function rateLimit(s: Services, r: Requester): void {
  if (r.isAdmin) return;
  if (isRateLimitExempt(s.config, r.appserviceId, r.userId)) return;
  s.ratelimiter.check(`message:${r.userId}`, s.config.rc_message);
}

type Txn = { userId: string; deviceKey: string; txnId: string; requestHash: string; scope: string };

/** The fixed-length name of an endpoint path a transaction id belongs to (remembered: a room's sends all share one). */
export function scopeOf(s: Services, endpoint: string[]): string {
  const cache = s.caches.get<string, string>("txn_scopes", 10_000);
  const key = JSON.stringify(endpoint);
  let scope = cache.get(key);
  if (scope === undefined) {
    scope = hash("sha256", canonicalJson(endpoint), "base64url").slice(0, 22);
    cache.set(key, scope);
  }
  return scope;
}

/**
 * Runs `send` once per (device, endpoint path, txnId): a retransmission gets the first answer, even with
 * another body (as Synapse, whose cache is keyed on the path alone; Complement's TestTxnIdempotency).
 * The body's hash is recorded with the id, never compared. The path (`endpoint`: the route's parameters other
 * than the txnId) scopes the id: another room, event type or endpoint is a new request (spec
 * "Transaction identifiers"; Synapse keys its cache on the path). r0, v3 and both brands are one path.
 */
async function withTxn(
  s: Services,
  r: Requester,
  txnId: string | undefined,
  endpoint: string[],
  body: unknown,
  send: (txn: Txn | undefined) => Promise<string>,
  /** `send` answers a recorded id itself (a plain message: the group commit finds it, rooms/append.ts). */
  sendLooksUp = false,
): Promise<{ event_id: string }> {
  // POST without a transaction id (older clients): every request is a new one.
  if (txnId === undefined) return { event_id: await send(undefined) };
  const deviceKey = deviceKeyOf(r);
  const scope = scopeOf(s, endpoint);
  const requestHash = hash("sha256", canonicalJson(body), "base64");
  const seen = sendLooksUp ? undefined : await s.rooms.events.findTxn(r.userId, deviceKey, txnId, scope);
  if (seen) return { event_id: seen.eventId };
  try {
    return { event_id: await send({ userId: r.userId, deviceKey, txnId, requestHash, scope }) };
  } catch (err) {
    // Two concurrent requests with one txnId: the loser finds the winner's row.
    const again = await s.rooms.events.findTxn(r.userId, deviceKey, txnId, scope);
    if (again) return { event_id: again.eventId };
    throw err;
  }
}

/**
 * The origin_server_ts an application service asks for with `?ts=` (spec "Timestamp massaging"); other
 * requesters' `ts` is ignored, as Synapse does. Undefined: the clock's.
 */
export function massagedTimestamp(r: Requester, ts: string | undefined): number | undefined {
  if (ts === undefined || !r.appserviceId) return undefined;
  if (!/^\d{1,16}$/.test(ts) || !Number.isSafeInteger(Number(ts))) throw new MatrixError("M_INVALID_PARAM", "ts must be a non-negative integer", 400);
  return Number(ts);
}

export async function sendMessage(
  s: Services,
  r: Requester,
  roomId: string,
  type: string,
  txnId: string | undefined,
  content: Record<string, unknown>,
  opts: { ts?: string; stickyDurationMs?: number } = {},
): Promise<{ event_id: string }> {
  checkEventType(type);
  const originServerTs = massagedTimestamp(r, opts.ts);
  const redaction = type === "m.room.redaction";
  // MSC4354 (experimental_features.msc4354_enabled): a sticky event, the duration given put on it as sent.
  const sticky = opts.stickyDurationMs !== undefined && s.config.experimental_features.msc4354_enabled ? stickyField(opts.stickyDurationMs) : undefined;
  return withTxn(
    s, r, txnId, ["send", roomId, type], content,
    async (txn) => {
      if (redaction) {
        // MSC4169 (spec v1.18): /send/m.room.redaction is /redact in every room version — `redacts` from
        // the content (moved to the top level before v11), the same checks, the same event.
        const redacts = content.redacts;
        if (typeof redacts !== "string") throw new MatrixError("M_BAD_JSON", "m.room.redaction needs content.redacts", 400);
        checkRedactionBody(content);
        rateLimit(s, r);
        await requireRedactionAllowed(s, r, redacts);
        return (await redactDraft(s, r, roomId, redacts, content, txn, sticky)).eventId;
      }
      requireNotSuspended(r, "Sending messages");
      // A message's transaction id is looked up by the group commit (rooms/append.ts) with the ids of the
      // messages queued beside it; a fresh one is rate-limited there, a retransmission answered as recorded.
      const draft: EventDraft = originServerTs === undefined ? { type, sender: r.userId, content } : { type, sender: r.userId, content, originServerTs };
      if (sticky !== undefined) draft.sticky = sticky;
      const e = await appendEvent(s, roomId, draft, { txn, admit: () => rateLimit(s, r) });
      return e.eventId;
    },
    !redaction,
  );
}

export async function sendStateEvent(
  s: Services,
  r: Requester,
  roomId: string,
  type: string,
  stateKey: string,
  content: Record<string, unknown>,
  opts: { ts?: string } = {},
): Promise<{ event_id: string }> {
  checkEventType(type);
  if (type === "m.room.member") requireMembershipAllowed(r, String(content.membership));
  else requireNotSuspended(r, "Sending state events");
  const originServerTs = massagedTimestamp(r, opts.ts);
  // A state event is checked against the room's full state: in a partial-state room it waits for it.
  await awaitFullState(s, roomId);
  if (type === "m.room.member") return sendMemberState(s, r, roomId, stateKey, content);
  if (type === "m.room.power_levels") checkPowerLevelsContent(content);
  rateLimit(s, r);
  // Checks that ask other servers run here, outside the room's lane.
  for (const hook of s.extensions.stateEventPrechecks) await hook(s, r, roomId, type, stateKey, content);
  const e = await appendEvent(s, roomId, async (room) => {
    const current = room.state.get(stateKeyOf(type, stateKey));
    if (current) {
      const existing = await s.rooms.events.get(current);
      if (existing && existing.pdu.sender === r.userId && canonicalJson(existing.pdu.content) === canonicalJson(content)) return { alreadyDone: existing };
    }
    for (const hook of s.extensions.stateEventChecks) await hook(s, r, room.roomId, type, stateKey, content);
    return originServerTs === undefined ? { type, stateKey, sender: r.userId, content } : { type, stateKey, sender: r.userId, content, originServerTs };
  });
  // Several processes: answered once the commit notice reached Redis (the others' room state is fresh then).
  await s.replication?.delivered();
  return { event_id: e.eventId };
}

/** A check a capability adds for particular local state events (e.g. m.room.canonical_alias → M_BAD_ALIAS). */
export type StateEventCheck = (s: Services, r: Requester, roomId: string, type: string, stateKey: string, content: Record<string, unknown>) => Promise<void>;

const MEMBERSHIPS = ["join", "invite", "leave", "ban", "knock"];

/** The operation a membership set through the state API amounts to (someone else's join: the auth rules refuse it). */
const MEMBERSHIP_OPERATION: Partial<Record<string, GuestRefusedOperation>> = {
  invite: "inviteUser",
  leave: "kickUser",
  ban: "banUser",
  knock: "knockRoom",
};

/** m.room.member through the state API goes through the membership rules, like /join or /leave. */
async function sendMemberState(s: Services, r: Requester, roomId: string, stateKey: string, content: Record<string, unknown>): Promise<{ event_id: string }> {
  const membership = content.membership;
  if (typeof membership !== "string") throw new MatrixError("M_BAD_JSON", "m.room.member needs content.membership", 400);
  if (!MEMBERSHIPS.includes(membership)) throw new MatrixError("M_BAD_JSON", `Unknown membership ${JSON.stringify(membership)}`, 400);
  if (stateKey === r.userId && membership === "join") await joinRoom(s, r, roomId, {}, content);
  else if (stateKey === r.userId && membership === "leave") await leaveRoom(s, r, roomId, content);
  else {
    // The guest rule of the membership operation this amounts to (invite, ban, knock, kick or unban).
    const op = MEMBERSHIP_OPERATION[membership];
    if (op) requireNotGuest(r, op);
    if (membership === "invite") await assertLocalInviteAllowed(s, r, stateKey);
    const e = await appendEvent(s, roomId, { type: "m.room.member", stateKey, sender: r.userId, content });
    return { event_id: e.eventId };
  }
  const room = await requireRoom(s, roomId);
  return { event_id: room.state.get(stateKeyOf("m.room.member", stateKey))! };
}

/** A redaction's body, by /redact or /send: `reason`, when given, is a string. */
function checkRedactionBody(body: Record<string, unknown>): void {
  if (body.reason !== undefined && typeof body.reason !== "string") throw new MatrixError("M_BAD_JSON", "reason must be a string", 400);
}

async function redactDraft(
  s: Services,
  r: Requester,
  roomId: string,
  redacts: string,
  body: Record<string, unknown>,
  txn?: Txn,
  sticky?: { duration_ms: number },
) {
  return appendEvent(
    s,
    roomId,
    async (room) => {
      const target = await s.rooms.events.get(redacts);
      const powerLevels = await currentStateEvent(s, room, "m.room.power_levels");
      // The body is the content, as sent (as Synapse; MSC4169: "arbitrary content"), `redacts` where the
      // room version keeps it: in content from v11, at the top level only before.
      const { redacts: _named, ...content }: Record<string, unknown> = body;
      if (room.version.redactsInContent) content.redacts = redacts;
      const draft: EventDraft = { type: "m.room.redaction", sender: r.userId, content, redacts };
      // MSC4354: a redaction sent through /send may be sticky too.
      if (sticky !== undefined) draft.sticky = sticky;
      if (!target) {
        // As Synapse: a user with the redact level may redact an event this server has not seen (it takes
        // effect if the event arrives: every read of it applies the rule); anyone else gets 404.
        const powers = await powerLevelsOf(s, room);
        if (powers.user(r.userId) >= powers.named("redact")) return draft;
        throw new MatrixError("M_NOT_FOUND", "Event not found", 404);
      }
      // As Synapse: a redaction names an event of its own room (the spec is silent on the answer).
      if (target.roomId !== roomId) throw new MatrixError("M_UNKNOWN", "Cannot redact event from a different room", 400);
      // As Synapse: a local user may not redact the create event or a server ACL (whatever their power).
      if (target.pdu.type === "m.room.create" || target.pdu.type === "m.room.server_acl")
        throw new MatrixError("M_FORBIDDEN", `Redacting ${target.pdu.type} events is not permitted`, 403);
      // The one rule of who may redact (auth/redaction.ts), against the state the redaction will be
      // authorised against: the commit applies it again, and so does every read of the target.
      const allowed = redactionTakesEffect({
        redaction: { type: "m.room.redaction", sender: r.userId, isState: false, roomId, redacts },
        target: { eventId: target.eventId, roomId: target.roomId, sender: target.pdu.sender },
        authState: authStateFromEvents(powerLevels ? [room.createEvent, powerLevels] : [room.createEvent]),
        version: room.version,
        localServer: s.config.server_name,
      });
      if (!allowed) throw new MatrixError("M_FORBIDDEN", "You don't have permission to redact events of other users", 403);
      return draft;
    },
    { txn },
  );
}

export async function redactEvent(
  s: Services,
  r: Requester,
  roomId: string,
  eventId: string,
  txnId: string | undefined,
  body: Record<string, unknown>,
): Promise<{ event_id: string }> {
  checkRedactionBody(body);
  if (body.redacts !== undefined && body.redacts !== eventId)
    throw new MatrixError("M_INVALID_PARAM", "Cannot provide a redacts value incoherent with the event_id of the URL parameter", 400);
  return withTxn(s, r, txnId, ["redact", roomId, eventId], body, async (txn) => {
    rateLimit(s, r);
    await requireRedactionAllowed(s, r, eventId);
    return (await redactDraft(s, r, roomId, eventId, body, txn)).eventId;
  });
}

