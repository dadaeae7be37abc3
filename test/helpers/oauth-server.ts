// A real OAuth 2.0 authorization server for delegated-authentication tests (MSC3861): npm `oidc-provider`
// on a loopback port with token introspection (RFC 7662) and revocation (RFC 7009) on, a confidential
// client for Weft (one per client authentication method), and, per Matrix user, an "agent" client that
// obtains access tokens with the client_credentials grant and any scopes asked for; the provider adds
// the user's `sub` and `username` to its tokens (extraTokenClaims), which introspection returns. It also
// answers Matrix Authentication Service's introspection request (a shared secret at /oauth2/introspect).
import { createServer, type Server } from "node:http";
import { generateKeyPairSync } from "node:crypto";
import Provider from "oidc-provider";
import { fetch as undiciFetch } from "undici";
import { freePort } from "./server.ts";

type Payload = Record<string, unknown>;

const basic = (id: string, s: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(s)}`).toString("base64")}`;

const HOMESERVER_RESOURCE = "urn:weft:test:homeserver";
/** The shared secret of the server's Matrix Authentication Service face (`matrix_authentication_service.secret`). */
export const MAS_SECRET = "weft-test-mas-shared-secret-0123456789";
export const API_SCOPE = "urn:matrix:client:api:*";
export const deviceScope = (deviceId: string) => `urn:matrix:client:device:${deviceId}`;

/** Client-server endpoints a delegating server leaves to its authorization server (404 M_UNRECOGNIZED, as
 *  Synapse), as [method, path, body] for a session whose device is ALICEDEV. */
export const DELEGATED_ENDPOINTS = [
  ["POST", "/_matrix/client/v3/logout", {}],
  ["POST", "/_matrix/client/v3/logout/all", {}],
  ["POST", "/_matrix/client/v3/refresh", { refresh_token: "x" }],
  ["POST", "/_matrix/client/v3/account/password", { new_password: "pw" }],
  ["POST", "/_matrix/client/v3/account/deactivate", {}],
  ["POST", "/_matrix/client/v3/delete_devices", { devices: ["ALICEDEV"] }],
  ["DELETE", "/_matrix/client/v3/devices/ALICEDEV", {}],
  ["GET", "/_matrix/client/v3/register/available?username=newname", undefined],
  ["POST", "/_matrix/client/v3/account/3pid/email/requestToken", { client_secret: "abc", email: "a@example.org", send_attempt: 1 }],
] as const;

export interface WeftClient {
  client_id: string;
  client_auth_method: "client_secret_basic" | "client_secret_post" | "client_secret_jwt" | "private_key_jwt";
  client_secret?: string;
  jwk?: Record<string, unknown>;
}

