// The federation face's route helper: one declaration serves a route under /_matrix/federation/<version>
// and /_proto/federation/<version>, and — for signed routes — authenticates the origin server from its
// X-Matrix / X-Proto Authorization header before the handler runs (the rule lives in
// src/domain/federation/request-auth.ts; a bad or missing signature is 401 M_UNAUTHORIZED, nothing done).
import type { FastifyInstance } from "fastify";
import type { Services } from "../../domain/services.ts";
import { authenticateRequest } from "../../domain/federation/request-auth.ts";
import { FEDERATION_ENVELOPE_DEPTH, MAX_JSON_DEPTH } from "../../domain/json-limits.ts";
import { BRANDS, route, type Call, type Method } from "../http.ts";

export interface FederationCall extends Call {
  /** The authenticated origin server (signed routes). */
  origin: string;
}

export interface FederationRouteSpec {
  method: Method;
  /** Path after /_matrix/federation/<version>, e.g. "/query/profile". */
  path: string;
  /** API version segment (default v1). */
  version?: string;
  /** signed: the request must carry a valid signature (every federation endpoint but a few). */
  auth: "signed" | "none";
  handler: (call: FederationCall) => Promise<unknown> | unknown;
}

/** Authenticates a federation request: the origin server, or a MatrixError (401/400 M_UNAUTHORIZED). */
export async function federationOrigin(call: Call): Promise<string> {
  const { req, s } = call;
  const headers = req.raw.headersDistinct.authorization ?? [];
  // Only PUT and POST carry a signed body (as Synapse: a GET's body is ignored).
  const content = req.method === "PUT" || req.method === "POST" ? call.body() : undefined;
  // The body as received, should the signature cover numbers canonical JSON forbids (request-auth.ts).
  const raw = req.body;
  const contentText = () => (Buffer.isBuffer(raw) ? raw.toString("utf8") : undefined);
  return authenticateRequest(
    { serverName: s.config.server_name, keyRing: s.keyRing, now: s.clock.now() },
    { method: req.method, uri: req.originalUrl, authorization: headers, content, contentText },
  );
}

/** A Server-Server API route under both brands. */
export function federationRoute(app: FastifyInstance, s: Services, spec: FederationRouteSpec): void {
  const version = spec.version ?? "v1";
  route<Call>(app, s, BRANDS.map((b) => `/${b}/federation/${version}${spec.path}`), {
    method: spec.method,
    path: "",
    auth: "none",
    // A transaction or membership body wraps content a client could send: its envelope adds levels.
    bodyDepth: MAX_JSON_DEPTH + FEDERATION_ENVELOPE_DEPTH,
    handler: async (call) => {
      const origin = spec.auth === "signed" ? await federationOrigin(call) : "";
      // A server that signs a request to us is up: if we were backing off from it, stop (as Synapse does).
      if (origin) s.federationSender.remoteIsUp(origin);
      return spec.handler(Object.assign(call, { origin }));
    },
  });
}
