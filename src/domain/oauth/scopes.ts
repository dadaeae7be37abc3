// The Matrix scope tokens (spec v1.15 "Scope", MSC2967): `urn:matrix:client:api:*` (full Client-Server
// API access, required) and exactly one `urn:matrix:client:device:<device_id>` (the device the tokens
// belong to), with MSC2967's unstable `urn:matrix:org.matrix.msc2967.client:` forms accepted alike and
// granted as asked, and OpenID Connect's `openid` (an ID token, the userinfo endpoint: openid.ts). Other
// tokens are refused (invalid_scope): Weft grants nothing finer.
import { MatrixError } from "../errors.ts";

const API = ["urn:matrix:client:api:*", "urn:matrix:org.matrix.msc2967.client:api:*"];
/** OpenID Connect Core §3.1.2.1: an ID token (and the userinfo endpoint) for the user signing in. */
export const OPENID = "openid";
const DEVICE_PREFIXES = ["urn:matrix:client:device:", "urn:matrix:org.matrix.msc2967.client:device:"];
/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export interface GrantedScope {
  /** The scope tokens, in the order asked, duplicates dropped. */
  tokens: string[];
  deviceId: string;
}

const invalidScope = (why: string) => new MatrixError("invalid_scope", why, 400);

export function parseScope(scope: string | undefined): GrantedScope {
  if (scope === undefined || scope.trim() === "") throw invalidScope("scope is required");
  const tokens = [...new Set(scope.split(" ").filter((t) => t !== ""))];
  let deviceId: string | undefined;
  let api = false;
  for (const t of tokens) {
    if (!SCOPE_TOKEN.test(t)) throw invalidScope(`"${t}" is not a scope token`);
    if (API.includes(t)) {
      api = true;
      continue;
    }
    if (t === OPENID) continue;
    const prefix = DEVICE_PREFIXES.find((p) => t.startsWith(p));
    if (prefix === undefined) throw invalidScope(`scope token "${t}" is not supported`);
    if (deviceId !== undefined) throw invalidScope("exactly one device scope token is allowed");
    deviceId = t.slice(prefix.length);
    if (deviceId.length === 0 || deviceId.length > 255) throw invalidScope("the device ID must be 1 to 255 characters");
  }
  if (!api) throw invalidScope("scope must include urn:matrix:client:api:*");
  if (deviceId === undefined) throw invalidScope("scope must include one urn:matrix:client:device:<device_id>");
  return { tokens, deviceId };
}

/** Human-readable lines for the consent page, one per scope token. */
export function describeScope(scope: GrantedScope): string[] {
  return scope.tokens.map((t) =>
    API.includes(t) ? `Full access to your account (read and send messages, manage rooms, keys and settings)`
    : t === OPENID ? `Your Matrix user ID and display name`
    : `Sign in as the device ${scope.deviceId}`);
}
