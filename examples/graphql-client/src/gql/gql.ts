/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "mutation Login($user: String!, $password: String!) {\n  login(input: {user: $user, password: $password}) {\n    userId\n    accessToken\n  }\n}": typeof types.LoginDocument,
    "mutation CreateUpload {\n  createUpload {\n    uploadUrl\n    expiresAt\n    media {\n      mxcUri\n      httpUrl\n      thumbnailHttpUrl(width: 96, height: 96, method: CROP)\n    }\n  }\n}": typeof types.CreateUploadDocument,
    "mutation CreateRoom($name: String!) {\n  createRoom(input: {name: $name}) {\n    roomId\n  }\n}\n\nmutation SendText($roomId: String!, $txnId: String!, $body: String!) {\n  sendMessage(roomId: $roomId, txnId: $txnId, msgtype: \"m.text\", body: $body) {\n    eventId\n  }\n}\n\nsubscription RoomTimeline($roomId: String!, $since: String) {\n  roomTimeline(roomId: $roomId, since: $since) {\n    cursor\n    event {\n      eventId\n      sender\n      type\n      content\n    }\n  }\n}\n\nquery RoomPosition($roomId: String!) {\n  room(roomId: $roomId) {\n    timeline(last: 1) {\n      edges {\n        cursor\n      }\n    }\n  }\n}": typeof types.CreateRoomDocument,
    "query RoomList($first: Int!, $after: String) {\n  viewer {\n    userId\n    rooms(first: $first, after: $after) {\n      edges {\n        cursor\n        node {\n          roomId\n          name\n          avatarHttpUrl(size: 48)\n          joinedMemberCount\n          unreadCounts {\n            total {\n              notifications\n              highlights\n            }\n          }\n          timeline(last: 1) {\n            edges {\n              node {\n                eventId\n                sender\n                type\n                content\n              }\n            }\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n}": typeof types.RoomListDocument,
};
const documents: Documents = {
    "mutation Login($user: String!, $password: String!) {\n  login(input: {user: $user, password: $password}) {\n    userId\n    accessToken\n  }\n}": types.LoginDocument,
    "mutation CreateUpload {\n  createUpload {\n    uploadUrl\n    expiresAt\n    media {\n      mxcUri\n      httpUrl\n      thumbnailHttpUrl(width: 96, height: 96, method: CROP)\n    }\n  }\n}": types.CreateUploadDocument,
    "mutation CreateRoom($name: String!) {\n  createRoom(input: {name: $name}) {\n    roomId\n  }\n}\n\nmutation SendText($roomId: String!, $txnId: String!, $body: String!) {\n  sendMessage(roomId: $roomId, txnId: $txnId, msgtype: \"m.text\", body: $body) {\n    eventId\n  }\n}\n\nsubscription RoomTimeline($roomId: String!, $since: String) {\n  roomTimeline(roomId: $roomId, since: $since) {\n    cursor\n    event {\n      eventId\n      sender\n      type\n      content\n    }\n  }\n}\n\nquery RoomPosition($roomId: String!) {\n  room(roomId: $roomId) {\n    timeline(last: 1) {\n      edges {\n        cursor\n      }\n    }\n  }\n}": types.CreateRoomDocument,
    "query RoomList($first: Int!, $after: String) {\n  viewer {\n    userId\n    rooms(first: $first, after: $after) {\n      edges {\n        cursor\n        node {\n          roomId\n          name\n          avatarHttpUrl(size: 48)\n          joinedMemberCount\n          unreadCounts {\n            total {\n              notifications\n              highlights\n            }\n          }\n          timeline(last: 1) {\n            edges {\n              node {\n                eventId\n                sender\n                type\n                content\n              }\n            }\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n}": types.RoomListDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation Login($user: String!, $password: String!) {\n  login(input: {user: $user, password: $password}) {\n    userId\n    accessToken\n  }\n}"): (typeof documents)["mutation Login($user: String!, $password: String!) {\n  login(input: {user: $user, password: $password}) {\n    userId\n    accessToken\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation CreateUpload {\n  createUpload {\n    uploadUrl\n    expiresAt\n    media {\n      mxcUri\n      httpUrl\n      thumbnailHttpUrl(width: 96, height: 96, method: CROP)\n    }\n  }\n}"): (typeof documents)["mutation CreateUpload {\n  createUpload {\n    uploadUrl\n    expiresAt\n    media {\n      mxcUri\n      httpUrl\n      thumbnailHttpUrl(width: 96, height: 96, method: CROP)\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation CreateRoom($name: String!) {\n  createRoom(input: {name: $name}) {\n    roomId\n  }\n}\n\nmutation SendText($roomId: String!, $txnId: String!, $body: String!) {\n  sendMessage(roomId: $roomId, txnId: $txnId, msgtype: \"m.text\", body: $body) {\n    eventId\n  }\n}\n\nsubscription RoomTimeline($roomId: String!, $since: String) {\n  roomTimeline(roomId: $roomId, since: $since) {\n    cursor\n    event {\n      eventId\n      sender\n      type\n      content\n    }\n  }\n}\n\nquery RoomPosition($roomId: String!) {\n  room(roomId: $roomId) {\n    timeline(last: 1) {\n      edges {\n        cursor\n      }\n    }\n  }\n}"): (typeof documents)["mutation CreateRoom($name: String!) {\n  createRoom(input: {name: $name}) {\n    roomId\n  }\n}\n\nmutation SendText($roomId: String!, $txnId: String!, $body: String!) {\n  sendMessage(roomId: $roomId, txnId: $txnId, msgtype: \"m.text\", body: $body) {\n    eventId\n  }\n}\n\nsubscription RoomTimeline($roomId: String!, $since: String) {\n  roomTimeline(roomId: $roomId, since: $since) {\n    cursor\n    event {\n      eventId\n      sender\n      type\n      content\n    }\n  }\n}\n\nquery RoomPosition($roomId: String!) {\n  room(roomId: $roomId) {\n    timeline(last: 1) {\n      edges {\n        cursor\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query RoomList($first: Int!, $after: String) {\n  viewer {\n    userId\n    rooms(first: $first, after: $after) {\n      edges {\n        cursor\n        node {\n          roomId\n          name\n          avatarHttpUrl(size: 48)\n          joinedMemberCount\n          unreadCounts {\n            total {\n              notifications\n              highlights\n            }\n          }\n          timeline(last: 1) {\n            edges {\n              node {\n                eventId\n                sender\n                type\n                content\n              }\n            }\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n}"): (typeof documents)["query RoomList($first: Int!, $after: String) {\n  viewer {\n    userId\n    rooms(first: $first, after: $after) {\n      edges {\n        cursor\n        node {\n          roomId\n          name\n          avatarHttpUrl(size: 48)\n          joinedMemberCount\n          unreadCounts {\n            total {\n              notifications\n              highlights\n            }\n          }\n          timeline(last: 1) {\n            edges {\n              node {\n                eventId\n                sender\n                type\n                content\n              }\n            }\n          }\n        }\n      }\n      pageInfo {\n        hasNextPage\n        endCursor\n      }\n    }\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;