// Builds the GraphQL schema from the type-graphql resolvers (validation off: the domain validates), with
// the pub/sub that subscriptions will publish through, and prints it the one stable way schema.graphql
// is generated and checked (scripts/emit-graphql-schema.ts, test/graphql/schema.test.ts).
import "reflect-metadata";
import { lexicographicSortSchema, printSchema } from "graphql";
import { buildSchema } from "type-graphql";
import { createPubSub } from "@graphql-yoga/subscription";
import { MapErrors } from "./errors.js";
import { AccountResolver } from "./resolvers/accounts.js";
import { ProfileResolver } from "./resolvers/profile.js";
import { ViewerResolver } from "./resolvers/viewer.js";
import { AccountAdminResolver, ViewerAccountAdminResolver } from "./resolvers/account-admin.js";
import { RoomResolver, ViewerRoomsResolver } from "./resolvers/rooms.js";
import { RoomMutationResolver } from "./resolvers/room-mutations.js";
import { SearchResolver } from "./resolvers/search.js";
import { EventRelationsResolver, ReportResolver, RoomThreadsResolver, SpaceHierarchyResolver } from "./resolvers/relations.js";
import { SyncResolver, ViewerAccountDataResolver } from "./resolvers/sync.js";
import { DirectoryResolver } from "./resolvers/directory.js";
import { EphemeralResolver } from "./resolvers/ephemeral.js";
import { RoomUnreadResolver } from "./resolvers/push.js";
/** One pub/sub per server: subscriptions publish live deltas through it (fed by the domain's notifier). */
export function createWeftPubSub() {
    return createPubSub();
}
export async function buildWeftSchema(opts = {}) {
    return buildSchema({
        resolvers: [
            ViewerResolver,
            ProfileResolver,
            AccountResolver,
            AccountAdminResolver,
            ViewerAccountAdminResolver,
            RoomResolver,
            ViewerRoomsResolver,
            RoomMutationResolver,
            EventRelationsResolver,
            RoomThreadsResolver,
            ReportResolver,
            SpaceHierarchyResolver,
            SyncResolver,
            ViewerAccountDataResolver,
            SearchResolver,
            DirectoryResolver,
            EphemeralResolver,
            RoomUnreadResolver,
        ],
        validate: false,
        pubSub: opts.pubSub ?? createWeftPubSub(),
        globalMiddlewares: [MapErrors],
    });
}
export const SCHEMA_HEADER = "# Generated from the resolvers in src/graphql by `npm run schema:graphql`. Do not edit by hand.\n\n";
/** The schema as committed in schema.graphql: sorted, so the text only changes when the schema does. */
export function printWeftSchema(schema) {
    return SCHEMA_HEADER + printSchema(lexicographicSortSchema(schema)) + "\n";
}
