// Mounts the GraphQL face on the Fastify server: Apollo Server at /graphql for GET and POST (CSRF
// prevention on), and graphql-ws on the same path for WebSocket upgrades (a GET route's `wsHandler`).
// Both stop with app.close(): WebSockets in @fastify/websocket's preClose, Apollo in an onClose hook.
import type { FastifyError, FastifyInstance } from "fastify";
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

export const GRAPHQL_PATH = "/graphql";

export async function mountGraphql(app: FastifyInstance, s: Services): Promise<void> {
  const schema = await buildWeftSchema({ pubSub: createWeftPubSub() });
  const formatError = errorFormatter(s.log);

  const apollo = new ApolloServer<GraphqlContext>({
    schema,
    formatError: (formatted) => formatError(formatted),
    includeStacktraceInErrorResponses: false,
    // The homeserver shuts itself down (src/main.ts); Apollo must not grab SIGINT/SIGTERM.
    stopOnTerminationSignals: false,
    plugins: [ApolloServerPluginLandingPageDisabled()],
    logger: s.log,
  });
  await apollo.start();
  app.addHook("onClose", async () => {
    await apollo.stop();
  });

  // At the root, so that an upgrade request to any other path is answered like a plain request and its
  // socket then closed (a plugin scoped to /graphql would leave those sockets open and app.close() hanging).
  await app.register(fastifyWebsocket, { options: { maxPayload: s.config.max_request_body_size } });

  // An encapsulated scope: its body parsing and error shape apply to /graphql only.
  await app.register(async (scope) => {
    // The REST face reads every body raw; Apollo wants parsed JSON (other types are refused with 415).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("application/json", { parseAs: "string" }, scope.getDefaultJsonParser("error", "ignore"));

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
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: result.errors.map((e) => formatError(e.toJSON())) } : undefined,
    });

    scope.route({ method: "GET", url: GRAPHQL_PATH, handler: httpHandler, wsHandler });
    scope.route({ method: "POST", url: GRAPHQL_PATH, handler: httpHandler });
  });
}
