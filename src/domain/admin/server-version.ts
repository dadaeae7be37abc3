// GET /v1/server_version of the admin API (Synapse admin API "Server Version"): this server's version.
// Admins only, as every admin call here.
import type { Requester } from "../accounts/requester.ts";
import { requireAdmin } from "./require-admin.ts";
import { SERVER_SOFTWARE } from "../server/version.ts";

export function serverVersion(r: Requester): { server_version: string } {
  requireAdmin(r);
  return { server_version: SERVER_SOFTWARE.version };
}
