// The membership handshake's PUTs (send_join, send_leave, invite) to a server that serves only the v1 API:
// v2 is asked first; a server that does not serve it (FederationError.isUnknownEndpoint: 404/405
// M_UNRECOGNIZED and the like, as Synapse tells it) is asked v1, whose answer comes wrapped in `[200, {...}]`
// (a historical bug the spec keeps). Spec: Server-Server API "PUT /_matrix/federation/v1/send_join",
// "PUT /_matrix/federation/v1/send_leave", "PUT /_matrix/federation/v1/invite" (deprecated, still served).
import type { Services } from "../../services.ts";
import type { RequestOptions } from "../../../federation/client.ts";
import { FederationError } from "../../../federation/errors.ts";
import { badAnswer } from "./handshake.ts";

export interface VersionedPut {
  /** The v2 path and body. */
  v2: { path: string; body: unknown };
  /** The v1 path and body; undefined when v1 cannot carry the request (`noV1` is thrown instead). */
  v1?: { path: string; body: unknown };
  /** The error when the server serves no v2 and v1 cannot be used. */
  noV1?: () => Error;
}

/** The object inside a v1 answer `[200, {...}]`, or a bad answer. */
export function unwrapV1(server: string, what: string, answer: unknown): unknown {
  if (!Array.isArray(answer) || answer.length !== 2 || answer[0] !== 200 || typeof answer[1] !== "object" || answer[1] === null || Array.isArray(answer[1]))
    throw badAnswer(server, `${what} v1 answered something else than [200, {...}]`);
  return answer[1];
}

/** PUTs `put.v2` to `server`; when it serves no v2, `put.v1` (its answer unwrapped). */
export async function putV2OrV1(s: Services, server: string, what: string, put: VersionedPut, opts: RequestOptions = {}): Promise<unknown> {
  try {
    return await s.federation.putJson<unknown>(server, put.v2.path, put.v2.body, opts);
  } catch (err) {
    if (!(err instanceof FederationError) || !err.isUnknownEndpoint()) throw err;
    if (!put.v1) throw put.noV1?.() ?? err;
    s.log.info({ server, what }, "the server serves no v2 of this endpoint: asking v1");
  }
  // v1 takes no query (omit_members came with v2).
  const { query: _query, ...v1Opts } = opts;
  return unwrapV1(server, what, await s.federation.putJson<unknown>(server, put.v1.path, put.v1.body, v1Opts));
}
