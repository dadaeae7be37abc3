// A guest upgrading to a full account: POST /register with the guest's access token in
// `guest_access_token` and (optionally) the guest's own localpart as `username`. The account keeps its
// user id, rooms and profile; it gains a password and stops being a guest. Spec: Client-Server API
// "Guest access" ("upgrade ... by calling /register with ... guest_access_token"); Synapse's rules.
import { forbidden } from "../errors.js";
import { authenticate } from "./authenticate.js";
/** The guest's user id if `token` is a guest's and `localpart` (when given) is theirs; 403 otherwise. */
export async function guestToUpgrade(s, token, localpart) {
    const guest = await authenticate(s, token).catch(() => undefined);
    const refused = forbidden("Cannot register taken user ID without valid guest credentials for that user.");
    if (!guest || !guest.isGuest)
        throw refused;
    if (localpart !== undefined && `@${localpart}:${s.config.server_name}` !== guest.userId)
        throw refused;
    return guest.userId;
}
