// Mounts the GraphQL face on the Fastify server: Apollo Server at /graphql for GET and POST (CSRF
// prevention on), and graphql-ws on the same path for WebSocket upgrades (a GET route's `wsHandler`).
// Both stop with app.close(): WebSockets in @fastify/websocket's preClose, Apollo in an onClose hook.
// Both transports apply the same limits (limits.ts) and the JSON nesting bound (json-limits.ts).
import type { FastifyError, FastifyInstance, FastifyRequest } from "fastify";
import { GraphQLError, parse, specifiedRules, validate, type DocumentNode, type ExecutionArgs } from "graphql";
import fastifyWebsocket from "@fastify/websocket";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import { fastifyApolloHandler } from "@as-integrations/fastify";
import { makeHandler } from "graphql-ws/use/@fastify/websocket";
import type { Services } from "../domain/services.ts";
import { toMatrixError } from "../shared/http-errors.ts";
import { httpContext, wsContext, type GraphqlContext } from "./context.ts";
import { errorFormatter, matrixErrorExtensions } from "./errors.ts";
import { buildWeftSchema, createWeftPubSub } from "./schema.ts";
import { checkCost, checkQueryText, depthLimitRule, PARSE_OPTIONS } from "./limits.ts";
import { MAX_JSON_DEPTH, parseJsonText, stringifyJson } from "../domain/json-limits.ts";
import { MatrixError } from "../domain/errors.ts";
import { mountExplorer, wantsExplorer } from "./explorer/explorer.ts";

/** A request body's envelope around a JSON variable: the body object and its `variables` object. */
const BODY_DEPTH = MAX_JSON_DEPTH + 2;

/** The query text of an HTTP request (POST body or GET query string), if it is a string. */
function queryTextOf(req: FastifyRequest): string | undefined {
  const q = (req.method === "GET" ? req.query : req.body) as { query?: unknown } | undefined;
  return typeof q?.query === "string" ? q.query : undefined;
}

/** An errcode on an error graphql-js made (a syntax error): M_BAD_JSON, as for any malformed request. */
function withErrcode(err: GraphQLError, errcode = "M_BAD_JSON"): GraphQLError {
  return err.extensions.errcode ? err : new GraphQLError(err.message, { nodes: err.nodes, source: err.source, positions: err.positions, originalError: err.originalError, extensions: { ...err.extensions, errcode } });
}

export const GRAPHQL_PATH = "/graphql";

export async function mountGraphql(app: FastifyInstance, s: Services): Promise<void> {
  const schema = await buildWeftSchema({ pubSub: createWeftPubSub() });
  const formatError = errorFormatter(s.log);

  const apollo = new ApolloServer<GraphqlContext>({
    schema,
    formatError: (formatted) => formatError(formatted),
    includeStacktraceInErrorResponses: false,
    parseOptions: PARSE_OPTIONS,
    validationRules: [depthLimitRule],
    // Responses go through the serializer that survives any nesting.
    stringifyResult: (value) => stringifyJson(value),
    // The homeserver shuts itself down (src/main.ts); Apollo must not grab SIGINT/SIGTERM.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      {
        // The cost limit needs the variables, so it runs once the operation is known.
        async requestDidStart() {
          return {
            async didResolveOperation(ctx) {
              if (ctx.operation?.operation === "subscription") {
                throw new GraphQLError("Subscriptions are served over WebSocket (graphql-ws) at /graphql", { extensions: { errcode: "M_UNRECOGNIZED", http: { status: 400 } } });
              }
              const err = checkCost(ctx.schema, ctx.document, ctx.operationName, ctx.request.variables);
              if (err) throw err;
            },
          };
        },
      },
    ],
    logger: s.log,
  });
  await apollo.start();
  app.addHook("onClose", async () => {
    await apollo.stop();
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
      const err = text === undefined ? undefined : checkQueryText(text);
      if (err) throw new MatrixError("M_TOO_LARGE", err.message, 400);
    });

    // Failures before Apollo runs (bad JSON, too large, wrong type) answer in GraphQL's error shape.
    scope.setErrorHandler((err: FastifyError, req, reply) => {
      const { error, unexpected } = toMatrixError(err);
      if (unexpected) req.log.error({ err, url: req.url }, "unhandled error in /graphql");
      return reply.code(error.httpStatus).type("application/json").send({ errors: [{ message: error.message, extensions: matrixErrorExtensions(error) }] });
    });

    const httpHandler = fastifyApolloHandler(apollo, { context: async (req) => httpContext(s, req) });
    const wsHandler = makeHandler<Record<string, unknown>>({
      schema,
      // The token in connection_init is not checked here but per operation (like HTTP): operations that
      // need no token (register, login) work, and the others fail with the errcode of a missing or bad token.
      context: (ctx) => wsContext(s, ctx.connectionParams, ctx.extra.request),
      // The same limits as over HTTP, applied before the operation runs.
      onSubscribe: (_ctx, _id, payload): ExecutionArgs | readonly GraphQLError[] => {
        const textErr = checkQueryText(payload.query);
        if (textErr) return [textErr];
        let document: DocumentNode;
        try {
          document = parse(payload.query, PARSE_OPTIONS);
        } catch (err) {
          return [withErrcode(err instanceof GraphQLError ? err : new GraphQLError(String((err as Error)?.message ?? err)))];
        }
        const errors = validate(schema, document, [...specifiedRules, depthLimitRule]);
        if (errors.length > 0) return errors.map((e) => withErrcode(e));
        const costErr = checkCost(schema, document, payload.operationName, payload.variables);
        if (costErr) return [costErr];
        return { schema, document, operationName: payload.operationName, variableValues: payload.variables };
      },
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: result.errors.map((e) => formatError(e.toJSON())) } : undefined,
    });

    scope.route({ method: "GET", url: GRAPHQL_PATH, handler: httpHandler, wsHandler });
    scope.route({ method: "POST", url: GRAPHQL_PATH, handler: httpHandler });
  });
}
