// The REST → GraphQL coverage table (issue 39): every client-server REST operation the server serves
// (method + route template, as registered under its canonical prefix: /_matrix/client/{v3,v1,unstable},
// /_matrix/media/v3 — the r0, /_proto and media v1/r0 aliases are the same routes), and its GraphQL
// counterpart as schema coordinates (`Query.room`, `Room.timeline`: the root field first, then the nested
// field that answers), or a written reason why there is none. "not yet" marks what GraphQL still lacks.
// test/graphql/coverage.test.ts fails when a registered client route has no row, a row names no
// registered route, or a coordinate is not in the schema; docs/graphql-coverage.md is rendered from this
// table (`npm run coverage:graphql`) and checked by the same test.

export type Counterpart =
  /** Schema coordinates, root field first. */
  | { graphql: readonly string[]; note?: string }
  /** No counterpart, and why. */
  | { none: string };

const gql = (...graphql: string[]): Counterpart => ({ graphql });
const gqlNote = (note: string, ...graphql: string[]): Counterpart => ({ graphql, note });
const none = (reason: string): Counterpart => ({ none: reason });

/** The reason of an operation GraphQL should have and does not have yet. */
export const NOT_YET = "not yet";
const notYet = (what?: string): Counterpart => none(what ? `${NOT_YET}: ${what}` : NOT_YET);

const DEPRECATED_SYNC = none("deprecated by the spec in favour of /sync: Subscription.syncUpdates replaces it");
const BROWSER_PAGE = none("a page or link a browser opens (email link, fallback page): REST-only by spec");
const OAUTH_DISCOVERY = none("OAuth 2.0 server discovery (MSC2965), read before a client has a token: REST-only by spec");
const APPSERVICE = none("application-service API, called with the application service's token: REST-only");
const MEDIA = (...extra: string[]) => gqlNote("Query.media answers signed URLs an <img> can load without a token", "Query.media", ...extra);
const UPLOAD = gqlNote("createUpload returns a signed URL the client PUTs the bytes to (the REST face's upload route)", "Mutation.createUpload");

const C3 = "/_matrix/client/v3";
const C1 = "/_matrix/client/v1";
const CU = "/_matrix/client/unstable";
const M3 = "/_matrix/media/v3";

