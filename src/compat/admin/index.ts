// The admin API's route groups (Synapse admin API, served at /_impl/admin/v1 and /_synapse/admin/v1):
// one file per endpoint group, gathered here so src/compat/routes.ts lists them with one import.
export { sharedSecretRegistrationRoutes } from "./register.ts";
export { registrationTokenRoutes } from "./registration-tokens.ts";
export { eventReportRoutes } from "./event-reports.ts";
export { mediaAdminRoutes } from "./media.ts";
export { userAdminRoutes } from "./users.ts";
export { roomAdminRoutes } from "./rooms.ts";
export { serverNoticeRoutes } from "./server-notices.ts";
