// GET /.well-known/matrix/support (spec: Client-Server API "Server support discovery"): the contacts and
// support page of the `support` options (and Synapse's admin_contact); 404 M_NOT_FOUND when none are set.
import { MatrixError } from "../errors.js";
export function supportInfo(s) {
    const support = s.config.support;
    if (!support)
        throw new MatrixError("M_NOT_FOUND", "No support information is configured", 404);
    return { ...(support.contacts.length > 0 ? { contacts: support.contacts } : {}), ...(support.support_page ? { support_page: support.support_page } : {}) };
}
