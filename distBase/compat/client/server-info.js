import { versionsResponse } from "../../domain/server/versions.js";
import { BRANDS, route } from "../http.js";
export function serverInfoRoutes(app, s) {
    route(app, s, BRANDS.map((b) => `/${b}/client/versions`), { method: "GET", path: "", auth: "optional", handler: () => versionsResponse() });
}
