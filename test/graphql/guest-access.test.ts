// What a guest may do is decided by the domain operation (src/domain/accounts/guest-access.ts), so both
// faces answer alike. The walk calls every root field of the GraphQL schema (mutations, queries and
// subscriptions) as a guest and the REST endpoint of the same operation as another guest, and expects the
// same outcome from both: success, or the same errcode. It fails when the schema gains a root field that
// has no REST twin below.
import { describe, expect, it } from "vitest";
import { buildWeftSchema } from "../../src/graphql/schema.ts";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { createRoom } from "../helpers/rooms.ts";
import type { Session } from "../helpers/users.ts";
import { errcode, gql, subscribe, wsClient } from "./client.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const GUEST_FORBIDDEN = "M_GUEST_ACCESS_FORBIDDEN";

/** What a case sees of the world: the shared room, alice (its creator), a message of hers, a fresh txn id. */
interface World {
  roomId: string;
  alice: Session;
  aliceMessage: string;
  /** The guest calling this face (joined to the room) and an event they sent there. */
  guest: Session;
  guestMessage: string;
  txn: string;
}

interface Case {
  /** The GraphQL root field (Mutation, Query or Subscription) the case walks; several cases may share one. */
  field: string;
  /** What both faces must answer: "ok", or an errcode. */
  expect: string;
  graphql: (w: World) => { query: string; variables?: Record<string, unknown>; subscription?: boolean };
  /** The REST call: a path under /_matrix/client/v3 unless it starts with /_matrix/. */
  rest: (w: World) => { method: string; path: string; body?: unknown };
}

const room = (w: World) => enc(w.roomId);

