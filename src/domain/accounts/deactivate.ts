// POST /account/deactivate: re-authenticate, then lock the account for good: no password, no devices or
// tokens, an empty profile (extended fields included); `erase` also marks the user erased (their events
// are hidden from new members once rooms exist). Spec: Client-Server API "Account deactivation".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "./requester.ts";
import { checkUia, finishUia, type UiaRequest } from "../uia/uia.ts";
import { deleteDevices } from "../devices/delete-devices.ts";
import { invalidateUserTokens } from "./authenticate.ts";
import { reauthUia } from "../uia/flows.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

/** Run after an account was deactivated (leave rooms, drop from the user directory ...; src/main.ts). */
export type DeactivationHook = (s: Services, userId: string, erase: boolean) => Promise<void>;

export async function deactivateAccount(s: Services, userId: string, erase: boolean): Promise<void> {
  await deleteDevices(s, userId, await s.sessions.deviceIds(userId));
  await s.db.$transaction(async (tx) => {
    await s.sessions.deleteAccessTokensOfUser(tx, userId);
    await s.sessions.deleteRefreshTokensOfUser(tx, userId);
    await s.users.markDeactivated(tx, userId, erase);
    await s.users.setProfileField(tx, userId, "displayname", null);
    await s.users.setProfileField(tx, userId, "avatarUrl", null);
    // Extended fields too (Synapse deletes the whole profile when erasing; Weft empties it on every
    // deactivation, and serves a deactivated user's profile as 404 anyway).
    await s.profileFields.deleteAll(tx, userId);
  });
  await invalidateUserTokens(s, userId);
  s.invalidations.publish({ kind: "profile", userId });
  for (const hook of s.extensions.deactivated) await hook(s, userId, erase);
}

export async function deactivateOwnAccount(s: Services, r: Requester, req: UiaRequest): Promise<{ id_server_unbind_result: string }> {
  refuseWhenDelegated(s);
  if (r.isGuest) throw new MatrixError("M_GUEST_ACCESS_FORBIDDEN", "Guests cannot deactivate an account", 403);
  const erase = req.body.erase;
  if (erase !== undefined && typeof erase !== "boolean") throw new MatrixError("M_BAD_JSON", "erase must be a boolean");
  const uia = await checkUia(s, { ...req, requester: r }, await reauthUia(s, r, { description: "deactivate your account", action: "org.matrix.account_deactivate" }));
  await deactivateAccount(s, r.userId, erase === true);
  await finishUia(s, uia);
  return { id_server_unbind_result: "no-support" };
}
