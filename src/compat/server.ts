// The HTTP server: Fastify with Matrix's error model. Every body is read raw and parsed as JSON on demand
// (clients omit Content-Type), every error becomes {errcode, error}, unknown paths are 404 and wrong
// methods 405 M_UNRECOGNIZED, every path answers OPTIONS with the spec's CORS headers (spec: Client-Server
// API "Web Browser Clients"), and M_LIMIT_EXCEEDED carries a Retry-After header.
import { STATUS_CODES } from "node:http";
import { createRequire } from "node:module";
import type { Socket } from "node:net";
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type RawRequestDefaultExpression } from "fastify";
import { ALIASES, answersUnderAlias, canonicalRoute, rewriteUrl, sentPrefixOf, type AliasConfig } from "./path-aliases.ts";
import { PathMethods } from "./path-methods.ts";
import { MatrixError } from "../domain/errors.ts";
import type { Services } from "../domain/services.ts";
import { stringifyJson } from "../domain/json-limits.ts";
import { toMatrixError } from "../shared/http-errors.ts";
import { listenerServes, mainServerFactory } from "./listeners.ts";
import { genReqId } from "../observability/http-observer.ts";
import { internalRewrite } from "./cluster.ts";

export const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, HEAD, POST, PUT, DELETE, OPTIONS",
  // If-Match and If-None-Match: MSC4108's rendezvous sessions (Synapse allows them on those paths only).
  "access-control-allow-headers": "X-Requested-With, Content-Type, Authorization, Date, Apollo-Require-Preflight, If-Match, If-None-Match",
  "access-control-expose-headers": "ETag, Retry-After",
} as const;

/**
 * Fastify's schema compilers (ajv, fast-json-stringify and their URI parsers: ~0.9 MB of source), loaded
 * only if a route declares a schema. Ours declare none (bodies are parsed and checked by the routes), so
 * an idle server never holds them; Fastify would otherwise load both when it starts.
 */
const fromFastify = createRequire(createRequire(import.meta.url).resolve("fastify"));
type CompilerFactory = (...args: unknown[]) => unknown;
let validators: CompilerFactory | undefined;
let serializers: CompilerFactory | undefined;
const lazyCompilers = {
  buildValidator: (...args: unknown[]) => (validators ??= (fromFastify("@fastify/ajv-compiler") as () => CompilerFactory)())(...args),
  buildSerializer: (...args: unknown[]) => (serializers ??= (fromFastify("@fastify/fast-json-stringify-compiler") as () => CompilerFactory)())(...args),
};

function sendError(reply: FastifyReply, err: MatrixError) {
  // Set here too: framework errors (a malformed URL) are answered without the onSend hooks.
  reply.headers(CORS_HEADERS);
  if (err.errcode === "M_LIMIT_EXCEEDED" && typeof err.extra.retry_after_ms === "number")
    reply.header("retry-after", String(Math.max(1, Math.ceil(err.extra.retry_after_ms / 1000))));
  return reply.code(err.httpStatus).type("application/json").send(JSON.stringify(err.toJSON()));
}

