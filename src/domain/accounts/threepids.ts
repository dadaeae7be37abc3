// Third-party identifiers of an account (/account/3pid and its add, bind, unbind, delete): add spends a
// validated e-mail session (threepids/email-validation.ts) after UIA; bind and unbind go through the
// identity server the client names (threepids/identity-binding.ts); `enable_3pid_changes: false` refuses
// add and delete. Spec: Client-Server API "Adding Account Administrative Contact Information".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "./requester.ts";
import { requireNotGuest } from "./guest-access.ts";
import { checkUia, finishUia, type UiaRequest } from "../uia/uia.ts";
import { canonicalEmail, provenThreepid } from "../threepids/email-validation.ts";
import { bindOnIdentityServer, unbindEverywhere, type UnbindResult } from "../threepids/identity-binding.ts";
import { reauthUia } from "../uia/flows.ts";
import type { DeactivationHook } from "./deactivate.ts";
import { refuseWhenDelegated } from "../oauth-delegation/refusals.ts";

type Body = Record<string, unknown>;

const MEDIA = ["email", "msisdn"];
/** The spec's client_secret grammar: [0-9a-zA-Z.=_-], 1–255 characters. */
const CLIENT_SECRET = /^[0-9a-zA-Z.=_-]{1,255}$/;

function str(body: Body, key: string, required: true): string;
function str(body: Body, key: string, required: false): string | undefined;
function str(body: Body, key: string, required: boolean): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) {
    if (required) throw new MatrixError("M_MISSING_PARAM", `Missing param ${key}`, 400);
    return undefined;
  }
  if (typeof v !== "string") throw new MatrixError("M_BAD_JSON", `${key} must be a string`, 400);
  return v;
}

function clientSecret(body: Body): string {
  const secret = str(body, "client_secret", true);
  if (!CLIENT_SECRET.test(secret)) throw new MatrixError("M_INVALID_PARAM", "Invalid client_secret parameter", 400);
  return secret;
}

/** The canonical form of an e-mail address, or the text as given when it is none (nothing can match it). */
function canonicalOrRaw(address: string): string {
  try {
    return canonicalEmail(address);
  } catch {
    return address;
  }
}

function medium(body: Body): string {
  const m = str(body, "medium", true);
  if (!MEDIA.includes(m)) throw new MatrixError("M_INVALID_PARAM", "medium must be email or msisdn", 400);
  return m;
}

/** GET /account/3pid: the account's third-party identifiers. */
export async function listThreePids(s: Services, r: Requester): Promise<{ threepids: { medium: string; address: string; validated_at: number; added_at: number }[] }> {
  requireNotGuest(r, "threePids");
  const rows = await s.threepids.ofUser(r.userId);
  return { threepids: rows.map((t) => ({ medium: t.medium, address: t.address, validated_at: t.validatedAt, added_at: t.addedAt })) };
}

function requireChanges(s: Services): void {
  if (!s.config.enable_3pid_changes) throw new MatrixError("M_FORBIDDEN", "3PID changes are disabled on this server", 400);
}

/** Adds the address a validated session proves to the account; the session is spent. */
async function addProven(s: Services, userId: string, creds: Body): Promise<void> {
  const proven = await provenThreepid(s, creds);
  const owner = await s.threepids.owner(proven.medium, proven.address);
  if (owner !== null && owner !== userId) throw new MatrixError("M_THREEPID_IN_USE", "This address is already in use", 400);
  if (owner === null) {
    try {
      await s.threepids.add(s.db, { medium: proven.medium, address: proven.address, userId, validatedAt: proven.validatedAt, addedAt: s.clock.now() });
    } catch (err) {
      if ((err as { code?: string }).code === "P2002") throw new MatrixError("M_THREEPID_IN_USE", "This address is already in use", 400);
      throw err;
    }
  }
  await s.threepids.deleteSession(proven.sessionId);
}

/** POST /account/3pid/add: after UIA, adds the address a validation session proved. */
export async function addThreePid(s: Services, r: Requester, req: UiaRequest): Promise<Record<string, never>> {
  refuseWhenDelegated(s);
  requireNotGuest(r, "threePids");
  requireChanges(s);
  clientSecret(req.body);
  str(req.body, "sid", true);
  const uia = await checkUia(s, { ...req, requester: r }, await reauthUia(s, r, { description: "add a third-party identifier to your account", action: "org.matrix.profile" }));
  await addProven(s, r.userId, uia.params);
  await finishUia(s, uia);
  return {};
}

/** POST /account/3pid (deprecated): adds the address of `three_pid_creds`, without UIA. */
export async function addThreePidLegacy(s: Services, r: Requester, body: Body): Promise<Record<string, never>> {
  refuseWhenDelegated(s);
  requireNotGuest(r, "threePids");
  const creds = body.three_pid_creds ?? body.threePidCreds;
  if (creds === undefined || creds === null) throw new MatrixError("M_MISSING_PARAM", "Missing param three_pid_creds", 400);
  if (typeof creds !== "object" || Array.isArray(creds)) throw new MatrixError("M_BAD_JSON", "three_pid_creds must be an object", 400);
  str(creds as Body, "sid", true);
  clientSecret(creds as Body);
  requireChanges(s);
  await addProven(s, r.userId, creds as Body);
  return {};
}

/** POST /account/3pid/bind: binds an address the identity server validated to this account there. */
export async function bindThreePid(s: Services, r: Requester, body: Body): Promise<Record<string, never>> {
  requireNotGuest(r, "threePids");
  const secret = clientSecret(body);
  const [accessToken, idServer, sid] = ["id_access_token", "id_server", "sid"].map((key) => str(body, key, true));
  await bindOnIdentityServer(s, r.userId, { idServer: idServer!, accessToken: accessToken!, sid: sid!, clientSecret: secret });
  return {};
}

/** POST /account/3pid/unbind: removes the binding on the identity server(s), keeps the address here. */
export async function unbindThreePid(s: Services, r: Requester, body: Body): Promise<{ id_server_unbind_result: UnbindResult }> {
  requireNotGuest(r, "threePids");
  const address = str(body, "address", true);
  const m = medium(body);
  const idServer = str(body, "id_server", false);
  const canonical = m === "email" ? canonicalOrRaw(address) : address;
  return { id_server_unbind_result: await unbindEverywhere(s, r.userId, m, canonical, idServer) };
}

/** POST /account/3pid/delete: removes the address from the account, and unbinds it where it was bound. */
export async function deleteThreePid(s: Services, r: Requester, body: Body): Promise<{ id_server_unbind_result: UnbindResult }> {
  refuseWhenDelegated(s);
  requireNotGuest(r, "threePids");
  const address = str(body, "address", true);
  const m = medium(body);
  const idServer = str(body, "id_server", false);
  requireChanges(s);
  const canonical = m === "email" ? canonicalOrRaw(address) : address;
  const result = await unbindEverywhere(s, r.userId, m, canonical, idServer);
  await s.threepids.remove(r.userId, m, canonical);
  return { id_server_unbind_result: result };
}

/**
 * On deactivation (as Synapse): every address leaves the account and is unbound where it was bound (best
 * effort: an identity server that cannot be reached leaves its binding, the address still goes).
 */
export const dropThreePids: DeactivationHook = async (s, userId) => {
  for (const t of await s.threepids.ofUser(userId)) {
    await unbindEverywhere(s, userId, t.medium, t.address, undefined).catch((err: unknown) => s.log.info({ err, userId }, "deactivation: could not unbind an address"));
    await s.threepids.remove(userId, t.medium, t.address);
  }
};