export interface TestAuthServer {
  issuer: string;
  /** Weft's client registrations, by authentication method. */
  clients: Record<WeftClient["client_auth_method"], WeftClient>;
  /** How many introspection requests the provider answered. */
  introspections(): number;
  /**
   * An access token for `username` (sub `sub-<username>` unless given) with these scopes; `lifetime`
   * (seconds, default an hour) holds for every token of that username.
   */
  tokenFor(username: string, scopes: string[], opts?: { sub?: string; lifetime?: number }): Promise<string>;
  /** Revokes a token at the provider (RFC 7009), as its agent client. */
  revoke(username: string, token: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts the provider; `account_management_uri` is added to its metadata as MAS does (MSC2965). */
export async function startAuthServer(): Promise<TestAuthServer> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const store = new Map<string, Map<string, Payload>>();
  class Adapter {
    private readonly items: Map<string, Payload>;
    constructor(name: string) {
      this.items = store.get(name) ?? new Map();
      store.set(name, this.items);
    }
    async upsert(id: string, payload: Payload) { this.items.set(id, payload); }
    async find(id: string) { return this.items.get(id); }
    async findByUid(uid: string) { return [...this.items.values()].find((p) => p.uid === uid); }
    async findByUserCode(code: string) { return [...this.items.values()].find((p) => p.userCode === code); }
    async consume(id: string) { const p = this.items.get(id); if (p) p.consumed = Math.floor(Date.now() / 1000); }
    async destroy(id: string) { this.items.delete(id); }
    async revokeByGrantId(grantId: string) { for (const [id, p] of this.items) if (p.grantId === grantId) this.items.delete(id); }
  }

  const secret = "weft-delegation-secret-long-enough-for-hs256-000000";
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = { ...(privateKey.export({ format: "jwk" }) as Record<string, unknown>), kid: "weft-key-1", alg: "ES256" };
  const publicJwk = { ...(publicKey.export({ format: "jwk" }) as Record<string, unknown>), kid: "weft-key-1", alg: "ES256", use: "sig" };
  const clients: TestAuthServer["clients"] = {
    client_secret_basic: { client_id: "weft-basic", client_auth_method: "client_secret_basic", client_secret: secret },
    client_secret_post: { client_id: "weft-post", client_auth_method: "client_secret_post", client_secret: secret },
    client_secret_jwt: { client_id: "weft-jwt", client_auth_method: "client_secret_jwt", client_secret: secret },
    private_key_jwt: { client_id: "weft-pkjwt", client_auth_method: "private_key_jwt", jwk },
  };
  const agents = new Map<string, { username: string; sub: string; secret: string; lifetime?: number }>();
  let introspections = 0;

  const provider = new Provider(issuer, {
    adapter: Adapter,
    clients: Object.values(clients).map((c) => ({
      client_id: c.client_id,
      ...(c.client_secret ? { client_secret: c.client_secret } : { jwks: { keys: [publicJwk] } }),
      token_endpoint_auth_method: c.client_auth_method,
      ...(c.client_auth_method.endsWith("_jwt") ? { token_endpoint_auth_signing_alg: c.client_auth_method === "client_secret_jwt" ? "HS256" : "ES256" } : {}),
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    })),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // Matrix clients register themselves (MSC2966): the spec wants registration_endpoint in the metadata.
      registration: { enabled: true },
      introspection: { enabled: true, allowedPolicy: async () => true },
      // The Matrix scopes are dynamic (a device's id is in one), so tokens are issued for a resource server
      // (the homeserver) that accepts whichever scopes are asked for; without one only static scopes pass.
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => HOMESERVER_RESOURCE,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx: { oidc: { params: { scope?: string } } }) => ({ scope: ctx.oidc.params.scope ?? "", accessTokenFormat: "opaque" }),
      },
      revocation: { enabled: true, allowedPolicy: async (_ctx: unknown, client: { clientId: string }, token: { clientId: string }) => client.clientId === token.clientId },
    },
    discovery: { account_management_uri: `${issuer}/account/` },
    // An hour: tests move their servers' clocks ahead by minutes, and tokens must stay unexpired there.
    // (An agent made with a `lifetime` gets tokens of that many seconds.)
    ttl: { ClientCredentials: (_ctx: unknown, _token: unknown, client: { clientId: string }) => agents.get(client.clientId)?.lifetime ?? 3600 },
    cookies: { keys: ["test-cookie-key-one"] },
    async extraTokenClaims(_ctx: unknown, token: { clientId?: string }) {
      const agent = token.clientId ? agents.get(token.clientId) : undefined;
      return agent ? { sub: agent.sub, username: agent.username } : undefined;
    },
    async findAccount() { return undefined; },
  } as never);
  provider.use(async (ctx, next) => {
    // Matrix Authentication Service's shape (matrix_authentication_service): POST /oauth2/introspect with
    // its shared secret as a bearer token. Such a request is answered by the provider's own introspection
    // endpoint, as Weft's client (any other bearer is passed on as it is, and refused there).
    if (ctx.path === "/oauth2/introspect" && ctx.method === "POST") {
      ctx.path = "/token/introspection";
      if (ctx.get("authorization") === `Bearer ${MAS_SECRET}`) {
        const c = clients.client_secret_basic;
        ctx.request.headers.authorization = basic(c.client_id, c.client_secret!);
      }
    }
    if (ctx.path === "/token/introspection") introspections++;
    await next();
  });
  const server: Server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));

  async function agentFor(username: string, sub: string, lifetime?: number) {
    const clientId = `agent-${username}`;
    let agent = agents.get(clientId);
    if (!agent) {
      agent = { username, sub, secret: `agent-secret-${username}-0123456789abcdef`, lifetime };
      agents.set(clientId, agent);
      await new Adapter("Client").upsert(clientId, {
        client_id: clientId, client_secret: agent.secret, grant_types: ["client_credentials"], response_types: [], redirect_uris: [],
        token_endpoint_auth_method: "client_secret_basic",
      });
    }
    return { clientId, ...agent };
  }

  return {
    issuer,
    clients,
    introspections: () => introspections,
    async tokenFor(username, scopes, opts = {}) {
      const a = await agentFor(username, opts.sub ?? `sub-${username}`, opts.lifetime);
      const res = await undiciFetch(`${issuer}/token`, {
        method: "POST",
        headers: { authorization: basic(a.clientId, a.secret), "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "client_credentials", scope: scopes.join(" ") }).toString(),
      });
      const body = (await res.json()) as { access_token?: string };
      if (res.status !== 200 || !body.access_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async revoke(username, token) {
      const a = await agentFor(username, `sub-${username}`);
      const res = await undiciFetch(`${issuer}/token/revocation`, {
        method: "POST",
        headers: { authorization: basic(a.clientId, a.secret), "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token, token_type_hint: "access_token" }).toString(),
      });
      if (res.status !== 200) throw new Error(`revocation failed: ${res.status} ${await res.text()}`);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
