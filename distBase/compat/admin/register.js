import { adminRoute } from "../http.js";
import { newRegistrationNonce, registerWithSharedSecret } from "../../domain/admin/shared-secret-registration.js";
export function sharedSecretRegistrationRoutes(app, s) {
    adminRoute(app, s, { method: "GET", path: "/register", auth: "none", handler: () => newRegistrationNonce(s) });
    adminRoute(app, s, { method: "POST", path: "/register", auth: "none", handler: (c) => registerWithSharedSecret(s, c.body()) });
}
