// The per-operation GraphQL context: services, client address, the access token as sent (HTTP
// `Authorization: Bearer` / `access_token`, or the WebSocket connection_init payload), the requester
// authenticated lazily on first use (so register/login need no token), and per-request DataLoaders.
import type { FastifyRequest } from "fastify";
import { MatrixError } from "../domain/errors.ts";
import type { Services } from "../domain/services.ts";
import type { Requester } from "../domain/accounts/requester.ts";
import { authenticate } from "../domain/accounts/authenticate.ts";
import { bearerToken, parseBearer } from "../shared/http-auth.ts";
import { createLoaders, type Loaders } from "./loaders.ts";
import { noteRequester } from "../observability/request-context.ts";

export interface GraphqlContext {
  s: Services;
  clientIp: string;
  /** The access token as sent, if any (application-service login and registration need it too). */
  bearerToken: string | undefined;
  /** The authenticated requester (guests included): M_MISSING_TOKEN without a token, M_UNKNOWN_TOKEN for a bad one. */
  requester(): Promise<Requester>;
  /** Forgets the authenticated requester, e.g. after its session was logged out by this operation. */
  forgetRequester(): void;
  loaders: Loaders;
}

function makeContext(s: Services, token: string | undefined, clientIp: string, userAgent: string | null, req?: FastifyRequest): GraphqlContext {
  let auth: Promise<Requester> | undefined;
  const ctx: GraphqlContext = {
    s,
    clientIp,
    bearerToken: token,
    requester() {
      if (token === undefined) return Promise.reject(new MatrixError("M_MISSING_TOKEN", "Missing access token", 401));
      auth ??= authenticate(s, token, { seen: { ip: clientIp, userAgent } }).then((r) => {
        if (req) noteRequester(req, r.userId); // for the request's log line (HTTP; on a WebSocket there is no request)
        return r;
      });
      return auth;
    },
    forgetRequester() {
      auth = undefined;
      ctx.loaders = createLoaders(ctx);
    },
    loaders: undefined as unknown as Loaders,
  };
  ctx.loaders = createLoaders(ctx);
  return ctx;
}

/** Context of one HTTP request (GET or POST /graphql). */
export function httpContext(s: Services, req: FastifyRequest): GraphqlContext {
  return makeContext(s, bearerToken(req), req.ip, req.headers["user-agent"] ?? null, req);
}

/**
 * Context of one operation on a WebSocket. The token comes from the connection_init payload
 * (`authorization: "Bearer <token>"` or `access_token: "<token>"`), else from the upgrade request itself.
 * It is checked per operation, so a token revoked while the socket is open stops working at once.
 */
export function wsContext(s: Services, payload: Record<string, unknown> | undefined, upgrade: FastifyRequest): GraphqlContext {
  return makeContext(s, connectionToken(payload) ?? bearerToken(upgrade), upgrade.ip, upgrade.headers["user-agent"] ?? null);
}

/** Reads the access token from a connection_init payload (absent when none is given). */
export function connectionToken(payload: Record<string, unknown> | undefined): string | undefined {
  const fromHeader = parseBearer(payload?.authorization ?? payload?.Authorization);
  if (fromHeader) return fromHeader;
  const t = payload?.access_token;
  return typeof t === "string" && t !== "" ? t : undefined;
}
