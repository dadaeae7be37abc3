// The REST face of several processes (README "Scaling out"): a write whose owner is another instance
// (the table in domain/cluster/write-routes.ts) is forwarded to it as it came — method, URL as sent,
// headers, body — and its answer returned unchanged (status, headers, body: errors and Retry-After
// included), so any process answers any request and the owner authenticates and rate-limits as usual.
// Internal requests live under /_weft/replication/ and carry worker_replication_secret as a bearer:
// without it (or with a wrong one) they are refused 403 M_FORBIDDEN; with it they are served on whichever
// listener they reach. A forwarded request that reaches an instance that does not own it either is refused,
// never forwarded again. Installed only when some stream has another writer (topology.distributed): a
// single process registers none of this and routes nothing.
// Spec: none (process architecture); Synapse's replication listener and its 502 for an unreachable worker.
import type { IncomingMessage } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { MatrixError } from "../domain/errors.ts";
import type { Services } from "../domain/services.ts";
import { ownerOf, type WriteRule } from "../domain/cluster/write-routes.ts";
import { carriesSecret } from "../domain/cluster/secret.ts";
import { FORWARD_PREFIX, FORWARDED_AUTHORIZATION, FORWARDED_BY, FORWARDED_CLIENT_IP, INTERNAL_PREFIX, UNREACHABLE_RETRY_AFTER_S } from "../domain/cluster/internal-client.ts";
import { INTERNAL_EDUS, INTERNAL_PDUS, receiveForwardedEdus, receiveForwardedPdus } from "../domain/federation/transaction.ts";
import { parseJsonText } from "../domain/json-limits.ts";
import { appendForwarded, INTERNAL_APPEND } from "../domain/cluster/remote-append.ts";
import { appendEvent } from "../domain/rooms/append.ts";
import { INTERNAL_STREAM_OP, ROOM_OPS, roomWriterElsewhere, STREAM_OPS, writerElsewhere, type RoomOp, type StreamOp } from "../domain/cluster/stream-ops.ts";
import { inviteUser, joinRoom, joinTarget, knockRoom, leaveRoom } from "../domain/rooms/membership.ts";
import type { Requester } from "../domain/accounts/requester.ts";
import { setTyping } from "../domain/typing/set-typing.ts";
import { presenceFromSync, setPresence } from "../domain/presence/presence.ts";
import { setAccountData } from "../domain/account-data/account-data.ts";
import { markRead } from "../domain/receipts/read-markers.ts";
import { createRoom } from "../domain/rooms/create-room.ts";
import { internalMark, markInternal } from "./internal-request.ts";

/** Where a request that failed the secret check is routed: answered 403 M_FORBIDDEN. */
const REFUSED = `${INTERNAL_PREFIX}/refused`;

/** Request headers not passed on: the connection's own, and the internal ones a client may not set. */
const DROPPED_REQUEST_HEADERS: readonly string[] = ["host", "connection", "keep-alive", "transfer-encoding", "te", "upgrade", "expect", "content-length", "proxy-authorization", "proxy-connection", "authorization"];
/** Answer headers not passed back: the connection's own, and those this server sets on every answer. */
const DROPPED_ANSWER_HEADERS: readonly string[] = ["connection", "keep-alive", "transfer-encoding", "content-length", "date"];

