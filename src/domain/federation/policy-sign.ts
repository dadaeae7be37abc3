// Asking a room's Policy Server to sign an event: POST /_matrix/policy/v1/sign with the full signed PDU,
// a signed federation request through services.federation (its IP ranges apply), 30 s allowed (Synapse's
// figure); a server that does not serve the stable path (M_UNRECOGNIZED, as Synapse tells it) is asked
// MSC4284's unstable `/_matrix/policy/unstable/org.matrix.msc4284/sign` (Synapse 1.163 still does). The
// answer is classified, never trusted: the signature of the via server's `ed25519:policy_server` key
// (checked by the caller), none at all, the policy server's error (to hand to a client verbatim), or no
// usable answer. Spec: Server-Server API "Asking for a Policy Server signature on an event",
// "POST /_matrix/policy/v1/sign" (v1.18, MSC4284).
import { STATUS_CODES } from "node:http";
import type { Services } from "../services.ts";
import type { Pdu } from "../events/types.ts";
import { isPlainObject } from "../events/types.ts";
import { MatrixError } from "../errors.ts";
import { FederationError } from "../../federation/errors.ts";
import { POLICY_SERVER_KEY_ID, type PolicyServer } from "../rooms/policy-server.ts";

export const SIGN_PATH = "/_matrix/policy/v1/sign";
export const UNSTABLE_SIGN_PATH = "/_matrix/policy/unstable/org.matrix.msc4284/sign";
/** Synapse allows a policy server 30 s ("we don't want to block event sending too long"). */
const SIGN_TIMEOUT_MS = 30_000;
/** A signature answer is a few hundred bytes; anything much larger is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

export type SignAnswer =
  /** The policy server's signature (key `ed25519:policy_server` of the via server), not yet verified. */
  | { kind: "signed"; signature: string }
  /** A 200 answer with no signature of the via server's policy key in it. */
  | { kind: "unsigned"; empty: boolean }
  /** The policy server answered an error: the error our client gets, as the policy server said it. */
  | { kind: "refused"; error: MatrixError }
  /** No usable answer: unreachable, refused by our IP ranges, timed out, not JSON. */
  | { kind: "failed"; error: Error };

/**
 * The policy server's error as our client sees it: its status, errcode, message and other scalar fields
 * (Synapse's `to_synapse_error`), but for what would mean something else coming from us — a 401 is a
 * 400, M_UNKNOWN_TOKEN is M_UNKNOWN (a client would log out). No errcode: M_UNKNOWN with the status text.
 */
function proxied(err: FederationError): MatrixError {
  const status = err.remoteStatus ?? 502;
  const errcode = err.remoteErrcode === undefined || err.remoteErrcode === "M_UNKNOWN_TOKEN" ? "M_UNKNOWN" : err.remoteErrcode;
  const message = err.remoteError ?? STATUS_CODES[status] ?? `The policy server answered ${status}`;
  return new MatrixError(errcode as MatrixError["errcode"], message, status === 401 ? 400 : status, err.remoteFields ?? {});
}

async function post(s: Services, via: string, path: string, pdu: Pdu): Promise<unknown> {
  return s.federation.postJson<unknown>(via, path, pdu, { timeoutMs: SIGN_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES });
}

/** Asks `ps` to sign `pdu` (a full PDU, signed by its origin; without `unsigned`). */
export async function askPolicyServer(s: Services, ps: PolicyServer, pdu: Pdu): Promise<SignAnswer> {
  const { unsigned: _unsigned, ...body } = pdu;
  let answer: unknown;
  try {
    try {
      answer = await post(s, ps.via, SIGN_PATH, body as Pdu);
    } catch (err) {
      if (!(err instanceof FederationError) || !err.isUnknownEndpoint()) throw err;
      answer = await post(s, ps.via, UNSTABLE_SIGN_PATH, body as Pdu);
    }
  } catch (err) {
    if (err instanceof FederationError && err.kind === "remote") return { kind: "refused", error: proxied(err) };
    s.log.warn({ via: ps.via, err: (err as Error).message }, "could not ask the room's policy server to sign an event");
    return { kind: "failed", error: err as Error };
  }
  if (!isPlainObject(answer)) return { kind: "failed", error: new FederationError("invalid_response", ps.via, "the policy server's answer is not a JSON object") };
  const mine = answer[ps.via];
  const signature = isPlainObject(mine) ? mine[POLICY_SERVER_KEY_ID] : undefined;
  if (typeof signature === "string") return { kind: "signed", signature };
  return { kind: "unsigned", empty: Object.keys(answer).length === 0 };
}
