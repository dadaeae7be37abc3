// The audit of list fields (issue 39: cursors on every list): every list the schema returns is either a
// page with a cursor — a Relay connection (`edges` beside `pageInfo`, its field taking `after`/`before`)
// or a page whose type has `pageInfo` (REST's next_batch as endCursor) — or is named in UNPAGED below
// with the reason it is whole. A new list field fails here until it gets a cursor or a reason.
import { describe, expect, it } from "vitest";
import { getNamedType, getNullableType, isListType, isObjectType, type GraphQLField, type GraphQLObjectType } from "graphql";
import { buildWeftSchema } from "../../src/graphql/schema.ts";

/** Lists that are whole by nature, with why: small and bounded, a live payload, or whole in the spec too. */
const UNPAGED: Record<string, string> = {
  "Query.roomKeys": "a key backup's sessions, whole as GET /room_keys/keys answers them (filtered by room and session)",
  "Viewer.oneTimeKeyCounts": "one count per algorithm",
  "Viewer.unusedFallbackKeyTypes": "a device's few fallback key algorithms",
  "KeysQueryResult.users": "the users the query named, whole as POST /keys/query answers",
  "KeysQueryResult.failures": "one entry per server that failed",
  "UserKeys.devices": "a user's devices, whole as POST /keys/query answers",
  "Mutation.uploadSignatures": "the failures of the signatures the request carried",
  "KeysUploadResult.oneTimeKeyCounts": "one count per algorithm",
  "KeysClaimResult.oneTimeKeys": "one key per device the claim named",
  "KeysClaimResult.failures": "one entry per server that failed",
  "SyncUpdate.toDevice": "one sync delta (bounded per update; acknowledged by position)",
  "SyncUpdate.oneTimeKeyCounts": "one count per algorithm",
  "SyncUpdate.unusedFallbackKeyTypes": "a device's few fallback key algorithms",
  "DeviceListChanges.changed": "one sync delta",
  "DeviceListChanges.left": "one sync delta",
  "Capabilities.roomVersions": "the room versions the server knows",
  "DeviceKeys.algorithms": "a device's own few algorithms",
  "AuthFlow.stages": "one flow's few stages",
  "AuthRequired.flows": "the few flows the server offers for the operation",
  "AuthRequired.completed": "the stages done in one session",
  "DevicesDeleted.deviceIds": "the ids the mutation was given",
  "EventContext.eventsAfter": "at most `limit` events; `end` pages on",
  "EventContext.eventsBefore": "at most `limit` events; `start` pages on (Room.timeline's before)",
  "EventContext.state": "the state at the event, whole as /context's state",
  "Event.references": "the m.reference aggregation bundled in the event (the server bounds it; /relations pages them)",
  "JoinedRoomSync.accountData": "one sync delta; the subscription pages by position (nextBatch/since)",
  "JoinedRoomSync.receipts": "one sync delta",
  "JoinedRoomSync.state": "one sync delta",
  "JoinedRoomSync.timeline": "one sync delta (limited, with prevBatch for older events)",
  "JoinedRoomSync.typing": "one sync delta",
  "JoinedRoomSync.unreadThreadNotifications": "one sync delta",
  "SyncUpdate.accountData": "one sync delta",
  "SyncUpdate.invitedRoomIds": "one sync delta",
  "SyncUpdate.joinedRooms": "one sync delta",
  "SyncUpdate.leftRoomIds": "one sync delta",
  "SyncUpdate.presence": "one sync delta",
  "LoginFlow.identityProviders": "the server's configured providers",
  "Query.loginFlows": "the server's login types",
  "PushRuleset.override": "the viewer's rules of a kind, whole as GET /pushrules/",
  "PushRuleset.content": "the viewer's rules of a kind, whole as GET /pushrules/",
  "PushRuleset.postcontent": "the viewer's rules of a kind, whole as GET /pushrules/",
  "PushRuleset.room": "the viewer's rules of a kind, whole as GET /pushrules/",
  "PushRuleset.sender": "the viewer's rules of a kind, whole as GET /pushrules/",
  "PushRuleset.underride": "the viewer's rules of a kind, whole as GET /pushrules/",
  "Query.pushers": "the viewer's own pushers, whole as GET /pushers",
  "ReceiptsUpdate.receipts": "a room's receipts now, then each change (live)",
  "TypingUpdate.userIds": "who types now (live)",
  "Room.aliases": "a room's local aliases, whole as GET /rooms/{roomId}/aliases",
  "Room.tags": "the viewer's few tags on a room, whole as GET /user/{userId}/rooms/{roomId}/tags",
  "RoomAliasTarget.servers": "the few servers to join through, whole as GET /directory/room/{roomAlias}",
  "Room.state": "the state, whole as GET /rooms/{roomId}/state (filter by type/stateKey; members page through Room.members)",
  "RoomListRoom.heroes": "at most 5 members naming a room",
  "RoomListRoom.inviteState": "an invite's stripped state (a few events)",
  "RoomListRoom.requiredState": "the state the room config asks for",
  "RoomListRoom.timeline": "timelineLimit events (prevBatch pages older ones)",
  "RoomListState.windows": "the ranges the subscription asked for",
  "RoomListUpdate.lists": "the lists the subscription asked for",
  "RoomListUpdate.rooms": "the rooms of the windows and subscriptions that changed",
  "RoomListWindow.roomIds": "one asked-for range",
  "RoomUnreadCounts.threads": "the threads with unread notifications",
  "SpaceHierarchyRoom.allowedRoomIds": "a join rule's allowed rooms",
  "SpaceHierarchyRoom.childrenState": "a space's m.space.child events (the hierarchy pages the rooms)",
  "UserDirectoryResult.results": "the directory search has a limit and `limited`, no cursor (as POST /user_directory/search)",
  "Whois.devices": "a user's own devices, whole as GET /admin/whois",
  "WhoisDevice.connections": "a device's last connection",
  "Viewer.devices": "the account's own devices",
  "Viewer.threepids": "the account's own addresses",
};