const CASES: Case[] = [
  // Mutations
  { field: "createRoom", expect: GUEST_FORBIDDEN, graphql: () => ({ query: `mutation { createRoom(input: {}) { roomId } }` }), rest: () => ({ method: "POST", path: "/createRoom", body: {} }) },
  {
    field: "upgradeRoom", expect: GUEST_FORBIDDEN,
    graphql: (w) => ({ query: `mutation ($r: String!) { upgradeRoom(roomId: $r, newVersion: "11") { roomId } }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "POST", path: `/rooms/${room(w)}/upgrade`, body: { new_version: "11" } }),
  },
  ...(["invite", "kick", "ban", "unban"] as const).map((op): Case => ({
    field: op, expect: GUEST_FORBIDDEN,
    graphql: (w) => ({ query: `mutation ($r: String!, $u: String!) { ${op}(roomId: $r, userId: $u) { roomId } }`, variables: { r: w.roomId, u: w.alice.user_id } }),
    rest: (w) => ({ method: "POST", path: `/rooms/${room(w)}/${op}`, body: { user_id: w.alice.user_id } }),
  })),
  {
    field: "joinRoom", expect: "ok",
    graphql: (w) => ({ query: `mutation ($r: String!) { joinRoom(roomIdOrAlias: $r) { roomId } }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "POST", path: `/join/${room(w)}`, body: {} }),
  },
  {
    field: "leaveRoom", expect: "ok",
    graphql: (w) => ({ query: `mutation ($r: String!) { leaveRoom(roomId: $r) }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "POST", path: `/rooms/${room(w)}/leave`, body: {} }),
  },
  {
    field: "sendMessage", expect: "ok",
    graphql: (w) => ({ query: `mutation ($r: String!, $t: String!) { sendMessage(roomId: $r, txnId: $t, body: "hi") { eventId } }`, variables: { r: w.roomId, t: w.txn } }),
    rest: (w) => ({ method: "PUT", path: `/rooms/${room(w)}/send/m.room.message/${w.txn}`, body: { msgtype: "m.text", body: "hi" } }),
  },
  {
    field: "sendStateEvent", expect: "ok",
    graphql: (w) => ({ query: `mutation ($r: String!) { sendStateEvent(roomId: $r, type: "com.example.guest", content: { a: 1 }) { eventId } }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "PUT", path: `/rooms/${room(w)}/state/com.example.guest`, body: { a: 1 } }),
  },
  // Inviting through the state API is inviting: refused to guests like /invite.
  {
    field: "sendStateEvent", expect: GUEST_FORBIDDEN,
    graphql: (w) => ({
      query: `mutation ($r: String!, $u: String!) { sendStateEvent(roomId: $r, type: "m.room.member", stateKey: $u, content: { membership: "invite" }) { eventId } }`,
      variables: { r: w.roomId, u: "@bob:weft.test" },
    }),
    rest: (w) => ({ method: "PUT", path: `/rooms/${room(w)}/state/m.room.member/${enc("@bob:weft.test")}`, body: { membership: "invite" } }),
  },
  {
    field: "redactEvent", expect: "ok",
    graphql: (w) => ({ query: `mutation ($r: String!, $e: String!, $t: String!) { redactEvent(roomId: $r, eventId: $e, txnId: $t) { eventId } }`, variables: { r: w.roomId, e: w.guestMessage, t: w.txn } }),
    rest: (w) => ({ method: "PUT", path: `/rooms/${room(w)}/redact/${enc(w.guestMessage)}/${w.txn}`, body: {} }),
  },
  {
    field: "redactEvent", expect: "M_FORBIDDEN",
    graphql: (w) => ({ query: `mutation ($r: String!, $e: String!, $t: String!) { redactEvent(roomId: $r, eventId: $e, txnId: $t) { eventId } }`, variables: { r: w.roomId, e: w.aliceMessage, t: w.txn } }),
    rest: (w) => ({ method: "PUT", path: `/rooms/${room(w)}/redact/${enc(w.aliceMessage)}/${w.txn}`, body: {} }),
  },
  {
    field: "createAlias", expect: GUEST_FORBIDDEN,
    graphql: (w) => ({ query: `mutation ($a: String!, $r: String!) { createAlias(alias: $a, roomId: $r) { roomId } }`, variables: { a: `#${w.txn}:weft.test`, r: w.roomId } }),
    rest: (w) => ({ method: "PUT", path: `/directory/room/${enc(`#${w.txn}:weft.test`)}`, body: { room_id: w.roomId } }),
  },
  {
    field: "deleteAlias", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { deleteAlias(alias: "#walk:weft.test") }` }),
    rest: () => ({ method: "DELETE", path: `/directory/room/${enc("#walk:weft.test")}` }),
  },
  {
    field: "setRoomDirectoryVisibility", expect: GUEST_FORBIDDEN,
    graphql: (w) => ({ query: `mutation ($r: String!) { setRoomDirectoryVisibility(roomId: $r, visibility: PRIVATE) { roomId } }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "PUT", path: `/directory/list/room/${room(w)}`, body: { visibility: "private" } }),
  },
  {
    field: "reportEvent", expect: GUEST_FORBIDDEN,
    graphql: (w) => ({ query: `mutation ($r: String!, $e: String!) { reportEvent(roomId: $r, eventId: $e) }`, variables: { r: w.roomId, e: w.aliceMessage } }),
    rest: (w) => ({ method: "POST", path: `/rooms/${room(w)}/report/${enc(w.aliceMessage)}`, body: {} }),
  },
  {
    field: "reportRoom", expect: GUEST_FORBIDDEN,
    graphql: (w) => ({ query: `mutation ($r: String!) { reportRoom(roomId: $r, reason: "spam") }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "POST", path: `/rooms/${room(w)}/report`, body: { reason: "spam" } }),
  },
  {
    field: "reportUser", expect: GUEST_FORBIDDEN,
    graphql: (w) => ({ query: `mutation ($u: String!) { reportUser(userId: $u, reason: "spam") }`, variables: { u: w.alice.user_id } }),
    rest: (w) => ({ method: "POST", path: `/users/${enc(w.alice.user_id)}/report`, body: { reason: "spam" } }),
  },
  {
    field: "setDisplayName", expect: "ok",
    graphql: () => ({ query: `mutation { setDisplayName(displayName: "Guesty") { userId } }` }),
    rest: (w) => ({ method: "PUT", path: `/profile/${enc(w.guest.user_id)}/displayname`, body: { displayname: "Guesty" } }),
  },
  {
    field: "setAvatarUrl", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { setAvatarUrl(avatarUrl: "mxc://weft.test/a") { userId } }` }),
    rest: (w) => ({ method: "PUT", path: `/profile/${enc(w.guest.user_id)}/avatar_url`, body: { avatar_url: "mxc://weft.test/a" } }),
  },
  // Extended profile fields (spec v1.16): a guest may change its display name alone (as Synapse).
  {
    field: "setProfileField", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { setProfileField(key: "m.tz", value: "UTC") { userId } }` }),
    rest: (w) => ({ method: "PUT", path: `/profile/${enc(w.guest.user_id)}/m.tz`, body: { "m.tz": "UTC" } }),
  },
  {
    field: "setProfileField", expect: "ok",
    graphql: () => ({ query: `mutation { setProfileField(key: "displayname", value: "Guesty") { userId } }` }),
    rest: (w) => ({ method: "PUT", path: `/profile/${enc(w.guest.user_id)}/displayname`, body: { displayname: "Guesty" } }),
  },
  {
    field: "deleteProfileField", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { deleteProfileField(key: "org.example.x") { userId } }` }),
    rest: (w) => ({ method: "DELETE", path: `/profile/${enc(w.guest.user_id)}/org.example.x` }),
  },
  {
    field: "setAccountData", expect: "ok",
    graphql: () => ({ query: `mutation { setAccountData(type: "com.example.prefs", content: { a: 1 }) { type } }` }),
    rest: (w) => ({ method: "PUT", path: `/user/${enc(w.guest.user_id)}/account_data/com.example.prefs`, body: { a: 1 } }),
  },
  {
    field: "setTyping", expect: "ok",
    graphql: (w) => ({ query: `mutation ($r: String!) { setTyping(roomId: $r, typing: true) }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "PUT", path: `/rooms/${room(w)}/typing/${enc(w.guest.user_id)}`, body: { typing: true } }),
  },
  {
    field: "markRead", expect: "ok",
    graphql: (w) => ({ query: `mutation ($r: String!, $e: String!) { markRead(roomId: $r, eventId: $e) }`, variables: { r: w.roomId, e: w.aliceMessage } }),
    rest: (w) => ({ method: "POST", path: `/rooms/${room(w)}/receipt/m.read/${enc(w.aliceMessage)}`, body: {} }),
  },
  {
    field: "setPresence", expect: "ok",
    graphql: () => ({ query: `mutation { setPresence(presence: "online") { presence } }` }),
    rest: (w) => ({ method: "PUT", path: `/presence/${enc(w.guest.user_id)}/status`, body: { presence: "online" } }),
  },
  {
    field: "register", expect: "ok",
    graphql: () => ({ query: `mutation { register(input: { kind: GUEST }) { userId } }` }),
    rest: () => ({ method: "POST", path: "/register?kind=guest", body: {} }),
  },
  {
    field: "login", expect: "M_FORBIDDEN",
    graphql: () => ({ query: `mutation { login(input: { user: "alice", password: "wrong" }) { userId } }` }),
    rest: () => ({ method: "POST", path: "/login", body: { type: "m.login.password", identifier: { type: "m.id.user", user: "alice" }, password: "wrong" } }),
  },
  { field: "logout", expect: "ok", graphql: () => ({ query: `mutation { logout }` }), rest: () => ({ method: "POST", path: "/logout", body: {} }) },
  // Third-party identifiers are for accounts, not guests (as Synapse: /account/3pid refuses guests).
  {
    field: "addThreepid", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { addThreepid(clientSecret: "secret", sid: "sid") }` }),
    rest: () => ({ method: "POST", path: "/account/3pid/add", body: { client_secret: "secret", sid: "sid" } }),
  },
  {
    field: "deleteThreepid", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { deleteThreepid(medium: "email", address: "guest@example.org") }` }),
    rest: () => ({ method: "POST", path: "/account/3pid/delete", body: { medium: "email", address: "guest@example.org" } }),
  },
  // No e-mail is configured on this server: both faces say so alike (the spec's code, MSC4178).
  {
    field: "requestEmailToken", expect: "M_THREEPID_MEDIUM_NOT_SUPPORTED",
    graphql: () => ({ query: `mutation { requestEmailToken(purpose: ADD, clientSecret: "secret", email: "guest@example.org", sendAttempt: 1) }` }),
    rest: () => ({ method: "POST", path: "/account/3pid/email/requestToken", body: { client_secret: "secret", email: "guest@example.org", send_attempt: 1 } }),
  },

  // Queries
  { field: "viewer", expect: "ok", graphql: () => ({ query: `{ viewer { userId isGuest } }` }), rest: () => ({ method: "GET", path: "/account/whoami" }) },
  {
    field: "room", expect: "ok",
    graphql: (w) => ({ query: `query ($r: String!) { room(roomId: $r) { roomId state { eventId } } }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "GET", path: `/rooms/${room(w)}/state` }),
  },
  // Room.aliases is GET /rooms/{roomId}/aliases, which guests may not use.
  {
    field: "room", expect: GUEST_FORBIDDEN,
    graphql: (w) => ({ query: `query ($r: String!) { room(roomId: $r) { aliases } }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "GET", path: `/rooms/${room(w)}/aliases` }),
  },
  {
    field: "profile", expect: "ok",
    graphql: (w) => ({ query: `query ($u: String!) { profile(userId: $u) { userId timeZone fields } }`, variables: { u: w.alice.user_id } }),
    rest: (w) => ({ method: "GET", path: `/profile/${enc(w.alice.user_id)}` }),
  },
  {
    field: "presence", expect: "ok",
    graphql: (w) => ({ query: `query ($u: String!) { presence(userId: $u) { presence } }`, variables: { u: w.guest.user_id } }),
    rest: (w) => ({ method: "GET", path: `/presence/${enc(w.guest.user_id)}/status` }),
  },
  { field: "loginFlows", expect: "ok", graphql: () => ({ query: `{ loginFlows { type } }` }), rest: () => ({ method: "GET", path: "/login" }) },
  // Single sign-on is not configured on this server.
  {
    field: "ssoRedirectUrl", expect: "M_UNRECOGNIZED",
    graphql: () => ({ query: `{ ssoRedirectUrl(redirectUrl: "https://client.example/") }` }),
    rest: () => ({ method: "GET", path: `/login/sso/redirect?redirectUrl=${enc("https://client.example/")}` }),
  },
  { field: "publicRooms", expect: "ok", graphql: () => ({ query: `{ publicRooms { edges { cursor } } }` }), rest: () => ({ method: "POST", path: "/publicRooms", body: {} }) },
  {
    field: "searchMessages", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `{ searchMessages(term: "hello") { count } }` }),
    rest: () => ({ method: "POST", path: "/search", body: { search_categories: { room_events: { search_term: "hello" } } } }),
  },
  {
    field: "searchUsers", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `{ searchUsers(term: "alice") { limited } }` }),
    rest: () => ({ method: "POST", path: "/user_directory/search", body: { search_term: "alice" } }),
  },
  {
    field: "spaceHierarchy", expect: "ok",
    graphql: (w) => ({ query: `query ($r: String!) { spaceHierarchy(roomId: $r) { nextBatch } }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "GET", path: `/_matrix/client/v1/rooms/${room(w)}/hierarchy` }),
  },
  {
    field: "roomSummary", expect: "ok",
    graphql: (w) => ({ query: `query ($r: String!) { roomSummary(roomIdOrAlias: $r) { membership room { roomId } } }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "GET", path: `/_matrix/client/v1/room_summary/${room(w)}` }),
  },

  // Subscriptions: the same reads as /messages and /sync.
  {
    field: "roomTimeline", expect: "ok",
    graphql: (w) => ({ query: `subscription ($r: String!) { roomTimeline(roomId: $r, since: "s0") { cursor } }`, variables: { r: w.roomId }, subscription: true }),
    rest: (w) => ({ method: "GET", path: `/rooms/${room(w)}/messages?dir=b&limit=1` }),
  },
  ...(["typing", "receipts"] as const).map((sub): Case => ({
    field: sub, expect: "ok",
    graphql: (w) => ({ query: `subscription ($r: String!) { ${sub}(roomId: $r) { roomId } }`, variables: { r: w.roomId }, subscription: true }),
    rest: () => ({ method: "GET", path: "/sync?timeout=0" }),
  })),
  {
    field: "syncUpdates", expect: "ok",
    graphql: () => ({ query: `subscription { syncUpdates { nextBatch } }`, subscription: true }),
    rest: () => ({ method: "GET", path: "/sync?timeout=0" }),
  },
  {
    field: "mutualRooms", expect: "ok",
    graphql: (w) => ({ query: `query ($u: String!) { mutualRooms(userId: $u) { count } }`, variables: { u: w.alice.user_id } }),
    rest: (w) => ({ method: "GET", path: `/_matrix/client/v1/mutual_rooms?user_id=${enc(w.alice.user_id)}` }),
  },
  // Media: uploads (a signed URL's mxc is reserved by POST /media/v1/create) and previews are not for guests;
  // a media file's browser URLs are the read side of the repository, as its config is.
  {
    field: "createUpload", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { createUpload { uploadUrl } }` }),
    rest: () => ({ method: "POST", path: "/_matrix/media/v1/create", body: {} }),
  },
  {
    field: "media", expect: "ok",
    graphql: () => ({ query: `{ media(mxcUri: "mxc://weft.test/abcdef") { httpUrl } }` }),
    rest: () => ({ method: "GET", path: "/_matrix/client/v1/media/config" }),
  },
  {
    field: "urlPreview", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `{ urlPreview(url: "http://127.0.0.1:1/") { title } }` }),
    rest: () => ({ method: "GET", path: `/_matrix/client/v1/media/preview_url?url=${enc("http://127.0.0.1:1/")}` }),
  },
  // Account moderation: server admins only (a guest is not one).
  {
    field: "accountModeration", expect: "M_FORBIDDEN",
    graphql: (w) => ({ query: `query ($u: String!) { accountModeration(userId: $u) { locked } }`, variables: { u: w.alice.user_id } }),
    rest: (w) => ({ method: "GET", path: `/_matrix/client/v1/admin/lock/${enc(w.alice.user_id)}` }),
  },
  ...([["setAccountLocked", "lock", "locked"], ["setAccountSuspended", "suspend", "suspended"]] as const).map(([field, path, key]): Case => ({
    field, expect: "M_FORBIDDEN",
    graphql: (w) => ({ query: `mutation ($u: String!) { ${field}(userId: $u, ${key}: true) }`, variables: { u: w.alice.user_id } }),
    rest: (w) => ({ method: "PUT", path: `/_matrix/client/v1/admin/${path}/${enc(w.alice.user_id)}`, body: { [key]: true } }),
  })),
  // End-to-end encryption: guests may use device keys and to-device messages (as Synapse), not cross-signing or key backup.
  {
    field: "uploadKeys", expect: "ok",
    graphql: () => ({ query: `mutation { uploadKeys(input: {}) { oneTimeKeyCounts { count } } }` }),
    rest: () => ({ method: "POST", path: "/keys/upload", body: {} }),
  },
  {
    field: "queryKeys", expect: "ok",
    graphql: (w) => ({ query: `query ($u: String!) { queryKeys(users: [{ userId: $u }]) { users { userId } } }`, variables: { u: w.alice.user_id } }),
    rest: (w) => ({ method: "POST", path: "/keys/query", body: { device_keys: { [w.alice.user_id]: [] } } }),
  },
  {
    field: "claimKeys", expect: "ok",
    graphql: (w) => ({ query: `mutation ($u: String!) { claimKeys(claims: [{ userId: $u, deviceId: "NOSUCH", algorithm: "signed_curve25519" }]) { oneTimeKeys { keyId } } }`, variables: { u: w.alice.user_id } }),
    rest: (w) => ({ method: "POST", path: "/keys/claim", body: { one_time_keys: { [w.alice.user_id]: { NOSUCH: "signed_curve25519" } } } }),
  },
  {
    field: "sendToDevice", expect: "ok",
    graphql: (w) => ({ query: `mutation ($u: String!, $t: String!) { sendToDevice(eventType: "com.example.guest", txnId: $t, messages: [{ userId: $u, deviceId: "*", content: {} }]) }`, variables: { u: w.alice.user_id, t: w.txn } }),
    rest: (w) => ({ method: "PUT", path: `/sendToDevice/com.example.guest/${w.txn}`, body: { messages: { [w.alice.user_id]: { "*": {} } } } }),
  },
  // Acknowledging to-device messages is what /sync's since does.
  { field: "acknowledgeToDevice", expect: "ok", graphql: () => ({ query: `mutation { acknowledgeToDevice(upTo: "s0") }` }), rest: () => ({ method: "GET", path: "/sync?since=s0&timeout=0" }) },
  {
    field: "uploadCrossSigningKeys", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { uploadCrossSigningKeys(keys: {}) }` }),
    rest: () => ({ method: "POST", path: "/keys/device_signing/upload", body: {} }),
  },
  {
    field: "uploadSignatures", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { uploadSignatures(signatures: []) { keyId } }` }),
    rest: () => ({ method: "POST", path: "/keys/signatures/upload", body: {} }),
  },
  { field: "keyBackup", expect: GUEST_FORBIDDEN, graphql: () => ({ query: `{ keyBackup { version } }` }), rest: () => ({ method: "GET", path: "/room_keys/version" }) },
  {
    field: "createKeyBackupVersion", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { createKeyBackupVersion(algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", authData: {}) }` }),
    rest: () => ({ method: "POST", path: "/room_keys/version", body: { algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", auth_data: {} } }),
  },
  {
    field: "updateKeyBackupVersion", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { updateKeyBackupVersion(version: "1", algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", authData: {}) }` }),
    rest: () => ({ method: "PUT", path: "/room_keys/version/1", body: { algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", auth_data: {} } }),
  },
  { field: "deleteKeyBackupVersion", expect: GUEST_FORBIDDEN, graphql: () => ({ query: `mutation { deleteKeyBackupVersion(version: "1") }` }), rest: () => ({ method: "DELETE", path: "/room_keys/version/1" }) },
  { field: "putRoomKeys", expect: GUEST_FORBIDDEN, graphql: () => ({ query: `mutation { putRoomKeys(version: "1", keys: []) { count } }` }), rest: () => ({ method: "PUT", path: "/room_keys/keys?version=1", body: { rooms: {} } }) },
  { field: "roomKeys", expect: GUEST_FORBIDDEN, graphql: () => ({ query: `{ roomKeys(version: "1") { sessionId } }` }), rest: () => ({ method: "GET", path: "/room_keys/keys?version=1" }) },
  { field: "deleteRoomKeys", expect: GUEST_FORBIDDEN, graphql: () => ({ query: `mutation { deleteRoomKeys(version: "1") { count } }` }), rest: () => ({ method: "DELETE", path: "/room_keys/keys?version=1" }) },
  { field: "pushRules", expect: GUEST_FORBIDDEN, graphql: () => ({ query: `{ pushRules { override { ruleId } } }` }), rest: () => ({ method: "GET", path: "/pushrules/" }) },
  { field: "pushRule", expect: GUEST_FORBIDDEN, graphql: () => ({ query: `{ pushRule(kind: "override", ruleId: ".m.rule.master") { enabled } }` }), rest: () => ({ method: "GET", path: "/pushrules/global/override/.m.rule.master" }) },
  {
    field: "setPushRule", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { setPushRule(kind: "content", ruleId: "g", rule: { actions: ["notify"], pattern: "x" }) { ruleId } }` }),
    rest: () => ({ method: "PUT", path: "/pushrules/global/content/g", body: { actions: ["notify"], pattern: "x" } }),
  },
  { field: "deletePushRule", expect: GUEST_FORBIDDEN, graphql: () => ({ query: `mutation { deletePushRule(kind: "content", ruleId: "g") }` }), rest: () => ({ method: "DELETE", path: "/pushrules/global/content/g" }) },
  {
    field: "setPushRuleEnabled", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { setPushRuleEnabled(kind: "override", ruleId: ".m.rule.master", enabled: true) { enabled } }` }),
    rest: () => ({ method: "PUT", path: "/pushrules/global/override/.m.rule.master/enabled", body: { enabled: true } }),
  },
  {
    field: "setPushRuleActions", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { setPushRuleActions(kind: "override", ruleId: ".m.rule.master", actions: []) { enabled } }` }),
    rest: () => ({ method: "PUT", path: "/pushrules/global/override/.m.rule.master/actions", body: { actions: [] } }),
  },
  { field: "pushers", expect: GUEST_FORBIDDEN, graphql: () => ({ query: `{ pushers { pushkey } }` }), rest: () => ({ method: "GET", path: "/pushers" }) },
  {
    field: "setPusher", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { setPusher(input: { kind: "email", appId: "m.email", pushkey: "g@example.org", appDisplayName: "a", deviceDisplayName: "d", lang: "en", data: {} }) }` }),
    rest: () => ({ method: "POST", path: "/pushers/set", body: { kind: "email", app_id: "m.email", pushkey: "g@example.org", app_display_name: "a", device_display_name: "d", lang: "en", data: {} } }),
  },
  {
    field: "deletePusher", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { deletePusher(appId: "m.email", pushkey: "g@example.org") }` }),
    rest: () => ({ method: "POST", path: "/pushers/set", body: { kind: null, app_id: "m.email", pushkey: "g@example.org" } }),
  },
  { field: "notifications", expect: GUEST_FORBIDDEN, graphql: () => ({ query: `{ notifications { notifications { roomId } } }` }), rest: () => ({ method: "GET", path: "/notifications" }) },
  {
    field: "setRoomTag", expect: "ok",
    graphql: (w) => ({ query: `mutation ($r: String!) { setRoomTag(roomId: $r, tag: "u.work", order: 0.5) }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "PUT", path: `/user/${enc(w.guest.user_id)}/rooms/${room(w)}/tags/u.work`, body: { order: 0.5 } }),
  },
  {
    field: "deleteRoomTag", expect: "ok",
    graphql: (w) => ({ query: `mutation ($r: String!) { deleteRoomTag(roomId: $r, tag: "u.work") }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "DELETE", path: `/user/${enc(w.guest.user_id)}/rooms/${room(w)}/tags/u.work` }),
  },
  {
    // The walk's server runs without msc3391_enabled: both faces refuse alike.
    field: "deleteAccountData", expect: "M_UNRECOGNIZED",
    graphql: () => ({ query: `mutation { deleteAccountData(type: "com.example.x") }` }),
    rest: (w) => ({ method: "DELETE", path: `/_matrix/client/unstable/org.matrix.msc3391/user/${enc(w.guest.user_id)}/account_data/com.example.x` }),
  },
  {
    field: "renameDevice", expect: "ok",
    graphql: (w) => ({ query: `mutation ($d: String!) { renameDevice(deviceId: $d, displayName: "guest phone") { deviceId } }`, variables: { d: w.guest.device_id } }),
    rest: (w) => ({ method: "PUT", path: `/devices/${enc(w.guest.device_id)}`, body: { display_name: "guest phone" } }),
  },
  {
    field: "deleteDevices", expect: GUEST_FORBIDDEN,
    graphql: (w) => ({ query: `mutation ($d: String!) { deleteDevices(deviceIds: [$d]) { __typename } }`, variables: { d: w.guest.device_id } }),
    rest: (w) => ({ method: "DELETE", path: `/devices/${enc(w.guest.device_id)}` }),
  },
  {
    field: "knockRoom", expect: GUEST_FORBIDDEN,
    graphql: (w) => ({ query: `mutation ($r: String!) { knockRoom(roomIdOrAlias: $r) { roomId } }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "POST", path: `/knock/${room(w)}`, body: {} }),
  },
  {
    // The guest is in the room: nothing to forget yet, on both faces.
    field: "forgetRoom", expect: "M_UNKNOWN",
    graphql: (w) => ({ query: `mutation ($r: String!) { forgetRoom(roomId: $r) }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "POST", path: `/rooms/${room(w)}/forget`, body: {} }),
  },
  { field: "logoutAll", expect: "ok", graphql: () => ({ query: `mutation { logoutAll }` }), rest: () => ({ method: "POST", path: "/logout/all", body: {} }) },
  {
    field: "changePassword", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { changePassword(newPassword: "n3w-Passw0rd!") { __typename } }` }),
    rest: () => ({ method: "POST", path: "/account/password", body: { new_password: "n3w-Passw0rd!" } }),
  },
  {
    field: "deactivateAccount", expect: GUEST_FORBIDDEN,
    graphql: () => ({ query: `mutation { deactivateAccount { __typename } }` }),
    rest: () => ({ method: "POST", path: "/account/deactivate", body: {} }),
  },
  { field: "usernameAvailable", expect: "ok", graphql: () => ({ query: `{ usernameAvailable(username: "walkfree") }` }), rest: () => ({ method: "GET", path: "/register/available?username=walkfree" }) },
  { field: "capabilities", expect: "ok", graphql: () => ({ query: `{ capabilities { changePassword } }` }), rest: () => ({ method: "GET", path: "/capabilities" }) },
  // The walk's server has login_via_existing_session off: both faces refuse alike.
  { field: "createLoginToken", expect: "M_UNRECOGNIZED", graphql: () => ({ query: `mutation { createLoginToken { __typename } }` }), rest: () => ({ method: "POST", path: "/_matrix/client/v1/login/get_token", body: {} }) },
  {
    field: "registrationTokenValid", expect: "M_FORBIDDEN",
    graphql: () => ({ query: `{ registrationTokenValid(token: "abc") }` }),
    rest: () => ({ method: "GET", path: "/_matrix/client/v1/register/m.login.registration_token/validity?token=abc" }),
  },
  { field: "mediaUploadSizeLimit", expect: "ok", graphql: () => ({ query: `{ mediaUploadSizeLimit }` }), rest: () => ({ method: "GET", path: "/_matrix/client/v1/media/config" }) },
  {
    field: "resolveAlias", expect: "ok",
    graphql: (w) => ({ query: `query ($a: String!) { resolveAlias(alias: $a) { roomId } }`, variables: { a: `#walk:${w.alice.user_id.split(":")[1]}` } }),
    rest: (w) => ({ method: "GET", path: `/directory/room/${enc(`#walk:${w.alice.user_id.split(":")[1]}`)}` }),
  },
  { field: "directoryVisibility", expect: "ok", graphql: (w) => ({ query: `query ($r: String!) { directoryVisibility(roomId: $r) }`, variables: { r: w.roomId } }), rest: (w) => ({ method: "GET", path: `/directory/list/room/${room(w)}` }) },
  {
    field: "eventAtTimestamp", expect: "ok",
    graphql: (w) => ({ query: `query ($r: String!) { eventAtTimestamp(roomId: $r, ts: 0, direction: "f") { eventId } }`, variables: { r: w.roomId } }),
    rest: (w) => ({ method: "GET", path: `/_matrix/client/v1/rooms/${room(w)}/timestamp_to_event?ts=0&dir=f` }),
  },
  { field: "requestOpenIdToken", expect: GUEST_FORBIDDEN, graphql: () => ({ query: `mutation { requestOpenIdToken { accessToken } }` }), rest: (w) => ({ method: "POST", path: `/user/${enc(w.guest.user_id)}/openid/request_token`, body: {} }) },
  { field: "refreshTokens", expect: "M_UNKNOWN_TOKEN", graphql: () => ({ query: `mutation { refreshTokens(refreshToken: "nosuch") { accessToken } }` }), rest: () => ({ method: "POST", path: "/refresh", body: { refresh_token: "nosuch" } }) },
  // The walk's server runs without msc4306_enabled: both faces refuse alike.
  {
    field: "subscribeToThread", expect: "M_UNRECOGNIZED",
    graphql: (w) => ({ query: `mutation ($r: String!, $e: String!) { subscribeToThread(roomId: $r, threadRootId: $e) }`, variables: { r: w.roomId, e: w.aliceMessage } }),
    rest: (w) => ({ method: "PUT", path: `/_matrix/client/unstable/io.element.msc4306/rooms/${room(w)}/thread/${enc(w.aliceMessage)}/subscription`, body: {} }),
  },
  {
    field: "unsubscribeFromThread", expect: "M_UNRECOGNIZED",
    graphql: (w) => ({ query: `mutation ($r: String!, $e: String!) { unsubscribeFromThread(roomId: $r, threadRootId: $e) }`, variables: { r: w.roomId, e: w.aliceMessage } }),
    rest: (w) => ({ method: "DELETE", path: `/_matrix/client/unstable/io.element.msc4306/rooms/${room(w)}/thread/${enc(w.aliceMessage)}/subscription` }),
  },
  {
    field: "whois", expect: GUEST_FORBIDDEN,
    graphql: (w) => ({ query: `query ($u: String!) { whois(userId: $u) { userId } }`, variables: { u: w.alice.user_id } }),
    rest: (w) => ({ method: "GET", path: `/admin/whois/${enc(w.alice.user_id)}` }),
  },
  {
    // Guests may use sliding sync, as Synapse lets them.
    field: "roomList", expect: "ok",
    graphql: () => ({ query: `subscription { roomList(lists: [{ key: "all", ranges: [{ start: 0, end: 9 }], timelineLimit: 1 }]) { lists { count } } }`, subscription: true }),
    rest: () => ({ method: "POST", path: "/_matrix/client/unstable/org.matrix.simplified_msc3575/sync", body: { lists: { all: { ranges: [[0, 9]], timeline_limit: 1 } } } }),
  },
];

describe.each(backends())("guest access on both faces (%s)", (backend) => {
  const { t, users: { alice } } = withServer({ backend, users: ["alice"] });
  let txn = 0;

  /**
   * The room every case uses (made once): public, guests may join and send com.example.guest state; alice's
   * message and the alias #walk in it. Refused operations change nothing, allowed ones nothing others need.
   */
  let shared: Promise<Omit<World, "guest" | "guestMessage" | "txn">> | undefined;
  const world = () => (shared ??= makeWorld());
  async function makeWorld(): Promise<Omit<World, "guest" | "guestMessage" | "txn">> {
    const roomId = await createRoom(t, alice, {
      preset: "public_chat",
      room_alias_name: "walk",
      initial_state: [{ type: "m.room.guest_access", content: { guest_access: "can_join" } }],
      power_level_content_override: { events: { "com.example.guest": 0 } },
    });
    const sent = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/w${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body: "hello" } });
    return { roomId, alice, aliceMessage: sent.json.event_id };
  }

  /** A new guest, joined to the room, with a message of their own in it. */
  async function guestIn(roomId: string): Promise<{ guest: Session; guestMessage: string }> {
    const guest = (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json as Session;
    const joined = await t.call("POST", `${V3}/rooms/${enc(roomId)}/join`, { token: guest.access_token, body: {} });
    expect(joined.status, JSON.stringify(joined.json)).toBe(200);
    const sent = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/g${++txn}`, { token: guest.access_token, body: { msgtype: "m.text", body: "mine" } });
    return { guest, guestMessage: sent.json.event_id };
  }

  async function viaRest(w: World, c: Case): Promise<string> {
    const { method, path, body } = c.rest(w);
    const res = await t.call(method, path.startsWith("/_matrix/") ? path : `${V3}${path}`, { token: w.guest.access_token, body });
    return res.status < 300 ? "ok" : `${res.json?.errcode}`;
  }

  /** "ok", the errcode, or the message of an error without one (a malformed case: it fails the comparison). */
  const outcome = (r: { errors?: readonly { message: string; extensions?: Record<string, unknown> }[] | null }) =>
    r.errors?.length ? (errcode(r) ?? `no errcode: ${r.errors[0]!.message}`) : "ok";

  async function viaGraphql(w: World, c: Case): Promise<string> {
    const { query, variables, subscription } = c.graphql(w);
    if (!subscription) {
      return outcome((await gql(t, query, variables, w.guest.access_token)).body);
    }
    const client = wsClient(t, { authorization: `Bearer ${w.guest.access_token}` });
    try {
      const sub = subscribe(client, query, variables ?? {});
      await sub.until(1);
      sub.stop();
      return outcome(sub.results[0]);
    } finally {
      await client.dispose();
    }
  }

  it("every root field of the schema has a case with its REST twin", async () => {
    const schema = await buildWeftSchema();
    const roots = [schema.getMutationType(), schema.getQueryType(), schema.getSubscriptionType()].flatMap((type) => Object.keys(type?.getFields() ?? {}));
    expect(new Set(CASES.map((c) => c.field))).toEqual(new Set(roots));
  });

  it.each(CASES.map((c, i) => [`${c.field} (${c.expect})`, i] as const))("%s: the same answer from both faces", async (_name, i) => {
    const c = CASES[i]!;
    const base = await world();
    const restWorld: World = { ...base, ...(await guestIn(base.roomId)), txn: `t${++txn}` };
    const gqlWorld: World = { ...base, ...(await guestIn(base.roomId)), txn: `t${++txn}` };
    const [rest, graphql] = [await viaRest(restWorld, c), await viaGraphql(gqlWorld, c)];
    expect({ rest, graphql }).toEqual({ rest: c.expect, graphql: c.expect });
  });
});
