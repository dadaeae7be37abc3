import { SERVER_SOFTWARE } from "../../domain/server/version.js";
import { federationRoute } from "./route.js";
export function federationVersionRoutes(app, s) {
    federationRoute(app, s, { method: "GET", path: "/version", auth: "none", handler: () => ({ server: { ...SERVER_SOFTWARE } }) });
}
