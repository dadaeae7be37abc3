// Binding an account's address on an identity server, and unbinding it (spec: Client-Server API
// "/account/3pid/bind", "/account/3pid/unbind"; Identity Service API "/3pid/bind", "/3pid/unbind"). The
// validation session of a bind lives on the identity server; this server records where it bound an
// address so that unbind and delete can undo it there (Synapse's user_threepid_id_server).
import { MatrixError } from "../errors.js";
import { checkIdServer, isRequest, toClientError } from "./identity-server.js";
/** POST /3pid/bind on the identity server, with the user's id_access_token; records the binding. */
export async function bindOnIdentityServer(s, userId, o) {
    const idServer = checkIdServer(o.idServer);
    let answer;
    try {
        answer = await isRequest(s, idServer, { method: "POST", path: "/3pid/bind", accessToken: o.accessToken, body: { sid: o.sid, client_secret: o.clientSecret, mxid: userId } });
    }
    catch (err) {
        throw toClientError(err);
    }
    const { medium, address, mxid } = answer;
    if (typeof medium !== "string" || typeof address !== "string" || mxid !== userId)
        throw new MatrixError("M_UNKNOWN", `The identity server ${idServer} answered the bind with an unexpected association`, 502);
    await s.threepids.recordIdServer(userId, medium, address, idServer);
}
/**
 * Unbinds the address on `idServer`, or on every identity server this server bound it on: "success" when
 * each of them agreed, "no-support" when none is known or one refused (as Synapse reports it).
 */
export async function unbindEverywhere(s, userId, medium, address, idServer) {
    const servers = idServer !== undefined ? [checkIdServer(idServer)] : await s.threepids.idServers(userId, medium, address);
    if (servers.length === 0)
        return "no-support";
    let all = true;
    for (const server of servers) {
        try {
            await isRequest(s, server, { method: "POST", path: "/3pid/unbind", signed: true, body: { mxid: userId, threepid: { medium, address } } });
            await s.threepids.forgetIdServer(userId, medium, address, server);
        }
        catch (err) {
            s.log.info({ idServer: server, err: err.message }, "an identity server did not unbind an address");
            all = false;
        }
    }
    return all ? "success" : "no-support";
}
