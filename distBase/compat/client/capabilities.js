import { clientRoute } from "../http.js";
import { capabilities } from "../../domain/server/capabilities.js";
export function capabilityRoutes(app, s) {
    clientRoute(app, s, { method: "GET", path: "/capabilities", auth: "token", handler: () => capabilities(s) });
}
