// Which local user a login or re-authentication names: `identifier` (m.id.user, m.id.thirdparty,
// m.id.phone) or the legacy `user` field. Spec: Client-Server API "Identifier types".
import { MatrixError } from "../errors.js";
const invalidLogin = () => new MatrixError("M_FORBIDDEN", "Invalid username or password", 403);
/** The fully qualified user id for a localpart or a user id (lower-cased: local accounts are lower case). */
export function qualifyUserId(s, user) {
    if (user.startsWith("@")) {
        const colon = user.indexOf(":");
        if (colon < 0)
            throw new MatrixError("M_INVALID_PARAM", "Invalid user id", 400);
        const server = user.slice(colon + 1);
        if (server !== s.config.server_name)
            throw invalidLogin();
        return "@" + user.slice(1, colon).toLowerCase() + ":" + server;
    }
    return `@${user.toLowerCase()}:${s.config.server_name}`;
}
export function resolveLoginUser(s, body) {
    const identifier = body.identifier;
    if (identifier !== undefined) {
        if (typeof identifier !== "object" || identifier === null)
            throw new MatrixError("M_BAD_JSON", "identifier must be an object");
        const id = identifier;
        switch (id.type) {
            case "m.id.user":
                if (typeof id.user !== "string" || id.user === "")
                    throw new MatrixError("M_MISSING_PARAM", "identifier.user is required", 400);
                return qualifyUserId(s, id.user);
            case "m.id.thirdparty":
            case "m.id.phone":
                // Weft keeps no third-party identifiers, so none can name an account.
                throw invalidLogin();
            default:
                throw new MatrixError("M_UNKNOWN", "Unknown login identifier type", 400);
        }
    }
    if (typeof body.user === "string" && body.user !== "")
        return qualifyUserId(s, body.user);
    if (body.medium !== undefined && body.address !== undefined)
        throw invalidLogin();
    throw new MatrixError("M_MISSING_PARAM", "Missing identifier (or user)", 400);
}