const header = (raw: IncomingMessage, name: string): string | undefined => {
  const v = raw.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * Fastify's rewriteUrl around `inner` (the path aliases): an internal request is checked for the secret
 * and marked; a forwarded one gets back its URL as sent and its own Authorization, then is routed as
 * any request is.
 */
export function internalRewrite(s: Services, inner: (raw: IncomingMessage) => string): (raw: IncomingMessage) => string {
  return (raw) => {
    const url = raw.url ?? "/";
    if (!url.startsWith(INTERNAL_PREFIX) || (url.length > INTERNAL_PREFIX.length && url.charCodeAt(INTERNAL_PREFIX.length) !== 47)) return inner(raw);
    if (!carriesSecret(s.topology.replicationSecret, raw.headers.authorization)) return REFUSED;
    const from = header(raw, FORWARDED_BY) ?? "";
    if (!url.startsWith(`${FORWARD_PREFIX}/`)) {
      markInternal(raw, { from, forwarded: false });
      return url;
    }
    const sent = url.slice(FORWARD_PREFIX.length);
    // The request's own Authorization headers, every one (a federation request may carry several).
    const distinct = raw.headersDistinct;
    const own = distinct[FORWARDED_AUTHORIZATION] ?? [];
    const { [FORWARDED_AUTHORIZATION]: _own, authorization: _internal, ...rest } = distinct;
    raw.headersDistinct = own.length > 0 ? { ...rest, authorization: own } : rest;
    if (own.length > 0) raw.headers.authorization = own[0];
    else delete raw.headers.authorization;
    delete raw.headers[FORWARDED_AUTHORIZATION];
    markInternal(raw, { from, forwarded: true, clientIp: header(raw, FORWARDED_CLIENT_IP) });
    raw.url = sent;
    // Fastify kept the internal URL as originalUrl: the URL as the client sent it is what signatures and UIA read.
    (raw as IncomingMessage & { originalUrl?: string }).originalUrl = sent;
    return inner(raw);
  };
}

/** The client's address: as the forwarding instance saw it for a forwarded request, else the peer's. */
export function clientIpOf(req: FastifyRequest): string {
  return internalMark(req.raw)?.clientIp ?? req.ip;
}

/** Whether a request carries an access token (an alias is resolved only for one). */
function hasToken(req: FastifyRequest): boolean {
  const q = req.query as Record<string, unknown> | undefined;
  return typeof req.headers.authorization === "string" || typeof q?.access_token === "string";
}

/** Sends the request to `owner` as it came and answers with what it answered. */
async function forward(s: Services, owner: string, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || DROPPED_REQUEST_HEADERS.includes(name) || name.startsWith("x-weft-")) continue;
    headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  const authorization = req.raw.headersDistinct.authorization;
  if (authorization && authorization.length > 0) headers[FORWARDED_AUTHORIZATION] = authorization;
  headers[FORWARDED_CLIENT_IP] = clientIpOf(req);
  const sent = req.originalUrl.startsWith("/") ? req.originalUrl : req.url;
  const body = Buffer.isBuffer(req.body) && req.body.length > 0 ? req.body : undefined;
  let answer;
  try {
    answer = await s.internal.request(owner, { method: req.method, path: `${FORWARD_PREFIX}${sent}`, headers, body });
  } catch (err) {
    if (err instanceof MatrixError && err.httpStatus === 502) {
      s.log.warn({ reqId: req.id, owner, err: (err as { cause?: unknown }).cause }, "the writer of this request cannot be reached");
      reply.header("retry-after", String(UNREACHABLE_RETRY_AFTER_S));
    }
    throw err;
  }
  for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !DROPPED_ANSWER_HEADERS.includes(name)) reply.header(name, value);
  return reply.code(answer.status).send(answer.body);
}

type Handler = (req: FastifyRequest, reply: FastifyReply) => unknown;

/**
 * A routed write's handler: served here when this instance owns it, else forwarded to its owner — once:
 * a request another instance forwarded is never sent on (the instances disagree on stream_writers).
 */
export function routedHandler(s: Services, rule: WriteRule, local: Handler): Handler {
  return async (req, reply) => {
    const owner = await ownerOf(s, rule, req.params as Record<string, string | undefined>, hasToken(req));
    if (owner === s.topology.instanceName) return local(req, reply);
    const mark = internalMark(req.raw);
    if (mark?.forwarded) {
      s.log.error({ reqId: req.id, url: req.url, from: mark.from, owner }, "a forwarded request this instance does not own: stream_writers differ between instances");
      throw new MatrixError("M_UNKNOWN", `Instance ${s.topology.instanceName} does not handle this request (forwarded by ${mark.from || "another instance"}, which has it owned by ${owner}): the instances' stream_writers differ`, 500);
    }
    return s.inFlight.track(() => forward(s, owner, req, reply));
  };
}

/** Reads an internal route's JSON body (the sender is trusted: it carried the secret). */
function internalBody(req: FastifyRequest): Record<string, unknown> {
  const raw = req.body;
  const parsed = Buffer.isBuffer(raw) && raw.length > 0 ? parseJsonText(raw.toString("utf8")) : undefined;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new MatrixError("M_NOT_JSON", "Content not JSON.", 400);
  return parsed as Record<string, unknown>;
}