export const REST_TO_GRAPHQL: Readonly<Record<string, Counterpart>> = {
  // Discovery and capabilities
  "GET /_matrix/client/versions": none("version discovery comes before any API is chosen (a client learns of /graphql from it): REST-only"),
  [`GET ${C3}/capabilities`]: gql("Query.capabilities"),
  [`GET ${C1}/auth_metadata`]: OAUTH_DISCOVERY,
  [`GET ${CU}/org.matrix.msc2965/auth_metadata`]: OAUTH_DISCOVERY,
  [`GET ${CU}/org.matrix.msc2965/auth_issuer`]: OAUTH_DISCOVERY,

  // Login, registration, sessions
  [`GET ${C3}/login`]: gql("Query.loginFlows"),
  [`POST ${C3}/login`]: gql("Mutation.login"),
  [`GET ${C3}/login/sso/redirect`]: gqlNote("the URL to open; the redirect itself is a browser navigation", "Query.ssoRedirectUrl"),
  [`GET ${C3}/login/sso/redirect/:idpId`]: gqlNote("the URL to open; the redirect itself is a browser navigation", "Query.ssoRedirectUrl"),
  [`POST ${C1}/login/get_token`]: gql("Mutation.createLoginToken"),
  [`POST ${C3}/logout`]: gql("Mutation.logout"),
  [`POST ${C3}/logout/all`]: gql("Mutation.logoutAll"),
  [`POST ${C3}/refresh`]: gql("Mutation.refreshTokens"),
  [`POST ${C1}/refresh`]: gql("Mutation.refreshTokens"),
  [`POST ${C3}/register`]: gql("Mutation.register"),
  [`GET ${C3}/register/available`]: gql("Query.usernameAvailable"),
  [`GET ${C1}/register/m.login.registration_token/validity`]: gql("Query.registrationTokenValid"),
  [`POST ${C3}/register/email/requestToken`]: gql("Mutation.requestEmailToken"),
  [`POST ${C3}/register/msisdn/requestToken`]: notYet("phone numbers"),
  [`GET ${CU}/registration/email/submit_token`]: BROWSER_PAGE,
  [`GET ${C3}/auth/:stage/fallback/web`]: BROWSER_PAGE,
  [`GET ${C3}/account/whoami`]: gql("Query.viewer", "Viewer.userId", "Viewer.deviceId", "Viewer.isGuest"),
  [`POST ${C3}/account/deactivate`]: gql("Mutation.deactivateAccount"),
  [`POST ${C3}/account/password`]: gqlNote("the signed-in change; the reset by a validated e-mail address (no token) is not yet in GraphQL", "Mutation.changePassword"),
  [`POST ${C3}/account/password/email/requestToken`]: gql("Mutation.requestEmailToken"),
  [`POST ${C3}/account/password/msisdn/requestToken`]: notYet("phone numbers"),
  [`POST ${C3}/user/:userId/openid/request_token`]: gql("Mutation.requestOpenIdToken"),
  [`POST ${CU}/org.matrix.msc4108/rendezvous`]: notYet("QR-code login rendezvous (MSC4108)"),

  // Third-party identifiers
  [`GET ${C3}/account/3pid`]: gql("Query.viewer", "Viewer.threepids"),
  [`GET ${CU}/account/3pid`]: gql("Query.viewer", "Viewer.threepids"),
  [`POST ${C3}/account/3pid`]: notYet("the deprecated 3PID add-and-bind"),
  [`POST ${CU}/account/3pid`]: notYet("the deprecated 3PID add-and-bind"),
  [`POST ${C3}/account/3pid/add`]: gql("Mutation.addThreepid"),
  [`POST ${CU}/account/3pid/add`]: gql("Mutation.addThreepid"),
  [`POST ${C3}/account/3pid/delete`]: gql("Mutation.deleteThreepid"),
  [`POST ${CU}/account/3pid/delete`]: gql("Mutation.deleteThreepid"),
  [`POST ${C3}/account/3pid/bind`]: notYet("identity-server binding"),
  [`POST ${CU}/account/3pid/bind`]: notYet("identity-server binding"),
  [`POST ${C3}/account/3pid/unbind`]: notYet("identity-server binding"),
  [`POST ${CU}/account/3pid/unbind`]: notYet("identity-server binding"),
  [`POST ${C3}/account/3pid/email/requestToken`]: gql("Mutation.requestEmailToken"),
  [`POST ${C3}/account/3pid/msisdn/requestToken`]: notYet("phone numbers"),
  [`GET ${CU}/add_threepid/email/submit_token`]: BROWSER_PAGE,

  // Account validity, moderation, admin
  [`GET ${C3}/account_validity/renew`]: BROWSER_PAGE,
  [`GET ${C1}/account_validity/renew`]: BROWSER_PAGE,
  [`GET ${CU}/account_validity/renew`]: BROWSER_PAGE,
  [`POST ${C3}/account_validity/send_mail`]: notYet("renewal mail (Viewer.accountValidity reads the expiry)"),
  [`POST ${C1}/account_validity/send_mail`]: notYet("renewal mail (Viewer.accountValidity reads the expiry)"),
  [`POST ${CU}/account_validity/send_mail`]: notYet("renewal mail (Viewer.accountValidity reads the expiry)"),
  [`GET ${C1}/admin/lock/:userId`]: gql("Query.accountModeration", "AccountModeration.locked"),
  [`GET ${CU}/uk.timedout.msc4323/admin/lock/:userId`]: gql("Query.accountModeration", "AccountModeration.locked"),
  [`PUT ${C1}/admin/lock/:userId`]: gql("Mutation.setAccountLocked"),
  [`PUT ${CU}/uk.timedout.msc4323/admin/lock/:userId`]: gql("Mutation.setAccountLocked"),
  [`GET ${C1}/admin/suspend/:userId`]: gql("Query.accountModeration", "AccountModeration.suspended"),
  [`GET ${CU}/uk.timedout.msc4323/admin/suspend/:userId`]: gql("Query.accountModeration", "AccountModeration.suspended"),
  [`PUT ${C1}/admin/suspend/:userId`]: gql("Mutation.setAccountSuspended"),
  [`PUT ${CU}/uk.timedout.msc4323/admin/suspend/:userId`]: gql("Mutation.setAccountSuspended"),
  [`GET ${C3}/admin/whois/:userId`]: gql("Query.whois"),
  [`POST ${C1}/appservice/:appserviceId/ping`]: APPSERVICE,

  // Devices
  [`GET ${C3}/devices`]: gql("Query.viewer", "Viewer.devices"),
  [`GET ${C3}/devices/:deviceId`]: gql("Query.viewer", "Viewer.devices"),
  [`PUT ${C3}/devices/:deviceId`]: gqlNote("renaming; creating a device is for application services (REST-only)", "Mutation.renameDevice"),
  [`DELETE ${C3}/devices/:deviceId`]: gql("Mutation.deleteDevices"),
  [`POST ${C3}/delete_devices`]: gql("Mutation.deleteDevices"),

  // End-to-end encryption
  [`POST ${C3}/keys/upload`]: gql("Mutation.uploadKeys"),
  [`POST ${C3}/keys/query`]: gql("Query.queryKeys"),
  [`POST ${C3}/keys/claim`]: gql("Mutation.claimKeys"),
  [`GET ${C3}/keys/changes`]: gqlNote("device list changes arrive in the subscription; resuming from a position gives those since it", "Subscription.syncUpdates", "SyncUpdate.deviceLists"),
  [`POST ${C3}/keys/device_signing/upload`]: gql("Mutation.uploadCrossSigningKeys"),
  [`POST ${CU}/keys/device_signing/upload`]: gql("Mutation.uploadCrossSigningKeys"),
  [`POST ${C3}/keys/signatures/upload`]: gql("Mutation.uploadSignatures"),
  [`POST ${CU}/keys/signatures/upload`]: gql("Mutation.uploadSignatures"),
  [`PUT ${C3}/sendToDevice/:eventType/:txnId`]: gql("Mutation.sendToDevice"),
  [`POST ${C3}/room_keys/version`]: gql("Mutation.createKeyBackupVersion"),
  [`GET ${C3}/room_keys/version`]: gql("Query.keyBackup"),
  [`GET ${C3}/room_keys/version/:version`]: gql("Query.keyBackup"),
  [`PUT ${C3}/room_keys/version/:version`]: gql("Mutation.updateKeyBackupVersion"),
  [`DELETE ${C3}/room_keys/version/:version`]: gql("Mutation.deleteKeyBackupVersion"),
  [`GET ${C3}/room_keys/keys`]: gql("Query.roomKeys"),
  [`GET ${C3}/room_keys/keys/:roomId`]: gql("Query.roomKeys"),
  [`GET ${C3}/room_keys/keys/:roomId/:sessionId`]: gql("Query.roomKeys"),
  [`PUT ${C3}/room_keys/keys`]: gql("Mutation.putRoomKeys"),
  [`PUT ${C3}/room_keys/keys/:roomId`]: gql("Mutation.putRoomKeys"),
  [`PUT ${C3}/room_keys/keys/:roomId/:sessionId`]: gql("Mutation.putRoomKeys"),
  [`DELETE ${C3}/room_keys/keys`]: gql("Mutation.deleteRoomKeys"),
  [`DELETE ${C3}/room_keys/keys/:roomId`]: gql("Mutation.deleteRoomKeys"),
  [`DELETE ${C3}/room_keys/keys/:roomId/:sessionId`]: gql("Mutation.deleteRoomKeys"),

  // Sync
  [`GET ${C3}/sync`]: gql("Subscription.syncUpdates"),
  [`POST ${CU}/org.matrix.simplified_msc3575/sync`]: gql("Subscription.roomList"),
  [`GET ${C3}/events`]: DEPRECATED_SYNC,
  [`GET ${C3}/initialSync`]: DEPRECATED_SYNC,
  [`GET ${C3}/rooms/:roomId/initialSync`]: DEPRECATED_SYNC,
  [`POST ${C3}/user/:userId/filter`]: none("filters: a GraphQL query selects what it wants itself, and syncUpdates takes its filter inline"),
  [`GET ${C3}/user/:userId/filter/:filterId`]: none("filters: a GraphQL query selects what it wants itself, and syncUpdates takes its filter inline"),

  // Rooms: creation, membership
  [`POST ${C3}/createRoom`]: gql("Mutation.createRoom"),
  [`GET ${C3}/joined_rooms`]: gql("Query.viewer", "Viewer.rooms"),
  [`POST ${C3}/join/:roomIdOrAlias`]: gql("Mutation.joinRoom"),
  [`POST ${C3}/rooms/:roomId/join`]: gql("Mutation.joinRoom"),
  [`POST ${C3}/knock/:roomIdOrAlias`]: gql("Mutation.knockRoom"),
  [`POST ${C3}/rooms/:roomId/invite`]: gql("Mutation.invite"),
  [`POST ${C3}/rooms/:roomId/leave`]: gql("Mutation.leaveRoom"),
  [`POST ${C3}/rooms/:roomId/forget`]: gql("Mutation.forgetRoom"),
  [`POST ${C3}/rooms/:roomId/kick`]: gql("Mutation.kick"),
  [`POST ${C3}/rooms/:roomId/ban`]: gql("Mutation.ban"),
  [`POST ${C3}/rooms/:roomId/unban`]: gql("Mutation.unban"),
  [`POST ${C3}/rooms/:roomId/upgrade`]: gql("Mutation.upgradeRoom"),
  [`GET ${C3}/rooms/:roomId/members`]: gql("Query.room", "Room.members"),
  [`GET ${C3}/rooms/:roomId/joined_members`]: gql("Query.room", "Room.members"),

  // Rooms: events and state
  [`GET ${C3}/rooms/:roomId/messages`]: gql("Query.room", "Room.timeline"),
  [`GET ${C3}/rooms/:roomId/event/:eventId`]: gql("Query.room", "Room.event"),
  [`GET ${C3}/rooms/:roomId/context/:eventId`]: gql("Query.room", "Room.eventContext"),
  [`GET ${C1}/rooms/:roomId/timestamp_to_event`]: gql("Query.eventAtTimestamp"),
  [`PUT ${C3}/rooms/:roomId/send/:eventType/:txnId`]: gql("Mutation.sendMessage"),
  [`POST ${C3}/rooms/:roomId/send/:eventType`]: gql("Mutation.sendMessage"),
  [`GET ${C3}/rooms/:roomId/state`]: gql("Query.room", "Room.state"),
  [`GET ${C3}/rooms/:roomId/state/:eventType`]: gql("Query.room", "Room.state"),
  [`GET ${C3}/rooms/:roomId/state/:eventType/`]: gql("Query.room", "Room.state"),
  [`GET ${C3}/rooms/:roomId/state/:eventType/:stateKey`]: gql("Query.room", "Room.state"),
  [`PUT ${C3}/rooms/:roomId/state/:eventType`]: gql("Mutation.sendStateEvent"),
  [`PUT ${C3}/rooms/:roomId/state/:eventType/`]: gql("Mutation.sendStateEvent"),
  [`PUT ${C3}/rooms/:roomId/state/:eventType/:stateKey`]: gql("Mutation.sendStateEvent"),
  [`PUT ${C3}/rooms/:roomId/redact/:eventId/:txnId`]: gql("Mutation.redactEvent"),
  [`POST ${C3}/rooms/:roomId/redact/:eventId`]: gql("Mutation.redactEvent"),
  [`GET ${C3}/rooms/:roomId/aliases`]: gql("Query.room", "Room.aliases"),
  [`GET ${C1}/rooms/:roomId/relations/:eventId`]: gql("Query.room", "Room.event", "Event.relations"),
  [`GET ${C1}/rooms/:roomId/relations/:eventId/:relType`]: gql("Query.room", "Room.event", "Event.relations"),
  [`GET ${C1}/rooms/:roomId/relations/:eventId/:relType/:eventType`]: gql("Query.room", "Room.event", "Event.relations"),
  [`GET ${C1}/rooms/:roomId/threads`]: gql("Query.room", "Room.threads"),
  [`GET ${CU}/io.element.msc4306/rooms/:roomId/thread/:threadRootId/subscription`]: gql("Query.room", "Room.threadSubscription"),
  [`PUT ${CU}/io.element.msc4306/rooms/:roomId/thread/:threadRootId/subscription`]: gql("Mutation.subscribeToThread"),
  [`DELETE ${CU}/io.element.msc4306/rooms/:roomId/thread/:threadRootId/subscription`]: gql("Mutation.unsubscribeFromThread"),
  [`GET ${CU}/io.element.msc4308/thread_subscriptions`]: notYet("thread subscriptions (MSC4308)"),
  [`GET ${CU}/org.matrix.msc4140/delayed_events`]: notYet("delayed events (MSC4140)"),
  [`GET ${CU}/org.matrix.msc4140/delayed_events/:delayId`]: notYet("delayed events (MSC4140)"),
  [`POST ${CU}/org.matrix.msc4140/delayed_events/:delayId`]: notYet("delayed events (MSC4140)"),
  [`POST ${CU}/org.matrix.msc4140/delayed_events/:delayId/cancel`]: notYet("delayed events (MSC4140)"),
  [`POST ${CU}/org.matrix.msc4140/delayed_events/:delayId/restart`]: notYet("delayed events (MSC4140)"),
  [`POST ${CU}/org.matrix.msc4140/delayed_events/:delayId/send`]: notYet("delayed events (MSC4140)"),
  [`GET ${CU}/org.matrix.msc4143/rtc/transports`]: notYet("MatrixRTC transports (MSC4143)"),

  // Receipts, typing, presence
  [`POST ${C3}/rooms/:roomId/receipt/:receiptType/:eventId`]: gql("Mutation.markRead"),
  [`POST ${C3}/rooms/:roomId/read_markers`]: gql("Mutation.markRead"),
  [`PUT ${C3}/rooms/:roomId/typing/:userId`]: gql("Mutation.setTyping"),
  [`GET ${C3}/presence/:userId/status`]: gql("Query.presence"),
  [`PUT ${C3}/presence/:userId/status`]: gql("Mutation.setPresence"),

  // Reports
  [`POST ${C3}/rooms/:roomId/report`]: gql("Mutation.reportRoom"),
  [`POST ${C3}/rooms/:roomId/report/:eventId`]: gql("Mutation.reportEvent"),
  [`POST ${C3}/users/:userId/report`]: gql("Mutation.reportUser"),

  // Spaces, summaries, directory, search
  [`GET ${C1}/rooms/:roomId/hierarchy`]: gql("Query.spaceHierarchy"),
  [`GET ${C1}/room_summary/:roomIdOrAlias`]: gql("Query.roomSummary"),
  [`GET ${CU}/im.nheko.summary/rooms/:roomIdOrAlias/summary`]: gql("Query.roomSummary"),
  [`GET ${CU}/im.nheko.summary/summary/:roomIdOrAlias`]: gql("Query.roomSummary"),
  [`GET ${C3}/publicRooms`]: gql("Query.publicRooms"),
  [`POST ${C3}/publicRooms`]: gql("Query.publicRooms"),
  [`GET ${C3}/directory/list/room/:roomId`]: gql("Query.directoryVisibility"),
  [`PUT ${C3}/directory/list/room/:roomId`]: gql("Mutation.setRoomDirectoryVisibility"),
  [`PUT ${C3}/directory/list/appservice/:networkId/:roomId`]: APPSERVICE,
  [`DELETE ${C3}/directory/list/appservice/:networkId/:roomId`]: APPSERVICE,
  [`GET ${C3}/directory/room/:roomAlias`]: gql("Query.resolveAlias"),
  [`PUT ${C3}/directory/room/:roomAlias`]: gql("Mutation.createAlias"),
  [`DELETE ${C3}/directory/room/:roomAlias`]: gql("Mutation.deleteAlias"),
  [`POST ${C3}/search`]: gql("Query.searchMessages"),
  [`POST ${C3}/user_directory/search`]: gql("Query.searchUsers"),
  [`GET ${C1}/mutual_rooms`]: gql("Query.mutualRooms"),
  [`GET ${CU}/uk.half-shot.msc2666/user/mutual_rooms`]: gql("Query.mutualRooms"),
  [`GET ${C3}/thirdparty/protocols`]: notYet("third-party networks"),
  [`GET ${C3}/thirdparty/protocol/:protocol`]: notYet("third-party networks"),
  [`GET ${C3}/thirdparty/location`]: notYet("third-party networks"),
  [`GET ${C3}/thirdparty/location/:protocol`]: notYet("third-party networks"),
  [`GET ${C3}/thirdparty/user`]: notYet("third-party networks"),
  [`GET ${C3}/thirdparty/user/:protocol`]: notYet("third-party networks"),

  // Profile
  [`GET ${C3}/profile/:userId`]: gql("Query.profile"),
  [`GET ${C3}/profile/:userId/displayname`]: gql("Query.profile", "UserProfile.displayName"),
  [`PUT ${C3}/profile/:userId/displayname`]: gql("Mutation.setDisplayName"),
  [`DELETE ${C3}/profile/:userId/displayname`]: gql("Mutation.deleteProfileField"),
  [`GET ${C3}/profile/:userId/avatar_url`]: gql("Query.profile", "UserProfile.avatarUrl"),
  [`PUT ${C3}/profile/:userId/avatar_url`]: gql("Mutation.setAvatarUrl"),
  [`DELETE ${C3}/profile/:userId/avatar_url`]: gql("Mutation.deleteProfileField"),
  [`GET ${C3}/profile/:userId/:keyName`]: gql("Query.profile", "UserProfile.fields"),
  [`PUT ${C3}/profile/:userId/:keyName`]: gql("Mutation.setProfileField"),
  [`DELETE ${C3}/profile/:userId/:keyName`]: gql("Mutation.deleteProfileField"),

  // Account data and tags
  [`GET ${C3}/user/:userId/account_data/:type`]: gql("Query.viewer", "Viewer.accountData"),
  [`PUT ${C3}/user/:userId/account_data/:type`]: gql("Mutation.setAccountData"),
  [`GET ${C3}/user/:userId/rooms/:roomId/account_data/:type`]: gql("Query.viewer", "Viewer.accountData"),
  [`PUT ${C3}/user/:userId/rooms/:roomId/account_data/:type`]: gql("Mutation.setAccountData"),
  [`DELETE ${CU}/org.matrix.msc3391/user/:userId/account_data/:type`]: gql("Mutation.deleteAccountData"),
  [`DELETE ${CU}/org.matrix.msc3391/user/:userId/rooms/:roomId/account_data/:type`]: gql("Mutation.deleteAccountData"),
  [`GET ${C3}/user/:userId/rooms/:roomId/tags`]: gql("Query.room", "Room.tags"),
  [`PUT ${C3}/user/:userId/rooms/:roomId/tags/:tag`]: gql("Mutation.setRoomTag"),
  [`DELETE ${C3}/user/:userId/rooms/:roomId/tags/:tag`]: gql("Mutation.deleteRoomTag"),

  // Push
  [`GET ${C3}/notifications`]: gql("Query.notifications"),
  [`GET ${C3}/pushers`]: gql("Query.pushers"),
  [`POST ${C3}/pushers/set`]: gql("Mutation.setPusher", "Mutation.deletePusher"),
  [`GET ${C3}/pushrules/`]: gql("Query.pushRules"),
  [`GET ${C3}/pushrules/:scope`]: gqlNote("the global scope, the only one", "Query.pushRules"),
  [`PUT ${C3}/pushrules/:scope`]: none("no operation: a path without a rule id is 400 M_UNRECOGNIZED on REST too"),
  [`DELETE ${C3}/pushrules/:scope`]: none("no operation: a path without a rule id is 400 M_UNRECOGNIZED on REST too"),
  [`GET ${C3}/pushrules/:scope/:kind`]: gqlNote("one kind's rules are a field of the ruleset", "Query.pushRules"),
  [`PUT ${C3}/pushrules/:scope/:kind`]: none("no operation: a path without a rule id is 400 M_UNRECOGNIZED on REST too"),
  [`DELETE ${C3}/pushrules/:scope/:kind`]: none("no operation: a path without a rule id is 400 M_UNRECOGNIZED on REST too"),
  [`GET ${C3}/pushrules/:scope/:kind/:ruleId`]: gql("Query.pushRule"),
  [`PUT ${C3}/pushrules/:scope/:kind/:ruleId`]: gql("Mutation.setPushRule"),
  [`DELETE ${C3}/pushrules/:scope/:kind/:ruleId`]: gql("Mutation.deletePushRule"),
  [`GET ${C3}/pushrules/:scope/:kind/:ruleId/:attr`]: gql("Query.pushRule", "PushRule.enabled", "PushRule.actions"),
  [`PUT ${C3}/pushrules/:scope/:kind/:ruleId/:attr`]: gql("Mutation.setPushRuleEnabled", "Mutation.setPushRuleActions"),

  // Media
  [`GET ${M3}/config`]: gql("Query.mediaUploadSizeLimit"),
  [`GET ${C1}/media/config`]: gql("Query.mediaUploadSizeLimit"),
  [`POST ${M3}/upload`]: UPLOAD,
  [`POST ${M3}/create`]: UPLOAD,
  [`PUT ${M3}/upload/:serverName/:mediaId`]: UPLOAD,
  [`GET ${M3}/download/:serverName/:mediaId`]: MEDIA("MediaFile.httpUrl"),
  [`GET ${M3}/download/:serverName/:mediaId/:fileName`]: MEDIA("MediaFile.httpUrl"),
  [`GET ${C1}/media/download/:serverName/:mediaId`]: MEDIA("MediaFile.httpUrl"),
  [`GET ${C1}/media/download/:serverName/:mediaId/:fileName`]: MEDIA("MediaFile.httpUrl"),
  [`GET ${M3}/thumbnail/:serverName/:mediaId`]: MEDIA("MediaFile.thumbnailHttpUrl"),
  [`GET ${C1}/media/thumbnail/:serverName/:mediaId`]: MEDIA("MediaFile.thumbnailHttpUrl"),
  [`GET ${M3}/preview_url`]: gql("Query.urlPreview"),
  [`GET ${C1}/media/preview_url`]: gql("Query.urlPreview"),
};

