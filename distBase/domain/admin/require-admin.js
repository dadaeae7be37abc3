// The server-admin gate of the admin API (Synapse's "Admin API": an access token of a user with admin
// rights). Callers that reach here are authenticated; everyone else but admins gets 403 M_FORBIDDEN.
import { MatrixError } from "../errors.js";
import { requireNotGuest } from "../accounts/guest-access.js";
/** Throws 403 M_FORBIDDEN unless the requester is a server admin (guests: M_GUEST_ACCESS_FORBIDDEN). */
export function requireAdmin(requester) {
    requireNotGuest(requester, "admin");
    if (!requester.isAdmin)
        throw new MatrixError("M_FORBIDDEN", "You are not a server admin", 403);
}
