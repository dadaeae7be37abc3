// Mounts the GraphQL face on the Fastify server: /graphql for GET and POST (Apollo, CSRF prevention on)
// and graphql-ws on the same path for WebSocket upgrades (a GET route's `wsHandler`). The routes exist from
// start-up; the machinery behind them (engine.ts: schema, Apollo, graphql-ws) is built on the first
// /graphql request, so a server no GraphQL client uses never loads it. Both stop with app.close().
// Both transports apply the same limits (limits.ts) and the JSON nesting bound (json-limits.ts).
import type { FastifyError, FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import fastifyWebsocket from "@fastify/websocket";
import type { Services } from "../domain/services.ts";
import { toMatrixError } from "../shared/http-errors.ts";
import { matrixErrorExtensions } from "./error-extensions.ts";
import { MAX_JSON_DEPTH, parseJsonText } from "../domain/json-limits.ts";
import { MatrixError } from "../domain/errors.ts";
import { mountExplorer, wantsExplorer } from "./explorer/explorer.ts";
import type { GraphqlEngine } from "./engine.ts";

/** A request body's envelope around a JSON variable: the body object and its `variables` object. */
const BODY_DEPTH = MAX_JSON_DEPTH + 2;

/** The query text of an HTTP request (POST body or GET query string), if it is a string. */
function queryTextOf(req: FastifyRequest): string | undefined {
  const q = (req.method === "GET" ? req.query : req.body) as { query?: unknown } | undefined;
  return typeof q?.query === "string" ? q.query : undefined;
}

export const GRAPHQL_PATH = "/graphql";

/**
 * The WebSocket handler while the engine is being built: the socket's messages (connection_init first)
 * are held and handed to graphql-ws, in order, once it listens, so the first subscriber loses nothing.
 */
function wsWhenReady(engine: () => Promise<GraphqlEngine>, log: Services["log"]) {
  return function (this: unknown, socket: WebSocket, req: FastifyRequest): void {
    const held: [unknown, boolean][] = [];
    const hold = (data: unknown, isBinary: boolean) => held.push([data, isBinary]);
    socket.on("message", hold);
    engine().then(
      (e) => {
        socket.off("message", hold);
        if (socket.readyState !== socket.OPEN) return;
        e.ws.call(this, socket, req);
        for (const [data, isBinary] of held) socket.emit("message", data, isBinary);
      },
      (err: unknown) => {
        log.error({ err }, "the GraphQL engine failed to start");
        socket.close(1011, "Internal server error");
      },
    );
  };
}

export async function mountGraphql(app: FastifyInstance, s: Services): Promise<void> {
  let started: Promise<GraphqlEngine> | undefined;
  const engine = () => {
    if (!started) {
      started = import("./engine.ts").then((m) => m.startGraphqlEngine(s));
      started.catch(() => (started = undefined)); // the next request tries again
    }
    return started;
  };
  app.addHook("onClose", async () => {
    if (started) await (await started.catch(() => undefined))?.stop();
  });

  // At the root, so that an upgrade request to any other path is answered like a plain request and its
  // socket then closed (a plugin scoped to /graphql would leave those sockets open and app.close() hanging).
  await app.register(fastifyWebsocket, { options: { maxPayload: s.config.max_request_body_size } });

  // Browsers opening /graphql get the explorer page (GraphiQL) instead of Apollo's CSRF refusal.
  const explorerPage = mountExplorer(app);

  // An encapsulated scope: its body parsing and error shape apply to /graphql only.
  await app.register(async (scope) => {
    // The REST face reads every body raw; Apollo wants parsed JSON (other types are refused with 415).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
      try {
        done(null, parseJsonText(body as string, { maxDepth: BODY_DEPTH, what: "The request body" }));
      } catch (err) {
        done(err as Error, undefined);
      }
    });
    scope.addHook("onRequest", async (req, reply) => {
      if (req.url.split("?")[0] === GRAPHQL_PATH && wantsExplorer(req)) return explorerPage(reply);
    });
    // The query text's nesting is checked before Apollo parses it (graphql-js's parser recurses).
    scope.addHook("preHandler", async (req) => {
      const text = queryTextOf(req);
      const err = text === undefined ? undefined : (await engine()).checkQueryText(text);
      if (err) throw new MatrixError("M_TOO_LARGE", err.message, 400);
    });

    // Failures before Apollo runs (bad JSON, too large, wrong type) answer in GraphQL's error shape.
    scope.setErrorHandler((err: FastifyError, req, reply) => {
      const { error, unexpected } = toMatrixError(err);
      if (unexpected) req.log.error({ reqId: req.id, err, url: req.originalUrl }, "unhandled error in /graphql");
      return reply.code(error.httpStatus).type("application/json").send({ errors: [{ message: error.message, extensions: matrixErrorExtensions(error) }] });
    });

    const httpHandler = async (req: FastifyRequest, reply: import("fastify").FastifyReply) => (await engine()).http(req, reply);
    scope.route({ method: "GET", url: GRAPHQL_PATH, handler: httpHandler, wsHandler: wsWhenReady(engine, s.log) });
    scope.route({ method: "POST", url: GRAPHQL_PATH, handler: httpHandler });
  });
}
