// Every REST route group of the server, in one list: the table of contents of the REST face.
import type { FastifyInstance } from "fastify";
import type { Services } from "../domain/services.ts";
import { accountRoutes } from "./client/accounts.ts";
import { accountValidityRoutes } from "./client/account-validity.ts";
import { serverInfoRoutes } from "./client/server-info.ts";
import { keyRoutes, wellKnownRoutes } from "./keys.ts";
import { eventReportRoutes, mediaAdminRoutes, registrationTokenRoutes, roomAdminRoutes, serverNoticeRoutes, sharedSecretRegistrationRoutes, userAdminRoutes } from "./admin/index.ts";
import { deviceRoutes } from "./client/devices.ts";
import { profileRoutes } from "./client/profile.ts";
import { capabilityRoutes } from "./client/capabilities.ts";
import { roomRoutes } from "./client/rooms.ts";
import { searchRoutes } from "./client/search.ts";
import { relationRoutes } from "./client/relations.ts";
import { spaceRoutes } from "./client/spaces.ts";
import { reportRoutes } from "./client/reports.ts";
import { syncRoutes } from "./client/sync.ts";
import { directoryRoutes } from "./client/directory.ts";
import { e2eKeyRoutes } from "./client/keys.ts";
import { keyBackupRoutes } from "./client/key-backup.ts";
import { toDeviceRoutes } from "./client/to-device.ts";
import { ephemeralRoutes } from "./client/ephemeral.ts";
import { federationVersionRoutes } from "./federation/version.ts";
import { federationQueryRoutes } from "./federation/query.ts";
import { federationDirectoryRoutes } from "./federation/directory.ts";
import { federationSendRoutes } from "./federation/send.ts";
import { federationEventRoutes } from "./federation/events.ts";
import { federationBackfillRoutes } from "./federation/backfill.ts";
import { federationMediaRoutes } from "./federation/media.ts";
import { federationMembershipRoutes } from "./federation/membership.ts";
import { federationE2eeRoutes } from "./federation/e2ee.ts";
import { federationThirdPartyInviteRoutes } from "./federation/third-party-invites.ts";
import { pushRoutes } from "./client/push.ts";
import { mediaRoutes } from "./media/routes.ts";
import { openIdRoutes } from "./client/openid.ts";
import { federationOpenIdRoutes } from "./federation/openid.ts";
import { threePidRoutes } from "./client/threepids.ts";
import { appServiceRoutes } from "./client/appservices.ts";
import { ssoRoutes } from "./client/sso.ts";
import { emailValidationRoutes } from "./client/email-validation.ts";
import { delayedEventRoutes } from "./client/delayed-events.ts";
import { threadSubscriptionRoutes } from "./client/thread-subscriptions.ts";
import { slidingSyncRoutes } from "./client/sliding-sync.ts";
import { accountModerationRoutes } from "./client/account-moderation.ts";
import { mutualRoomRoutes } from "./client/mutual-rooms.ts";
import { rendezvousRoutes } from "./client/rendezvous.ts";
import { authMetadataRoutes } from "./client/auth-metadata.ts";
import { masRoutes } from "./mas.ts";
import { oauthRoutes } from "./client/oauth.ts";
import { oauthAuthorizeRoutes } from "./client/oauth-authorize.ts";
import { oauthDeviceRoutes } from "./client/oauth-device.ts";
import { oauthAccountRoutes } from "./client/oauth-account.ts";
import { oauthSsoRoutes } from "./client/oauth-sso.ts";
import { internalRoutes } from "./cluster.ts";

export const ROUTE_GROUPS: ((app: FastifyInstance, s: Services) => void)[] = [
  serverInfoRoutes,
  authMetadataRoutes,
  masRoutes,
  accountRoutes,
  keyRoutes,
  wellKnownRoutes,
  sharedSecretRegistrationRoutes,
  registrationTokenRoutes,
  deviceRoutes,
  profileRoutes,
  capabilityRoutes,
  roomRoutes,
  delayedEventRoutes,
  searchRoutes,
  relationRoutes,
  threadSubscriptionRoutes,
  spaceRoutes,
  reportRoutes,
  eventReportRoutes,
  userAdminRoutes,
  accountValidityRoutes,
  roomAdminRoutes,
  serverNoticeRoutes,
  syncRoutes,
  slidingSyncRoutes,
  accountModerationRoutes,
  mutualRoomRoutes,
  directoryRoutes,
  e2eKeyRoutes,
  keyBackupRoutes,
  toDeviceRoutes,
  ephemeralRoutes,
  federationVersionRoutes,
  federationQueryRoutes,
  federationDirectoryRoutes,
  federationSendRoutes,
  federationEventRoutes,
  federationBackfillRoutes,
  federationMediaRoutes,
  federationMembershipRoutes,
  federationE2eeRoutes,
  federationThirdPartyInviteRoutes,
  pushRoutes,
  mediaRoutes,
  mediaAdminRoutes,
  openIdRoutes,
  federationOpenIdRoutes,
  threePidRoutes,
  appServiceRoutes,
  ssoRoutes,
  emailValidationRoutes,
  rendezvousRoutes,
  oauthRoutes,
  oauthAuthorizeRoutes,
  oauthDeviceRoutes,
  oauthAccountRoutes,
  oauthSsoRoutes,
  internalRoutes,
];
