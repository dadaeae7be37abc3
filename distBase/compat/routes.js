import { accountRoutes } from "./client/accounts.js";
import { accountValidityRoutes } from "./client/account-validity.js";
import { serverInfoRoutes } from "./client/server-info.js";
import { keyRoutes, wellKnownRoutes } from "./keys.js";
import { eventReportRoutes, mediaAdminRoutes, registrationTokenRoutes, roomAdminRoutes, sharedSecretRegistrationRoutes, userAdminRoutes } from "./admin/index.js";
import { deviceRoutes } from "./client/devices.js";
import { profileRoutes } from "./client/profile.js";
import { capabilityRoutes } from "./client/capabilities.js";
import { roomRoutes } from "./client/rooms.js";
import { searchRoutes } from "./client/search.js";
import { relationRoutes } from "./client/relations.js";
import { spaceRoutes } from "./client/spaces.js";
import { reportRoutes } from "./client/reports.js";
import { syncRoutes } from "./client/sync.js";
import { directoryRoutes } from "./client/directory.js";
import { e2eKeyRoutes } from "./client/keys.js";
import { keyBackupRoutes } from "./client/key-backup.js";
import { toDeviceRoutes } from "./client/to-device.js";
import { ephemeralRoutes } from "./client/ephemeral.js";
import { federationVersionRoutes } from "./federation/version.js";
import { federationQueryRoutes } from "./federation/query.js";
import { federationDirectoryRoutes } from "./federation/directory.js";
import { federationSendRoutes } from "./federation/send.js";
import { federationEventRoutes } from "./federation/events.js";
import { federationBackfillRoutes } from "./federation/backfill.js";
import { federationMediaRoutes } from "./federation/media.js";
import { federationMembershipRoutes } from "./federation/membership.js";
import { federationE2eeRoutes } from "./federation/e2ee.js";
import { federationThirdPartyInviteRoutes } from "./federation/third-party-invites.js";
import { pushRoutes } from "./client/push.js";
import { mediaRoutes } from "./media/routes.js";
import { openIdRoutes } from "./client/openid.js";
import { federationOpenIdRoutes } from "./federation/openid.js";
import { threePidRoutes } from "./client/threepids.js";
import { appServiceRoutes } from "./client/appservices.js";
import { ssoRoutes } from "./client/sso.js";
import { emailValidationRoutes } from "./client/email-validation.js";
export const ROUTE_GROUPS = [
    serverInfoRoutes,
    accountRoutes,
    keyRoutes,
    wellKnownRoutes,
    sharedSecretRegistrationRoutes,
    registrationTokenRoutes,
    deviceRoutes,
    profileRoutes,
    capabilityRoutes,
    roomRoutes,
    searchRoutes,
    relationRoutes,
    spaceRoutes,
    reportRoutes,
    eventReportRoutes,
    userAdminRoutes,
    accountValidityRoutes,
    roomAdminRoutes,
    syncRoutes,
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
];
