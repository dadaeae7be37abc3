// Third-party identifiers of an account (/account/3pid and its add, bind, unbind, delete): the endpoints
// and their errors. Weft has no e-mail or SMS validation yet and trusts no identity server, so no
// validation session ever exists (add answers M_THREEPID_AUTH_FAILED, as Synapse does for an unknown
// session), nothing is bound (unbind and delete report "no-support", as Synapse does when it knows no
// identity server for the address), and binding through an identity server is refused with
// M_SERVER_NOT_TRUSTED. Spec: Client-Server API "Adding Account Administrative Contact Information".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "./requester.ts";
import { requireNotGuest } from "./guest-access.ts";
import { checkUia, finishUia, type UiaRequest } from "../uia/uia.ts";
import { reauthFlows } from "../uia/flows.ts";

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

function medium(body: Body): string {
  const m = str(body, "medium", true);
  if (!MEDIA.includes(m)) throw new MatrixError("M_INVALID_PARAM", "medium must be email or msisdn", 400);
  return m;
}

/** No validation session can exist (no e-mail or SMS sending yet): what Synapse answers for an unknown one. */
const noSession = () => new MatrixError("M_THREEPID_AUTH_FAILED", "No validated 3pid session found", 400);

/** GET /account/3pid: the account's third-party identifiers (none can be added yet). */
export async function listThreePids(_s: Services, r: Requester): Promise<{ threepids: unknown[] }> {
  requireNotGuest(r, "threePids");
  return { threepids: [] };
}

/** POST /account/3pid/add: after UIA, adds the address a validation session proved. */
export async function addThreePid(s: Services, r: Requester, req: UiaRequest): Promise<never> {
  requireNotGuest(r, "threePids");
  clientSecret(req.body);
  str(req.body, "sid", true);
  const uia = await checkUia(s, { ...req, requester: r }, { flows: await reauthFlows(s, r.userId), description: "add a third-party identifier to your account" });
  await finishUia(s, uia);
  throw noSession();
}

/** POST /account/3pid (deprecated): adds the address of `three_pid_creds`, without UIA. */
export async function addThreePidLegacy(_s: Services, r: Requester, body: Body): Promise<never> {
  requireNotGuest(r, "threePids");
  const creds = body.three_pid_creds ?? body.threePidCreds;
  if (creds === undefined || creds === null) throw new MatrixError("M_MISSING_PARAM", "Missing param three_pid_creds", 400);
  if (typeof creds !== "object" || Array.isArray(creds)) throw new MatrixError("M_BAD_JSON", "three_pid_creds must be an object", 400);
  str(creds as Body, "sid", true);
  clientSecret(creds as Body);
  throw noSession();
}

/** POST /account/3pid/bind: binding through an identity server, none of which this server trusts. */
export async function bindThreePid(_s: Services, r: Requester, body: Body): Promise<never> {
  requireNotGuest(r, "threePids");
  clientSecret(body);
  for (const key of ["id_access_token", "id_server", "sid"]) str(body, key, true);
  throw new MatrixError("M_SERVER_NOT_TRUSTED", "This server does not use identity servers", 400);
}

/** POST /account/3pid/unbind: no binding is known, so nothing was unbound anywhere. */
export async function unbindThreePid(_s: Services, r: Requester, body: Body): Promise<{ id_server_unbind_result: "no-support" }> {
  requireNotGuest(r, "threePids");
  str(body, "address", true);
  medium(body);
  str(body, "id_server", false);
  return { id_server_unbind_result: "no-support" };
}

/** POST /account/3pid/delete: removes the address from the account (none is stored yet): a no-op. */
export async function deleteThreePid(_s: Services, r: Requester, body: Body): Promise<{ id_server_unbind_result: "no-support" }> {
  requireNotGuest(r, "threePids");
  str(body, "address", true);
  medium(body);
  str(body, "id_server", false);
  return { id_server_unbind_result: "no-support" };
}
