import { invalidateUserTokens } from "./authenticate.js";
import { deleteDevices } from "../devices/delete-devices.js";
export async function logout(s, r) {
    if (r.deviceId)
        await deleteDevices(s, r.userId, [r.deviceId]);
    else if (r.accessTokenId)
        await s.db.accessToken.deleteMany({ where: { id: r.accessTokenId } });
    invalidateUserTokens(s, r.userId);
}
export async function logoutAll(s, r) {
    await deleteDevices(s, r.userId, await s.sessions.deviceIds(r.userId));
    await s.db.$transaction(async (tx) => {
        await s.sessions.deleteAccessTokensOfUser(tx, r.userId);
        await s.sessions.deleteRefreshTokensOfUser(tx, r.userId);
    });
    invalidateUserTokens(s, r.userId);
}