/** Whether a row is one GraphQL still lacks. */
export function isNotYet(c: Counterpart): boolean {
  return "none" in c && (c.none === NOT_YET || c.none.startsWith(`${NOT_YET}:`));
}

/** docs/graphql-coverage.md: the table as Markdown, with counts. */
export function renderCoverage(table: Readonly<Record<string, Counterpart>> = REST_TO_GRAPHQL): string {
  const keys = Object.keys(table).sort((a, b) => {
    const [ma, pa] = a.split(" ") as [string, string];
    const [mb, pb] = b.split(" ") as [string, string];
    return pa === pb ? ma.localeCompare(mb) : pa.localeCompare(pb);
  });
  const rows = keys.map((k) => [k, table[k]!] as const);
  const covered = rows.filter(([, c]) => "graphql" in c).length;
  const notYet = rows.filter(([, c]) => isNotYet(c)).length;
  const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("<", "&lt;");
  const lines = [
    "# REST → GraphQL coverage",
    "",
    "Generated from `src/graphql/coverage.ts` by `npm run coverage:graphql`; `test/graphql/coverage.test.ts` fails when a",
    "client-server REST route the server registers has no row here, when a row names no registered route, or when a",
    "row names a field the schema (`schema.graphql`) lacks. Paths are the routes' canonical templates: the `r0`,",
    "`/_proto` and media `v1`/`r0` aliases are the same operations. GraphQL counterparts are schema coordinates, the",
    "root field first; \"not yet\" marks what GraphQL still lacks.",
    "",
    `${rows.length} operations: ${covered} with a GraphQL counterpart, ${notYet} not yet, ${rows.length - covered - notYet} REST-only by design.`,
    "",
    "| Method | Path | GraphQL | Notes |",
    "|---|---|---|---|",
  ];
  for (const [key, c] of rows) {
    const [method, path] = key.split(" ") as [string, string];
    const gqlCell = "graphql" in c ? c.graphql.map((f) => `\`${f}\``).join(" → ") : "—";
    const note = "graphql" in c ? (c.note ?? "") : c.none;
    lines.push(`| ${method} | \`${path}\` | ${gqlCell} | ${cell(note)} |`);
  }
  return `${lines.join("\n")}\n`;
}
