// Serving GET /_matrix/federation/v1/query/directory?room_alias=: where one of our aliases points, and the
// servers in that room (ours first), for a remote server resolving it (to show it or to join through it).
// 400 for an alias of another server, 404 M_NOT_FOUND for an unknown one. Aliases are public: any
// authenticated server may ask. Spec: Server-Server API "Querying for information".
import { MatrixError } from "../errors.js";
import { getAlias, parseAliasParam } from "../directory/aliases.js";
export async function federationDirectoryQuery(s, roomAlias) {
    const { serverName } = parseAliasParam(roomAlias);
    if (serverName !== s.config.server_name)
        throw new MatrixError("M_INVALID_PARAM", "Room alias is not hosted on this homeserver", 400);
    return getAlias(s, roomAlias);
}
