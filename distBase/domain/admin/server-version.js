import { requireAdmin } from "./require-admin.js";
import { SERVER_SOFTWARE } from "../server/version.js";
export function serverVersion(r) {
    requireAdmin(r);
    return { server_version: SERVER_SOFTWARE.version };
}
