// OpenID Connect Core 1.0 on Weft's own OAuth 2.0 server, for clients that sign in with the `openid`
// scope (oidc-client-ts, generic OIDC libraries): the token endpoint adds an ID token (§2, §3.1.3.3) — a
// JWT signed ES256 with `iss` (the issuer), `sub` (the Matrix user ID), `aud` (the client), `iat`, `exp`,
// the request's `nonce` and `at_hash` (§3.1.3.6) —, the key is published at `jwks_uri` (RFC 7517), and the
// userinfo endpoint (§5.3) answers `sub`, `preferred_username` and `name` for an access token granted
// `openid`. The P-256 key is derived from the server's signing key (HKDF-SHA256), so every process and
// every restart signs with the same key without storing another secret; a new server key rotates it.
import { createECDH, createHash, createPrivateKey, hkdfSync, type KeyObject } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { jwsSign } from "../oauth-delegation/client-auth.ts";
import { getProfileField } from "../profile/profile.ts";
import { OPENID } from "./scopes.ts";

export const ID_TOKEN_ALG = "ES256";
/** How long an ID token is valid for (it proves a sign-in; the access token has its own lifetime). */
const ID_TOKEN_LIFETIME_S = 3600;

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");

function idTokenKey(s: Services): { key: KeyObject; jwk: Record<string, string> } {
  const cached = s.processState.oauthIdTokenKey;
  if (cached) return cached;
  const seed = s.signingKeys[0]!.seed;
  // An HKDF output is a valid P-256 scalar but with probability ~2^-32; the counter covers that case.
  for (let i = 0; ; i++) {
    const d = Buffer.from(hkdfSync("sha256", seed, "weft-oauth-id-token", `es256 key ${i}`, 32));
    const ecdh = createECDH("prime256v1");
    try {
      ecdh.setPrivateKey(d);
    } catch {
      continue;
    }
    const pub = ecdh.getPublicKey();
    const x = b64url(pub.subarray(1, 33));
    const y = b64url(pub.subarray(33, 65));
    const kid = b64url(createHash("sha256").update(`${x}.${y}`).digest().subarray(0, 12));
    const key = createPrivateKey({ key: { kty: "EC", crv: "P-256", x, y, d: b64url(d) }, format: "jwk" });
    const made = { key, jwk: { kty: "EC", crv: "P-256", x, y, kid, use: "sig", alg: ID_TOKEN_ALG } };
    s.processState.oauthIdTokenKey = made;
    return made;
  }
}

/** The JWK set of jwks_uri: the ID token signing key's public half. */
export function jwks(s: Services): { keys: Record<string, string>[] } {
  return { keys: [idTokenKey(s).jwk] };
}

export function grantsOpenId(scope: string): boolean {
  return scope.split(" ").includes(OPENID);
}

/** An ID token for the user's sign-in at the client, bound to its access token (at_hash). */
export function idToken(s: Services, claims: { clientId: string; userId: string; accessToken: string; nonce?: string | null }): string {
  const { key, jwk } = idTokenKey(s);
  const iat = Math.floor(s.clock.now() / 1000);
  const atHash = b64url(createHash("sha256").update(claims.accessToken).digest().subarray(0, 16));
  const header = b64url(JSON.stringify({ alg: ID_TOKEN_ALG, typ: "JWT", kid: jwk.kid }));
  const payload = b64url(JSON.stringify({
    iss: s.config.public_baseurl, sub: claims.userId, aud: claims.clientId, iat, exp: iat + ID_TOKEN_LIFETIME_S, at_hash: atHash,
    ...(claims.nonce ? { nonce: claims.nonce } : {}),
  }));
  const input = `${header}.${payload}`;
  return `${input}.${b64url(jwsSign(ID_TOKEN_ALG, key, Buffer.from(input)))}`;
}

/** The userinfo endpoint's claims for the requester's access token, which must have been granted `openid`. */
export async function userinfo(s: Services, r: Requester): Promise<Record<string, string>> {
  const grant = r.deviceId ? await s.oauth.getGrant(r.userId, r.deviceId) : undefined;
  if (!grant || !grantsOpenId(grant.scope)) throw new MatrixError("insufficient_scope", "The access token was not granted the openid scope", 403);
  const name = await getProfileField(s, r, r.userId, "displayname").catch(() => undefined);
  return { sub: r.userId, preferred_username: r.userId.slice(1, r.userId.indexOf(":")), ...(typeof name === "string" ? { name } : {}) };
}
