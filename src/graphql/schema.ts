// Builds the GraphQL schema from the type-graphql resolvers (validation off: the domain validates), with
// the pub/sub that subscriptions will publish through, and prints it the one stable way schema.graphql
// is generated and checked (scripts/emit-graphql-schema.ts, test/graphql/schema.test.ts).
import "reflect-metadata";
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { buildSchema } from "type-graphql";
import { createPubSub } from "@graphql-yoga/subscription";
import { MapErrors } from "./errors.ts";
import { LIMITS_DOC } from "./limits.ts";
import { PERSISTED_QUERIES_DOC } from "./persisted-queries.ts";
import { AccountResolver } from "./resolvers/accounts.ts";
import { ProfileResolver, UserProfileResolver } from "./resolvers/profile.ts";
import { ViewerResolver } from "./resolvers/viewer.ts";
import { AccountAdminResolver, ViewerAccountAdminResolver } from "./resolvers/account-admin.ts";
import { RoomResolver, ViewerRoomsResolver } from "./resolvers/rooms.ts";
import { RoomMutationResolver } from "./resolvers/room-mutations.ts";
import { SearchResolver } from "./resolvers/search.ts";
import { EventRelationsResolver, ReportResolver, RoomSummaryResolver, RoomThreadsResolver, SpaceHierarchyResolver } from "./resolvers/relations.ts";
import { SyncResolver, ViewerAccountDataResolver } from "./resolvers/sync.ts";
import { DirectoryResolver } from "./resolvers/directory.ts";
import { EphemeralResolver } from "./resolvers/ephemeral.ts";
import { RoomUnreadResolver } from "./resolvers/push.ts";
import { RoomListResolver } from "./resolvers/room-list.ts";
import { AccountModerationResolver } from "./resolvers/account-moderation.ts";
import { MutualRoomsResolver } from "./resolvers/mutual-rooms.ts";
import { E2eeKeysResolver, ViewerKeyCountsResolver } from "./resolvers/e2ee-keys.ts";
import { KeyBackupResolver } from "./resolvers/key-backup.ts";
import { MediaResolver } from "./resolvers/media.ts";
import { PushRulesResolver } from "./resolvers/push-rules.ts";
import { DeviceMutationsResolver } from "./resolvers/devices.ts";
import { AccountSecurityResolver } from "./resolvers/account-security.ts";
import { LookupsResolver } from "./resolvers/lookups.ts";
import { EventContextResolver } from "./resolvers/event-context.ts";
import { WhoisResolver } from "./resolvers/whois.ts";
import { RoomThreadSubscriptionResolver, ThreadSubscriptionMutationsResolver } from "./resolvers/thread-subscriptions.ts";
import { RoomTagMutationsResolver, RoomTagsResolver } from "./resolvers/room-tags.ts";

export type WeftPubSub = ReturnType<typeof createWeftPubSub>;

/** One pub/sub per server: subscriptions publish live deltas through it (fed by the domain's notifier). */
export function createWeftPubSub() {
  return createPubSub<Record<string, [unknown]>>();
}

export async function buildWeftSchema(opts: { pubSub?: WeftPubSub } = {}): Promise<GraphQLSchema> {
  const schema = await buildSchema({
    resolvers: [
      ViewerResolver,
      ProfileResolver,
      UserProfileResolver,
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
      RoomSummaryResolver,
      SyncResolver,
      ViewerAccountDataResolver,
      SearchResolver,
      DirectoryResolver,
      EphemeralResolver,
      RoomUnreadResolver,
      RoomListResolver,
      AccountModerationResolver,
      MutualRoomsResolver,
      E2eeKeysResolver,
      ViewerKeyCountsResolver,
      KeyBackupResolver,
      MediaResolver,
      PushRulesResolver,
      RoomTagsResolver,
      RoomTagMutationsResolver,
      DeviceMutationsResolver,
      AccountSecurityResolver,
      LookupsResolver,
      EventContextResolver,
      RoomThreadSubscriptionResolver,
      ThreadSubscriptionMutationsResolver,
      WhoisResolver,
    ],
    validate: false,
    pubSub: opts.pubSub ?? createWeftPubSub(),
    globalMiddlewares: [MapErrors],
  });
  // The rules every operation keeps, where introspection shows them: on the Query type.
  schema.getQueryType()!.description = `The entry points of reading queries. ${LIMITS_DOC} ${PERSISTED_QUERIES_DOC}`;
  return schema;
}

export const SCHEMA_HEADER =
  "# Generated from the resolvers in src/graphql by `npm run schema:graphql`. Do not edit by hand.\n\n";

/** The schema as committed in schema.graphql: sorted, so the text only changes when the schema does. */
export function printWeftSchema(schema: GraphQLSchema): string {
  return SCHEMA_HEADER + printSchema(lexicographicSortSchema(schema)) + "\n";
}
