// Replacing cross-signing keys on a server delegating authentication (MSC3861, MSC4312): there is no
// password to re-authenticate with, so the client is sent to the authorization server's account page
// (`?action=org.matrix.cross_signing_reset`) through a UIA-shaped 401 with the `m.oauth` stage and its
// unstable name `org.matrix.cross_signing_reset`, as Synapse answers. Once the authorization server
// approved (POST /_synapse/admin/v1/users/{userId}/_allow_cross_signing_replacement_without_uia), the
// next upload within ten minutes replaces the keys without UIA.
import type { Services } from "../services.ts";
import { UserInteractiveAuthRequired } from "../uia/uia.ts";

/** The 401 that sends the user to approve the reset at the authorization server. */
export async function crossSigningResetRequired(s: Services): Promise<UserInteractiveAuthRequired> {
  const account = (await s.oauthDelegation?.accountManagementUrl()) ?? "";
  const url = `${account}?action=org.matrix.cross_signing_reset`;
  return new UserInteractiveAuthRequired({
    session: "dummy",
    flows: [{ stages: ["m.oauth"] }, { stages: ["org.matrix.cross_signing_reset"] }],
    params: { "m.oauth": { url }, "org.matrix.cross_signing_reset": { url } },
    msg: "To reset your end-to-end encryption cross-signing identity, you first need to approve it and then try again.",
  });
}
