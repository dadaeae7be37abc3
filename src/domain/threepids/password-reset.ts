// Password reset by e-mail (spec: Client-Server API "POST /account/password" without an access token,
// the m.login.email.identity stage; Synapse's PasswordRestServlet): a validated session for an address of
// the account proves the request; the new password is stored and, unless logout_devices is false, every
// session of the account ends.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { checkUia, finishUia, type UiaRequest } from "../uia/uia.ts";
import { deleteDevices } from "../devices/delete-devices.ts";
import { invalidateUserTokens } from "../accounts/authenticate.ts";
import { newPasswordOf } from "../accounts/change-password.ts";
import { storeNewPassword } from "../accounts/set-password.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

export async function resetPasswordByEmail(s: Services, req: UiaRequest): Promise<void> {
  refuseWhenDelegated(s);
  const { hash, logoutDevices } = await newPasswordOf(s, req.body);

  const uia = await checkUia(s, req, { flows: [["m.login.email.identity"]], description: "reset your password" });
  const proven = uia.completed.get("m.login.email.identity") as { medium: string; address: string; sid: string };
  const userId = await s.threepids.owner(proven.medium, proven.address);
  // Only the holder of the address sees this (they followed the link), so nothing leaks to others.
  if (userId === null) throw new MatrixError("M_THREEPID_NOT_FOUND", "This address is not linked to an account here", 400);
  const user = await s.users.get(userId);
  if (!user || user.deactivated) throw new MatrixError("M_USER_DEACTIVATED", "This account has been deactivated", 403);
  await storeNewPassword(s, userId, hash);
  if (logoutDevices !== false) {
    await deleteDevices(s, userId, await s.sessions.deviceIds(userId));
    await s.db.$transaction(async (tx) => {
      await s.sessions.deleteAccessTokensOfUser(tx, userId);
      await s.sessions.deleteRefreshTokensOfUser(tx, userId);
    });
    await invalidateUserTokens(s, userId);
  }
  await s.threepids.deleteSession(proven.sid);
  await finishUia(s, uia);
}
