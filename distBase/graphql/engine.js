import { GraphQLError, parse, specifiedRules, validate } from "graphql";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import { fastifyApolloHandler } from "@as-integrations/fastify";
import { makeHandler } from "graphql-ws/use/@fastify/websocket";
import { httpContext, wsContext } from "./context.js";
import { errorFormatter } from "./errors.js";
import { buildWeftSchema, createWeftPubSub } from "./schema.js";
import { checkCost, checkQueryText, depthLimitRule, PARSE_OPTIONS } from "./limits.js";
import { stringifyJson } from "../domain/json-limits.js";
/** An errcode on an error graphql-js made (a syntax error): M_BAD_JSON, as for any malformed request. */
function withErrcode(err, errcode = "M_BAD_JSON") {
    return err.extensions.errcode ? err : new GraphQLError(err.message, { nodes: err.nodes, source: err.source, positions: err.positions, originalError: err.originalError, extensions: { ...err.extensions, errcode } });
}
export async function startGraphqlEngine(s) {
    const schema = await buildWeftSchema({ pubSub: createWeftPubSub() });
    const formatError = errorFormatter(s.log);
    const apollo = new ApolloServer({
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
                            if (err)
                                throw err;
                        },
                    };
                },
            },
        ],
        logger: s.log,
    });
    await apollo.start();
    const http = fastifyApolloHandler(apollo, { context: async (req) => httpContext(s, req) });
    const wsHandler = makeHandler({
        schema,
        // The token in connection_init is not checked here but per operation (like HTTP): operations that
        // need no token (register, login) work, and the others fail with the errcode of a missing or bad token.
        context: (ctx) => wsContext(s, ctx.connectionParams, ctx.extra.request),
        // The same limits as over HTTP, applied before the operation runs.
        onSubscribe: (_ctx, _id, payload) => {
            const textErr = checkQueryText(payload.query);
            if (textErr)
                return [textErr];
            let document;
            try {
                document = parse(payload.query, PARSE_OPTIONS);
            }
            catch (err) {
                return [withErrcode(err instanceof GraphQLError ? err : new GraphQLError(String(err?.message ?? err)))];
            }
            const errors = validate(schema, document, [...specifiedRules, depthLimitRule]);
            if (errors.length > 0)
                return errors.map((e) => withErrcode(e));
            const costErr = checkCost(schema, document, payload.operationName, payload.variables);
            if (costErr)
                return [costErr];
            return { schema, document, operationName: payload.operationName, variableValues: payload.variables };
        },
        onNext: (_ctx, _id, _payload, _args, result) => result.errors ? { ...result, errors: result.errors.map((e) => formatError(e.toJSON())) } : undefined,
    });
    return {
        http: http,
        ws: wsHandler,
        checkQueryText,
        stop: () => apollo.stop(),
    };
}
