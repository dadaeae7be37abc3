// Checks a requested username for registration: grammar, reserved forms (the server notices user's id),
// exclusive application-service namespaces and availability (spec: Client-Server API "GET
// /register/available", Synapse's rules).
import { randomInt } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { exclusiveOwner } from "./appservices.ts";
import { checkNotReserved } from "../server-notices/policy.ts";

const LOCALPART = /^[a-z0-9._=\-/+]+$/;
/** Spec appendix "Historical User IDs": printable ASCII but ':'. */
const HISTORICAL_LOCALPART = /^[\x21-\x39\x3B-\x7E]+$/;

export interface UsernameCheckOptions {
  /** The application service registering it, which may use its exclusive namespace. */
  appserviceId?: string;
  /** Only grammar and namespaces, not whether it is taken. */
  skipAvailability?: boolean;
}

export async function checkUsername(s: Services, localpart: string, o: UsernameCheckOptions = {}): Promise<string> {
  if (localpart.length === 0) throw new MatrixError("M_INVALID_USERNAME", "User ID cannot be empty", 400);
  if (o.appserviceId) {
    // Application services keep the historical grammar (bridges name users after foreign ids, as Synapse allows).
    if (!HISTORICAL_LOCALPART.test(localpart))
      throw new MatrixError("M_INVALID_USERNAME", "User ID may only contain printable ASCII characters other than ':'", 400);
  } else {
    if (!LOCALPART.test(localpart))
      throw new MatrixError("M_INVALID_USERNAME", "User ID can only contain characters a-z, 0-9, or '=_-./+'", 400);
    if (localpart.startsWith("_")) throw new MatrixError("M_INVALID_USERNAME", "User ID may not begin with _", 400);
    if (/^\d+$/.test(localpart)) throw new MatrixError("M_INVALID_USERNAME", "Numeric user IDs are reserved for guest users.", 400);
  }
  const userId = `@${localpart}:${s.config.server_name}`;
  if (Buffer.byteLength(userId) > 255) throw new MatrixError("M_INVALID_USERNAME", "User ID may not be longer than 255 characters", 400);
  checkNotReserved(s, userId);
  const owner = exclusiveOwner(s.config, userId);
  if (owner && owner.id !== o.appserviceId)
    throw new MatrixError("M_EXCLUSIVE", "This user ID is reserved by an application service.", 400);
  if (!o.skipAvailability && (await s.users.exists(userId))) throw new MatrixError("M_USER_IN_USE", "User ID already taken.", 400);
  return userId;
}

/** A fresh numeric localpart (Synapse gives guests and users without a username numeric ids). */
export async function generateNumericUserId(s: Services): Promise<string> {
  for (;;) {
    const userId = `@${randomInt(1_000_000_000, 9_999_999_999)}:${s.config.server_name}`;
    if (!(await s.users.exists(userId))) return userId;
  }
}
