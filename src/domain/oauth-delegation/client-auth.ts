// How Weft authenticates itself to the authorization server's introspection endpoint: the client
// authentication methods of RFC 6749 §2.3.1 (client_secret_basic, client_secret_post) and RFC 7523 /
// OpenID Connect Core §9 (client_secret_jwt: an HS256 assertion; private_key_jwt: one signed with the
// configured JWK), or Matrix Authentication Service's shared secret as a bearer token.
import { createHash, createHmac, createPrivateKey, randomBytes, sign, timingSafeEqual, type KeyObject } from "node:crypto";
import type { OAuthDelegationConfig } from "../../config/oauth-delegation.ts";

const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const ASSERTION_LIFETIME_S = 120;

/** Whether a presented secret is the configured one (compared in constant time, over digests). */
export function sameSecret(presented: string, configured: string): boolean {
  const digest = (t: string) => createHash("sha256").update(t).digest();
  return timingSafeEqual(digest(presented), digest(configured));
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");

/** RFC 6749 §2.3.1: the id and secret are form-encoded before they go into the Basic header. */
const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");

interface SigningKey {
  key: KeyObject;
  alg: string;
  kid?: string;
}

/** The JWS algorithm for a JWK: its `alg`, else the usual one for its key type and curve. */
function signingKey(jwk: Record<string, unknown>): SigningKey {
  const key = createPrivateKey({ key: jwk as never, format: "jwk" });
  const crv = jwk.crv;
  const alg = typeof jwk.alg === "string" ? jwk.alg
    : jwk.kty === "RSA" ? "RS256"
    : jwk.kty === "EC" ? (crv === "P-384" ? "ES384" : crv === "P-521" ? "ES512" : "ES256")
    : "EdDSA";
  return { key, alg, kid: typeof jwk.kid === "string" ? jwk.kid : undefined };
}

/** A JWS signature of `input` (RFC 7515) with `alg`'s algorithm. */
export function jwsSign(alg: string, key: KeyObject, input: Buffer): Buffer {
  if (alg === "EdDSA") return sign(null, input, key);
  const hash = `sha${alg.slice(2)}`;
  if (alg.startsWith("ES")) return sign(hash, input, { key, dsaEncoding: "ieee-p1363" });
  if (alg.startsWith("PS")) return sign(hash, input, { key, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: Number(alg.slice(2)) / 8 });
  return sign(hash, input, key);
}

function assertionClaims(clientId: string, audience: string, now: number) {
  const iat = Math.floor(now / 1000);
  return { iss: clientId, sub: clientId, aud: audience, jti: b64url(randomBytes(16)), iat, exp: iat + ASSERTION_LIFETIME_S };
}

/** Signs JWT client assertions for one configuration (the private key is parsed once). */
export class ClientAuthenticator {
  private key: SigningKey | undefined;
  constructor(private readonly client: OAuthDelegationConfig["client"]) {
    if (client.method === "private_key_jwt") this.key = signingKey(client.jwk!);
  }

  /** Adds the credentials to a form request to `endpoint` (headers and form fields are changed in place). */
  apply(endpoint: string, headers: Record<string, string>, form: URLSearchParams, now: number): void {
    const c = this.client;
    switch (c.method) {
      case "bearer":
        headers.authorization = `Bearer ${c.secret}`;
        return;
      case "client_secret_basic":
        headers.authorization = `Basic ${Buffer.from(`${formEncode(c.client_id)}:${formEncode(c.client_secret!)}`).toString("base64")}`;
        return;
      case "client_secret_post":
        form.set("client_id", c.client_id);
        form.set("client_secret", c.client_secret!);
        return;
      case "client_secret_jwt": {
        const input = `${b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${b64url(JSON.stringify(assertionClaims(c.client_id, endpoint, now)))}`;
        const sig = createHmac("sha256", c.client_secret!).update(input).digest();
        form.set("client_id", c.client_id);
        form.set("client_assertion_type", ASSERTION_TYPE);
        form.set("client_assertion", `${input}.${b64url(sig)}`);
        return;
      }
      case "private_key_jwt": {
        const k = this.key!;
        const header = { alg: k.alg, typ: "JWT", ...(k.kid ? { kid: k.kid } : {}) };
        const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(assertionClaims(c.client_id, endpoint, now)))}`;
        form.set("client_id", c.client_id);
        form.set("client_assertion_type", ASSERTION_TYPE);
        form.set("client_assertion", `${input}.${b64url(jwsSign(k.alg, k.key, Buffer.from(input)))}`);
        return;
      }
    }
  }
}