/** Each stream operation another instance may ask this one, its writer, to run (domain/cluster/stream-ops.ts). */
// The arguments are the operation's own, as its caller sent them (JSON).
const STREAM_OP_RUNNERS: Record<StreamOp, (s: Services, r: Requester, args: any[]) => Promise<unknown>> = {
  setTyping: (s, r, [roomId, userId, req]) => setTyping(s, r, roomId, userId, req),
  setPresence: (s, r, [userId, update]) => setPresence(s, r, userId, update),
  presenceFromSync: (s, r, [state]) => presenceFromSync(s, r, state),
  setAccountData: (s, r, [userId, roomId, type, content]) => setAccountData(s, r, userId, roomId ?? undefined, type, content),
  markRead: (s, r, [roomId, eventId, opts]) => markRead(s, r, roomId, eventId, opts),
  createRoom: (s, r, [req]) => createRoom(s, r, req),
};

/** Each room operation another instance may ask this one, the room's writer, to run. */
const ROOM_OP_RUNNERS: Record<RoomOp, (s: Services, r: Requester, args: any[]) => Promise<unknown>> = {
  joinRoom: (s, r, [target, body, memberContent, via]) => joinRoom(s, r, target, body, memberContent ?? undefined, via),
  knockRoom: (s, r, [target, body, via]) => knockRoom(s, r, target, body, via),
  leaveRoom: (s, r, [roomId, body]) => leaveRoom(s, r, roomId, body),
  inviteUser: (s, r, [roomId, body]) => inviteUser(s, r, roomId, body),
};

const refusedOp = (s: Services, what: string, writer: string) =>
  new MatrixError("M_UNKNOWN", `Instance ${s.topology.instanceName} does not write ${what} (it has ${writer} write it): the instances' stream_writers differ`, 500);

async function runStreamOp(s: Services, body: Record<string, unknown>): Promise<{ result: unknown }> {
  const { op, requester, args } = body;
  const known = typeof op === "string" && (op in STREAM_OPS || (ROOM_OPS as readonly string[]).includes(op));
  if (!known || typeof requester !== "object" || requester === null || typeof (requester as Requester).userId !== "string" || !Array.isArray(args) || (op in ROOM_OP_RUNNERS && typeof args[0] !== "string"))
    throw new MatrixError("M_BAD_JSON", "op, requester and args are required", 400);
  const r = requester as Requester;
  if (op in ROOM_OP_RUNNERS) {
    // Never sent on: the room (an alias resolved) must be this instance's.
    const roomId = (await joinTarget(s, args[0] as string, [])).roomId;
    const writer = roomWriterElsewhere(s, roomId);
    if (writer) throw refusedOp(s, roomId, writer);
    return { result: (await ROOM_OP_RUNNERS[op as RoomOp](s, r, args)) ?? null };
  }
  const writer = writerElsewhere(s, op as StreamOp);
  if (writer) throw refusedOp(s, STREAM_OPS[op as StreamOp], writer);
  return { result: (await STREAM_OP_RUNNERS[op as StreamOp](s, r, args)) ?? null };
}

/** The internal routes: refused without the secret; the federation PDUs and EDUs of this instance's share, drafts of its rooms, operations on its streams. */
export function internalRoutes(app: FastifyInstance, s: Services): void {
  if (!s.topology.distributed) return;
  app.all(REFUSED, async () => {
    throw new MatrixError("M_FORBIDDEN", "Internal request without the replication secret", 403);
  });
  const internal = (path: string, handle: (body: Record<string, unknown>) => Promise<unknown>) =>
    app.post(`${INTERNAL_PREFIX}${path}`, (req) => {
      // Reached only through the rewrite, which routes a request without the secret to REFUSED.
      if (!internalMark(req.raw)) throw new MatrixError("M_FORBIDDEN", "Internal request without the replication secret", 403);
      return s.inFlight.track(() => handle(internalBody(req)));
    });
  internal(INTERNAL_PDUS, (body) => receiveForwardedPdus(s, body));
  internal(INTERNAL_EDUS, (body) => receiveForwardedEdus(s, body));
  internal(INTERNAL_APPEND, (body) => appendForwarded(s, body, appendEvent));
  internal(INTERNAL_STREAM_OP, (body) => runStreamOp(s, body));
}
