// The admin API's route groups (Synapse admin API, served at /_impl/admin/v1 and /_synapse/admin/v1):
// one file per endpoint group, gathered here so src/compat/routes.ts lists them with one import.
export { sharedSecretRegistrationRoutes } from "./register.js";
export { registrationTokenRoutes } from "./registration-tokens.js";
export { eventReportRoutes } from "./event-reports.js";
export { mediaAdminRoutes } from "./media.js";
export { userAdminRoutes } from "./users.js";
export { roomAdminRoutes } from "./rooms.js";