const CURSOR_ARGS = ["after", "before", "from", "since"];

function listFields(schema: Awaited<ReturnType<typeof buildWeftSchema>>) {
  const out: { type: GraphQLObjectType; name: string; field: GraphQLField<unknown, unknown> }[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    for (const [name, field] of Object.entries(type.getFields())) if (isListType(getNullableType(field.type))) out.push({ type, name, field });
  }
  return out;
}

describe("cursors on every list", () => {
  it("pages every list field with a cursor, or names why it is whole", async () => {
    const schema = await buildWeftSchema();
    const missing: string[] = [];
    for (const { type, name } of listFields(schema)) {
      const key = `${type.name}.${name}`;
      const paged = "pageInfo" in type.getFields();
      if (paged || UNPAGED[key]) continue;
      missing.push(key);
    }
    expect(missing, "list fields without a cursor: give them one (a connection) or a reason in UNPAGED").toEqual([]);
    // Every reason names a field that still exists and is still unpaged.
    const lists = new Set(listFields(schema).filter(({ type }) => !("pageInfo" in type.getFields())).map(({ type, name }) => `${type.name}.${name}`));
    expect(Object.keys(UNPAGED).filter((k) => !lists.has(k))).toEqual([]);
  });

  it("gives every paged type's field a cursor argument, and every connection pageInfo and edge cursors", async () => {
    const schema = await buildWeftSchema();
    const problems: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith("__")) continue;
      for (const [name, field] of Object.entries(type.getFields())) {
        const target = getNamedType(field.type);
        if (!isObjectType(target) || !("pageInfo" in target.getFields())) continue;
        // A subscription's payload or a mutation's answer is no page to ask for again.
        if (type === schema.getSubscriptionType() || type === schema.getMutationType()) continue;
        if (!field.args.some((a) => CURSOR_ARGS.includes(a.name))) problems.push(`${type.name}.${name} returns ${target.name} but takes no cursor`);
      }
      if (type.name.endsWith("Connection")) {
        const edges = type.getFields().edges;
        const edge = edges && getNamedType(edges.type);
        if (!("pageInfo" in type.getFields()) || !edge || !isObjectType(edge) || !("cursor" in edge.getFields()) || !("node" in edge.getFields()))
          problems.push(`${type.name} is not a connection (edges { cursor node }, pageInfo)`);
      }
    }
    expect(problems).toEqual([]);
  });
});
