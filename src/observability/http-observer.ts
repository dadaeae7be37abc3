// What the HTTP server tells the operator about each request: a request id (the `X-Request-Id` header and
// `reqId` on its log lines: every line written while it is handled with `log_request_context`,
// request-context.ts), one `info` line when it ends (method, path with secrets in the query redacted,
// status, time, user, address), and its HTTP metrics.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { Metrics } from "./metrics.ts";
import { attachContext, contextOf, newRequestId, runInRequest, type RequestContext } from "./request-context.ts";
import { routePattern } from "../compat/path-aliases.ts";

/** Query parameters that carry secrets (access tokens, 3PID session secrets, login and validation tokens, media URL signatures). */
const SECRET_PARAMS = /([?&](?:access_token|client_secret|token|loginToken|sig)=)[^&#]*/g;

/** `url` with the values of secret query parameters replaced by `<redacted>` (as Synapse logs them). */
export function redactUrl(url: string): string {
  return url.includes("?") ? url.replace(SECRET_PARAMS, "$1<redacted>") : url;
}

/** Route patterns whose requests are client sync connections. */
const isSyncRoute = (route: string) => route.endsWith("/sync");

/**
 * Installs the hooks on `app` (before any route is added, so every route is observed). `carryContext`:
 * the request's context is carried through its async calls (config `log_request_context`).
 */
export function observeRequests(app: FastifyInstance, log: Logger, metrics: Metrics | undefined, carryContext: boolean): void {
  const enter = carryContext ? runInRequest : (_ctx: RequestContext, done: () => void) => done();
  app.addHook("onRequest", (req, reply, done) => {
    const ctx: RequestContext = { id: req.id };
    attachContext(req, ctx);
    reply.header("x-request-id", ctx.id);
    // Nothing to tell when the request ends (no metrics, the request line's level off): no listener per request.
    if (!metrics && !log.isLevelEnabled("info")) return enter(ctx, done);
    const started = performance.now();
    const sync = isSyncRoute(routePattern(req) ?? "");
    metrics?.requestStarted(sync);
    reply.raw.once("close", () => {
      const ms = Math.round((performance.now() - started) * 10) / 10;
      const finished = reply.raw.writableFinished;
      const status = finished ? reply.raw.statusCode : 499; // 499: the client went away first (as nginx logs it)
      if (log.isLevelEnabled("info")) {
        const path = redactUrl(req.originalUrl);
        log.info(
          { reqId: ctx.id, method: req.method, path, status, ms, user: ctx.user, ip: req.ip, ...(finished ? {} : { aborted: true }) },
          `${req.method} ${path} ${status} ${ms}ms${ctx.user ? ` ${ctx.user}` : ""}`,
        );
      }
      // The pattern as the request named it (under the alias it was sent under: path-aliases.ts); read
      // now, since a request its route does not serve under that alias went to the 404 handler.
      const route = routePattern(req) ?? "unmatched";
      metrics?.requestEnded(sync, { method: req.method, route, status: String(status) }, (performance.now() - started) / 1000);
    });
    enter(ctx, done);
  });
  if (!carryContext) return;
  // The body is read from the socket between these hooks: the handler runs in the request's context again.
  app.addHook("preHandler", (req, _reply, done) => {
    const ctx = contextOf(req);
    if (ctx) runInRequest(ctx, done);
    else done();
  });
}

/** Fastify's request id generator: ids unique within the process (request-context.ts). */
export const genReqId = (): string => newRequestId();
