// POST /logout and /logout/all: end one session (its device, tokens and, later, device keys) or all.
// Spec: Client-Server API "Logout".
import type { Services } from "../services.ts";
import type { Requester } from "./requester.ts";
import { invalidateUserTokens } from "./authenticate.ts";
import { deleteDevices } from "../devices/delete-devices.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

export async function logout(s: Services, r: Requester): Promise<void> {
  refuseWhenDelegated(s);
  if (r.deviceId) await deleteDevices(s, r.userId, [r.deviceId]);
  else if (r.accessTokenId) await s.db.accessToken.deleteMany({ where: { id: r.accessTokenId } });
  await invalidateUserTokens(s, r.userId);
}

export async function logoutAll(s: Services, r: Requester): Promise<void> {
  refuseWhenDelegated(s);
  await deleteDevices(s, r.userId, await s.sessions.deviceIds(r.userId));
  await s.db.$transaction(async (tx) => {
    await s.sessions.deleteAccessTokensOfUser(tx, r.userId);
    await s.sessions.deleteRefreshTokensOfUser(tx, r.userId);
  });
  await invalidateUserTokens(s, r.userId);
}
