// Resolving an alias of another server for a join: GET /query/directory on the alias's server, its answer
// checked (a room id, and the servers to join through). Serving that query: a local alias's room and the
// servers in it.
// Spec: Server-Server API "Querying for information" (GET /_matrix/federation/v1/query/directory).
// LEAD: fed-sender builds resolveRemoteAlias(s, alias) and serves /query/directory (src/compat/federation/
// query.ts); this file is a stand-in until that merges: dedupe on merge.
import type { Services } from "../../services.ts";
import { isPlainObject } from "../../events/types.ts";
import { MatrixError } from "../../errors.ts";
import { isValidRoomId, isValidServerName, parseRoomAlias } from "../../ids.ts";
import { FederationError } from "../../../federation/errors.ts";
import { getAlias } from "../../directory/aliases.ts";

export interface AliasTarget {
  room_id: string;
  servers: string[];
}

/** The room an alias of another server names, with the servers its server says to join through. */
export async function resolveRemoteAliasForJoin(s: Services, alias: string): Promise<AliasTarget> {
  const { serverName } = parseRoomAlias(alias);
  let answer: unknown;
  try {
    answer = await s.federation.getJson(serverName, "/_matrix/federation/v1/query/directory", { room_alias: alias }, { maxBytes: 64 * 1024 });
  } catch (err) {
    if (err instanceof FederationError && err.is(404)) throw new MatrixError("M_NOT_FOUND", `Room alias ${alias} not found`, 404);
    throw new MatrixError("M_UNKNOWN", `Could not resolve ${alias} through ${serverName}: ${(err as Error).message}`, 502);
  }
  if (!isPlainObject(answer) || typeof answer.room_id !== "string" || !isValidRoomId(answer.room_id))
    throw new MatrixError("M_UNKNOWN", `${serverName} answered the alias query with no room id`, 502);
  const servers = Array.isArray(answer.servers) ? answer.servers.filter((x): x is string => typeof x === "string" && isValidServerName(x)) : [];
  // The servers in the answer's order; the alias's own server last when it did not name itself.
  return { room_id: answer.room_id, servers: servers.includes(serverName) ? servers : [...servers, serverName] };
}

/** GET /query/directory: only aliases of this server (400 otherwise, as Synapse), 404 when unknown. */
export async function serveDirectoryQuery(s: Services, alias: string): Promise<AliasTarget> {
  let serverName: string;
  try {
    serverName = parseRoomAlias(alias).serverName;
  } catch {
    throw new MatrixError("M_INVALID_PARAM", "Invalid room alias", 400);
  }
  if (serverName !== s.config.server_name) throw new MatrixError("M_INVALID_PARAM", "Room alias is not hosted on this homeserver", 400);
  return getAlias(s, alias);
}
