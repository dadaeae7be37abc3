// The REST face's route table helper: one declaration serves a route under both brands (/_matrix and
// /_proto) and every API version it lives under (r0 and v3, or v1 ...) — registered once, the aliases
// rewritten to it (path-aliases.ts) —, authenticates per the route's rule, and hands the handler a parsed
// request. Routes stay one table row each.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { MatrixError } from "../domain/errors.ts";
import type { Services } from "../domain/services.ts";
import type { Requester } from "../domain/accounts/requester.ts";
import { authenticate } from "../domain/accounts/authenticate.ts";
import { bearerToken } from "../shared/http-auth.ts";
import { requireNotGuest, type GuestRefusedOperation } from "../domain/accounts/guest-access.ts";
import { parseJsonText } from "../domain/json-limits.ts";
import { parseIntText, type IntRange } from "../domain/numbers.ts";
import { noteRequester } from "../observability/request-context.ts";
import { ALIASES, canonicalRoute, type AliasConfig } from "./path-aliases.ts";
import { writeRuleOf } from "../domain/cluster/write-routes.ts";
import { clientIpOf, routedHandler } from "./cluster.ts";

export const BRANDS = ["_matrix", "_proto"] as const;
export type Method = "GET" | "POST" | "PUT" | "DELETE";

/**
 * none: no token read; optional: a token is checked if sent; token: an access token is needed, a guest's
 * too — what a guest may do is the domain's rule (src/domain/accounts/guest-access.ts), see RouteSpec.op.
 */
export type AuthRule = "none" | "optional" | "token";

export interface Call {
  req: FastifyRequest;
  reply: FastifyReply;
  s: Services;
  /** Set for authenticated calls (always for the token rule). */
  requester: Requester | undefined;
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  clientIp: string;
  /** The bearer token as sent (application-service login and registration need it). */
  bearerToken: string | undefined;
  /** The JSON body; M_NOT_JSON if it is absent or not an object. */
  body(): Record<string, unknown>;
  /** The JSON body, or {} when none was sent. */
  bodyOrEmpty(): Record<string, unknown>;
  /** The JSON body, or undefined when none was sent. */
  bodyOrUndefined(): Record<string, unknown> | undefined;
}

export interface AuthedCall extends Call {
  requester: Requester;
}

export interface RouteSpec<C extends Call = Call> {
  method: Method;
  /** Path after the prefix, e.g. "/login" or "/rooms/:roomId/send/:eventType/:txnId". */
  path: string;
  auth: AuthRule;
  /**
   * The domain operation the route calls, when guests may not use it. The operation refuses guests itself;
   * the route asks the same rule before it reads the request, so a guest's malformed request is refused alike.
   */
  op?: GuestRefusedOperation;
  handler: (call: C) => Promise<unknown> | unknown;
  /** An expired account (account validity) may still make this request: logout, renewal. */
  allowExpired?: boolean;
  /** A locked account (MSC3939) may still make this request: logout. */
  allowLocked?: boolean;
  /** The deepest JSON nesting the body may have (default MAX_JSON_DEPTH; federation bodies add their envelope). */
  bodyDepth?: number;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

function parseBody(req: FastifyRequest, maxDepth: number | undefined): Record<string, unknown> | undefined {
  const raw = req.body;
  if (raw === undefined || raw === null) return undefined;
  if (Buffer.isBuffer(raw)) {
    if (raw.length === 0) return undefined;
    let text: string;
    try {
      text = UTF8.decode(raw); // invalid UTF-8 is no JSON text (as Synapse: M_NOT_JSON)
    } catch {
      throw new MatrixError("M_NOT_JSON", "Content not JSON.", 400);
    }
    const parsed = parseJsonText(text, { maxDepth });
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new MatrixError("M_BAD_JSON", "Content must be a JSON object.", 400);
    return parsed as Record<string, unknown>;
  }
  return raw as Record<string, unknown>;
}

/**
 * Path parameters that name something and so are never empty: `/room_keys/keys/` (what a client's URL
 * normalization makes of `/room_keys/keys/{roomId}/..`) is no route, not the room "" (as Synapse's patterns).
 */
const NAMING_PARAMS = ["roomId", "userId", "serverName", "mediaId", "eventId", "txnId", "sessionId", "deviceId", "roomIdOrAlias", "filterId"];

async function makeCall(s: Services, spec: RouteSpec<never>, req: FastifyRequest, reply: FastifyReply): Promise<Call> {
  const params = req.params as Record<string, string | undefined>;
  for (const name of NAMING_PARAMS) if (params[name] === "") throw new MatrixError("M_UNRECOGNIZED", "Unrecognized request", 404);
  const token = bearerToken(req);
  const clientIp = clientIpOf(req);
  let requester: Requester | undefined;
  if (spec.auth !== "none" && token) {
    const q = req.query as Record<string, unknown>;
    const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);
    const asUserId = first(q.user_id);
    // Spec v1.17 (MSC4326): `device_id`. MSC3202's `org.matrix.msc3202.device_id` is no longer read:
    // Synapse dropped it after stabilising (1.163 reads only `device_id`).
    const asDeviceId = first(q.device_id);
    requester = await authenticate(s, token, {
      asUserId: typeof asUserId === "string" ? asUserId : undefined,
      asDeviceId: typeof asDeviceId === "string" ? asDeviceId : undefined,
      seen: { ip: clientIp, userAgent: req.headers["user-agent"] ?? null },
      allowExpired: spec.allowExpired,
      allowLocked: spec.allowLocked,
    });
    noteRequester(req, requester.userId); // for the request's log line
  }
  if (spec.auth === "token" && !requester) throw new MatrixError("M_MISSING_TOKEN", "Missing access token", 401);
  if (spec.op && requester) requireNotGuest(requester, spec.op);
  let cached: Record<string, unknown> | undefined | null = null;
  const body = () => (cached === null ? (cached = parseBody(req, spec.bodyDepth)) : cached);
  return {
    req,
    reply,
    s,
    requester,
    params: req.params as Record<string, string>,
    query: req.query as Record<string, string | string[] | undefined>,
    clientIp,
    bearerToken: token,
    body() {
      const b = body();
      if (b === undefined) throw new MatrixError("M_NOT_JSON", "Content not JSON.", 400);
      return b;
    },
    bodyOrEmpty: () => body() ?? {},
    bodyOrUndefined: () => body(),
  };
}

