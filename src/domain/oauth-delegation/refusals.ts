// What a server delegating authentication (MSC3861) does not serve, as Synapse does not register those
// endpoints then: the authorization server owns logins, registration, passwords, sessions, 3PIDs and
// device removal, so these operations answer 404 M_UNRECOGNIZED whichever face calls them.
import { MatrixError } from "../errors.ts";
import type { Config } from "../../config/config.ts";

/** Throws 404 M_UNRECOGNIZED when authentication is delegated. */
export function refuseWhenDelegated(s: { config: Pick<Config, "oauth_delegation"> }): void {
  if (s.config.oauth_delegation) throw new MatrixError("M_UNRECOGNIZED", "Unrecognized request: this server delegates authentication (MSC3861)", 404);
}
