import fastifyWebsocket from "@fastify/websocket";
import { toMatrixError } from "../shared/http-errors.js";
import { matrixErrorExtensions } from "./error-extensions.js";
import { MAX_JSON_DEPTH, parseJsonText } from "../domain/json-limits.js";
import { MatrixError } from "../domain/errors.js";
import { mountExplorer, wantsExplorer } from "./explorer/explorer.js";
/** A request body's envelope around a JSON variable: the body object and its `variables` object. */
const BODY_DEPTH = MAX_JSON_DEPTH + 2;
/** The query text of an HTTP request (POST body or GET query string), if it is a string. */
function queryTextOf(req) {
    const q = (req.method === "GET" ? req.query : req.body);
    return typeof q?.query === "string" ? q.query : undefined;
}
export const GRAPHQL_PATH = "/graphql";
/**
 * The WebSocket handler while the engine is being built: the socket's messages (connection_init first)
 * are held and handed to graphql-ws, in order, once it listens, so the first subscriber loses nothing.
 */
function wsWhenReady(engine, log) {
    return function (socket, req) {
        const held = [];
        const hold = (data, isBinary) => held.push([data, isBinary]);
        socket.on("message", hold);
        engine().then((e) => {
            socket.off("message", hold);
            if (socket.readyState !== socket.OPEN)
                return;
            e.ws.call(this, socket, req);
            for (const [data, isBinary] of held)
                socket.emit("message", data, isBinary);
        }, (err) => {
            log.error({ err }, "the GraphQL engine failed to start");
            socket.close(1011, "Internal server error");
        });
    };
}
export async function mountGraphql(app, s) {
    let started;
    const engine = () => {
        if (!started) {
            started = import("./engine.js").then((m) => m.startGraphqlEngine(s));
            started.catch(() => (started = undefined)); // the next request tries again
        }
        return started;
    };
    app.addHook("onClose", async () => {
        if (started)
            await (await started.catch(() => undefined))?.stop();
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
                done(null, parseJsonText(body, { maxDepth: BODY_DEPTH, what: "The request body" }));
            }
            catch (err) {
                done(err, undefined);
            }
        });
        scope.addHook("onRequest", async (req, reply) => {
            if (req.url.split("?")[0] === GRAPHQL_PATH && wantsExplorer(req))
                return explorerPage(reply);
        });
        // The query text's nesting is checked before Apollo parses it (graphql-js's parser recurses).
        scope.addHook("preHandler", async (req) => {
            const text = queryTextOf(req);
            const err = text === undefined ? undefined : (await engine()).checkQueryText(text);
            if (err)
                throw new MatrixError("M_TOO_LARGE", err.message, 400);
        });
        // Failures before Apollo runs (bad JSON, too large, wrong type) answer in GraphQL's error shape.
        scope.setErrorHandler((err, req, reply) => {
            const { error, unexpected } = toMatrixError(err);
            if (unexpected)
                req.log.error({ err, url: req.originalUrl }, "unhandled error in /graphql");
            return reply.code(error.httpStatus).type("application/json").send({ errors: [{ message: error.message, extensions: matrixErrorExtensions(error) }] });
        });
        const httpHandler = async (req, reply) => (await engine()).http(req, reply);
        scope.route({ method: "GET", url: GRAPHQL_PATH, handler: httpHandler, wsHandler: wsWhenReady(engine, s.log) });
        scope.route({ method: "POST", url: GRAPHQL_PATH, handler: httpHandler });
    });
}