/**
 * A route's handler as registered: `local` itself, or — when another instance may own the write (the
 * table in domain/cluster/write-routes.ts, read only with several processes) — forwarded to its owner.
 */
function routed(s: Services, method: Method, url: string, local: (req: FastifyRequest, reply: FastifyReply) => unknown) {
  const rule = s.topology.distributed ? writeRuleOf(method, url) : undefined;
  return rule ? routedHandler(s, rule, local) : local;
}

/**
 * Registers `spec` at each full path; returns nothing. The handler's result is sent as JSON (200). Paths
 * that are aliases of one another (path-aliases.ts) make one route, which answers under each of them.
 */
export function route<C extends Call>(app: FastifyInstance, s: Services, fullPaths: string[], spec: RouteSpec<C>): void {
  const byUrl = new Map<string, Set<string>>();
  for (const fullPath of fullPaths) {
    const { url, prefix } = canonicalRoute(fullPath);
    const prefixes = byUrl.get(url) ?? new Set<string>();
    if (prefix !== undefined) prefixes.add(prefix);
    byUrl.set(url, prefixes);
  }
  for (const [url, prefixes] of byUrl) {
    app.route({
      method: spec.method,
      url,
      config: (prefixes.size > 0 ? { [ALIASES]: prefixes } : {}) as AliasConfig,
      handler: routed(s, spec.method, url, (req, reply) =>
        s.inFlight.track(async () => {
          const call = await makeCall(s, spec as RouteSpec<never>, req, reply);
          const result = await spec.handler(call as C);
          // A handler that sent its own answer (a stream). Returned from an async handler, the reply (a
          // thenable) resolves to undefined once its stream ends — also when the client left mid-stream,
          // when `sent` is still false but the headers are out.
          if (reply.sent || reply.raw.headersSent || result === reply) return reply;
          return reply.code(reply.statusCode || 200).send(result ?? {});
        }),
      ),
    });
  }
}

/** Client-Server API route, served under both brands and the given versions (default r0 and v3). */
export function clientRoute<C extends Call>(app: FastifyInstance, s: Services, spec: RouteSpec<C> & { versions?: string[] }): void {
  const versions = spec.versions ?? ["r0", "v3"];
  route(app, s, BRANDS.flatMap((b) => versions.map((v) => `/${b}/client/${v}${spec.path}`)), spec);
}

/** Admin API route: /_impl/admin/<version> with /_synapse/admin/<version> as an alias. */
export function adminRoute<C extends Call>(app: FastifyInstance, s: Services, spec: RouteSpec<C> & { version?: string }): void {
  const v = spec.version ?? "v1";
  route(app, s, [`/_impl/admin/${v}${spec.path}`, `/_synapse/admin/${v}${spec.path}`], spec);
}

/** A route under both brands with a non-client prefix, e.g. ("key/v2", "/server"). */
export function brandedRoute<C extends Call>(app: FastifyInstance, s: Services, prefix: string, spec: RouteSpec<C>): void {
  route(app, s, BRANDS.map((b) => `/${b}/${prefix}${spec.path}`), spec);
}

// Small readers for query parameters, each failing with the spec's error.

export function queryString(call: Call, name: string, required: true): string;
export function queryString(call: Call, name: string, required?: false): string | undefined;
export function queryString(call: Call, name: string, required = false): string | undefined {
  const v = call.query[name];
  const value = Array.isArray(v) ? v[0] : v;
  if (value === undefined || value === "") {
    if (required) throw new MatrixError("M_MISSING_PARAM", `Missing ${name} query parameter`, 400);
    return undefined;
  }
  return value;
}

/** Every value of a repeated query parameter (`?via=a&via=b`), in order; empty values dropped. */
export function queryList(call: Call, name: string): string[] {
  const v = call.query[name];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x) => x !== "");
}

/** An integer query parameter within range (by default Matrix's integer range: src/domain/numbers.ts). */
export function queryInt(call: Call, name: string, opts: IntRange & { required?: boolean } = {}): number | undefined {
  const raw = opts.required ? queryString(call, name, true) : queryString(call, name);
  return raw === undefined ? undefined : parseIntText(raw, name, opts);
}

export function queryBool(call: Call, name: string): boolean | undefined {
  const raw = queryString(call, name);
  if (raw === undefined) return undefined;
  if (raw !== "true" && raw !== "false") throw new MatrixError("M_INVALID_PARAM", `${name} must be true or false`, 400);
  return raw === "true";
}