/**
 * Errors Node's HTTP parser finds before Fastify sees a request (headers or request line over 16 KB,
 * malformed framing, a client too slow to send its headers): answered as Matrix errors too, then the
 * connection closed, as Node does.
 */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const [status, errcode, message] =
    err.code === "HPE_HEADER_OVERFLOW"
      ? [431, "M_TOO_LARGE", "Request header fields too large (the request line and headers may take 16 KB)"]
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "M_UNKNOWN", "Request timeout"]
        : [400, "M_UNRECOGNIZED", "Malformed HTTP request"];
  const body = JSON.stringify({ errcode, error: message });
  if (socket.writable) {
    const cors = Object.entries(CORS_HEADERS).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${cors}Connection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

/** 405 M_UNRECOGNIZED: the path is served, not with this method. */
const methodNotAllowed = (reply: FastifyReply) => sendError(reply, new MatrixError("M_UNRECOGNIZED", "Unrecognized request: method not allowed", 405));

/**
 * `observe` installs the request observer's hooks (logs, metrics): first, so that it sees every request,
 * those answered 404 for an alias a route is not served under included.
 */
export function createHttpServer(s: Services, opts: { observe?: (app: FastifyInstance) => void } = {}): FastifyInstance {
  const app = Fastify({
    // The first http listener's server (HTTPS when `tls: true`); the others serve the same app (listeners.ts).
    serverFactory: mainServerFactory(s),
    loggerInstance: s.log as unknown as import("fastify").FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Request ids unique in the process; request handlers log through the server's logger, which adds the
    // id of the request being handled to every line (src/observability).
    genReqId,
    childLoggerFactory: (logger) => logger,
    bodyLimit: s.config.max_request_body_size,
    trustProxy: s.config.listeners.some((l) => l.x_forwarded),
    routerOptions: { ignoreDuplicateSlashes: true, maxParamLength: 2048 },
    // Each route is registered once; /_proto, client r0, media r0/v1 and /_synapse/admin are rewritten to
    // it (path-aliases.ts). The URL as sent stays in req.originalUrl.
    // With several processes, internal requests (/_weft/replication/) are checked and unwrapped first (cluster.ts).
    rewriteUrl: (s.topology.distributed ? internalRewrite(s, rewriteUrl) : rewriteUrl) as unknown as (req: RawRequestDefaultExpression) => string,
    // On close, idle keep-alive connections go at once; requests being handled finish first (sync long
    // polls answer at once on shutdown), so no client sees its connection cut mid-request.
    forceCloseConnections: "idle",
    // Errors Fastify answers itself unless told (a malformed or over-long URL) get the Matrix shape.
    frameworkErrors: (err, _req, reply) => sendError(reply, toMatrixError(err).error),
    clientErrorHandler,
    schemaController: { compilersFactory: lazyCompilers } as unknown as import("fastify").FastifyServerOptions["schemaController"],
  }) as unknown as FastifyInstance;

  // Bodies arrive as raw bytes and are parsed by the route (Call.body()), whatever the Content-Type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => done(null, body));

  // Replies are serialized by the one JSON serializer that survives any nesting (json-limits.ts).
  app.setReplySerializer((payload) => stringifyJson(payload));

  // A callback hook, not an async one: no promise and no extra microtask turn per answer.
  app.addHook("onSend", (_req, reply, payload, done) => {
    reply.headers(CORS_HEADERS);
    // JSON goes out as plain `application/json`, as Synapse sends it (strict clients compare the header).
    if (reply.getHeader("content-type") === "application/json; charset=utf-8") reply.header("content-type", "application/json");
    // Shutting down: an answer still going out closes its connection, so close() need not wait for
    // keep-alive to expire.
    if (s.inFlight.draining) reply.header("connection", "close");
    done(null, payload);
  });

  app.setErrorHandler((err, req, reply) => {
    // An answer already under way (a streamed body) cannot be replaced by an error: cut it.
    if (reply.raw.headersSent) {
      req.log.warn({ reqId: req.id, err, url: req.originalUrl }, "error after the answer started; connection closed");
      reply.raw.destroy();
      return;
    }
    const { error, unexpected } = toMatrixError(err);
    if (unexpected) req.log.error({ reqId: req.id, err, url: req.originalUrl, method: req.method }, "unhandled error");
    return sendError(reply, error);
  });

  // Each route path's methods and aliases (path-methods.ts): a path served with other methods is 405.
  const pathMethods = new PathMethods();
  app.setNotFoundHandler((req, reply) =>
    pathMethods.answer(req.url, req.method, sentPrefixOf(req)) === "method"
      ? methodNotAllowed(reply)
      : sendError(reply, new MatrixError("M_UNRECOGNIZED", "Unrecognized request", 404)),
  );

  app.options("*", async (_req, reply) => reply.code(200).send({}));

  // Which aliases each route answers under, per method (path-methods.ts). A route added directly at an
  // aliased path (not through route()) answers under the prefix it was written with only.
  app.addHook("onRoute", (route) => {
    if (route.url === "*" || route.url.endsWith("/*")) return;
    const config = (route.config ??= {}) as AliasConfig;
    if (!config[ALIASES]) {
      const { url, prefix } = canonicalRoute(route.url);
      if (url !== route.url) throw new Error(`route ${route.url}: register it at ${url} (its aliases are rewritten to it)`);
      if (prefix !== undefined) config[ALIASES] = new Set([prefix]);
    }
    for (const m of [route.method].flat()) pathMethods.add(route.url, String(m).toUpperCase(), config[ALIASES]);
  });
  opts.observe?.(app);
  // A listener answers only the resources it names (Synapse's `resources`): elsewhere the path is unknown.
  app.addHook("onRequest", (req, reply, done) => {
    if (listenerServes(req)) return done();
    void sendError(reply, new MatrixError("M_UNRECOGNIZED", "Unrecognized request", 404));
  });
  // A request under an alias its route is not served under is answered as if the alias were a route of
  // its own (the not-found handler: 404, or 405 when the alias serves other methods at that path).
  app.addHook("onRequest", (req, reply, done) => {
    if (answersUnderAlias(req)) return done();
    reply.callNotFound();
  });

  return app;
}
