// The GraphQL machinery behind /graphql: the type-graphql schema, Apollo Server and the graphql-ws handler,
// with the same limits on both transports (limits.ts). Built on the first /graphql request, not at start-up
// (server.ts): it is the heaviest part of the server to load, and many servers never see a GraphQL client.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { GraphQLError, parse, specifiedRules, validate, type DocumentNode, type ExecutionArgs } from "graphql";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import { fastifyApolloHandler } from "@as-integrations/fastify";
import { makeHandler } from "graphql-ws/use/@fastify/websocket";
import type { Services } from "../domain/services.ts";
import { httpContext, wsContext, type GraphqlContext } from "./context.ts";
import { errorFormatter } from "./errors.ts";
import { buildWeftSchema, createWeftPubSub } from "./schema.ts";
import { checkCost, checkQueryText, depthLimitRule, PARSE_OPTIONS } from "./limits.ts";
import { stringifyJson } from "../domain/json-limits.ts";
import { makeSharedSubscribe } from "./shared-execution.ts";
import { apolloPersistedQueries, checkRegistered, rememberPersisted, resolveWsQuery } from "./persisted-queries.ts";

/**
 * An errcode on an error graphql-js made (a syntax or validation error): M_BAD_JSON, as for any malformed
 * request, and Apollo's code for it (GRAPHQL_PARSE_FAILED, GRAPHQL_VALIDATION_FAILED), as over HTTP.
 */
function withErrcode(err: GraphQLError, code: string): GraphQLError {
  if (err.extensions.errcode && err.extensions.code) return err;
  const extensions = { ...err.extensions, errcode: err.extensions.errcode ?? "M_BAD_JSON", code: err.extensions.code ?? code };
  return new GraphQLError(err.message, { nodes: err.nodes, source: err.source, positions: err.positions, originalError: err.originalError, extensions });
}

export interface GraphqlEngine {
  /** Answers a GET or POST /graphql (Apollo). */
  http(req: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  /** Serves a WebSocket opened at /graphql (graphql-ws); `this` is the Fastify instance. */
  ws(this: unknown, socket: WebSocket, req: FastifyRequest): void;
  /** The query text's nesting refusal, if any (checked before Apollo parses it: the parser recurses). */
  checkQueryText(text: string): Error | undefined;
  stop(): Promise<void>;
}

export async function startGraphqlEngine(s: Services): Promise<GraphqlEngine> {
  const schema = await buildWeftSchema({ pubSub: createWeftPubSub() });
  const formatError = errorFormatter(s.log);
  const apollo = new ApolloServer<GraphqlContext>({
    schema,
    formatError: (formatted) => formatError(formatted),
    includeStacktraceInErrorResponses: false,
    parseOptions: PARSE_OPTIONS,
    validationRules: [depthLimitRule],
    // Automatic persisted queries with this process's bounded cache (persisted-queries.ts), as over graphql-ws.
    persistedQueries: apolloPersistedQueries(s),
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
              const notListed = checkRegistered(s, ctx.queryHash);
              if (notListed) throw notListed;
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

  const http = fastifyApolloHandler(apollo, { context: async (req) => httpContext(s, req) });
  const wsHandler = makeHandler<Record<string, unknown>>({
    schema,
    // The token in connection_init is not checked here but per operation (like HTTP): operations that
    // need no token (register, login) work, and the others fail with the errcode of a missing or bad token.
    context: (ctx) => wsContext(s, ctx.connectionParams, ctx.extra.request),
    // The same limits as over HTTP, applied before the operation runs.
    onSubscribe: (_ctx, _id, payload): ExecutionArgs | readonly GraphQLError[] => {
      // Persisted queries by the same rules as Apollo's over HTTP (persisted-queries.ts).
      const pq = resolveWsQuery(s, payload.query, payload.extensions ?? undefined);
      if (pq instanceof GraphQLError) return [pq];
      const textErr = checkQueryText(pq.query);
      if (textErr) return [textErr];
      let document: DocumentNode;
      try {
        document = parse(pq.query, PARSE_OPTIONS);
      } catch (err) {
        return [withErrcode(err instanceof GraphQLError ? err : new GraphQLError(String((err as Error)?.message ?? err)), "GRAPHQL_PARSE_FAILED")];
      }
      const errors = validate(schema, document, [...specifiedRules, depthLimitRule]);
      if (errors.length > 0) return errors.map((e) => withErrcode(e, "GRAPHQL_VALIDATION_FAILED"));
      if (pq.register) rememberPersisted(s, pq.hash, pq.query);
      const notListed = checkRegistered(s, pq.hash);
      if (notListed) return [notListed];
      const costErr = checkCost(schema, document, payload.operationName, payload.variables);
      if (costErr) return [costErr];
      return { schema, document, operationName: payload.operationName, variableValues: payload.variables };
    },
    // A payload many subscribers share is executed once per distinct operation (shared-execution.ts).
    subscribe: makeSharedSubscribe(),
    onNext: (_ctx, _id, _payload, _args, result) =>
      result.errors ? { ...result, errors: result.errors.map((e) => formatError(e.toJSON())) } : undefined,
  });

  return {
    http: http as GraphqlEngine["http"],
    ws: wsHandler as GraphqlEngine["ws"],
    checkQueryText,
    stop: () => apollo.stop(),
  };
}
