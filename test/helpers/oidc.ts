// A real OpenID provider for SSO tests: `oidc-provider` on a loopback port with its development login and
// consent pages, an in-memory store the test can reach into (to expire an authorization code), and a
// browser-less "user agent" that follows redirects with a cookie jar and submits the provider's forms.
import { createServer, type Server } from "node:http";
import Provider from "oidc-provider";
import { fetch as undiciFetch } from "undici";
import { freePort } from "./server.ts";

type Payload = Record<string, unknown> & { exp?: number; grantId?: string; uid?: string; userCode?: string; consumed?: number };

/** oidc-provider's storage, kept in maps the test can read and change. */
export class MemoryAdapter {
  static models = new Map<string, Map<string, Payload>>();
  private readonly items: Map<string, Payload>;
  constructor(readonly name: string) {
    const existing = MemoryAdapter.models.get(name);
    this.items = existing ?? new Map();
    if (!existing) MemoryAdapter.models.set(name, this.items);
  }
  async upsert(id: string, payload: Payload, expiresIn?: number) {
    this.items.set(id, { ...payload, ...(expiresIn ? { exp: payload.exp ?? Math.floor(Date.now() / 1000) + expiresIn } : {}) });
  }
  async find(id: string) {
    return this.items.get(id);
  }
  async findByUid(uid: string) {
    return [...this.items.values()].find((p) => p.uid === uid);
  }
  async findByUserCode(code: string) {
    return [...this.items.values()].find((p) => p.userCode === code);
  }
  async consume(id: string) {
    const p = this.items.get(id);
    if (p) p.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    this.items.delete(id);
  }
  async revokeByGrantId(grantId: string) {
    for (const [id, p] of this.items) if (p.grantId === grantId) this.items.delete(id);
  }
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Expires every authorization code issued so far (as if its lifetime had passed). */
  expireCodes(): void;
  close(): Promise<void>;
}

export interface OidcAccount {
  sub: string;
  preferred_username?: string;
  name?: string;
  email?: string;
}

/** Starts the provider; `accounts` are the users its login page accepts (login = their sub). */
export async function startOidcProvider(redirectUri: string, accounts: OidcAccount[]): Promise<TestOidcProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = "weft-test";
  const clientSecret = "weft-test-secret-which-is-long-enough";
  MemoryAdapter.models.clear();
  const provider = new Provider(issuer, {
    adapter: MemoryAdapter,
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    }],
    claims: { openid: ["sub"], profile: ["name", "preferred_username"], email: ["email"] },
    scopes: ["openid", "profile", "email"],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ["test-cookie-key-one"] },
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts.find((a) => a.sub === id);
      if (!account) return undefined;
      return { accountId: id, async claims() { return { ...account }; } };
    },
  });
  const server: Server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    issuer,
    clientId,
    clientSecret,
    expireCodes() {
      for (const p of MemoryAdapter.models.get("AuthorizationCode")?.values() ?? []) p.exp = Math.floor(Date.now() / 1000) - 60;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A browser without a screen: a cookie jar (by name, enough for one flow) and manual redirects. */
export class Browser {
  private readonly jar = new Map<string, string>();

  private store(setCookies: string[]) {
    for (const line of setCookies) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split("=")[1]!) < Date.now()));
      if (expired || value === "") this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  cookie(name: string): string | undefined {
    return this.jar.get(name);
  }

  setCookie(name: string, value: string) {
    this.jar.set(name, value);
  }

  /** One request, no redirect followed. */
  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}) {
    const headers: Record<string, string> = {};
    if (this.jar.size) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ");
    let body: string | undefined;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    }
    const res = await undiciFetch(url, { method: init.method ?? (body ? "POST" : "GET"), headers, body, redirect: "manual" });
    this.store(res.headers.getSetCookie());
    const text = await res.text();
    const location = res.headers.get("location");
    return { status: res.status, location: location ? new URL(location, url).href : undefined, text, url };
  }

  /**
   * Follows redirects from `url`, filling the provider's login form (as `login`) and consent form on the
   * way, until a URL for which `stop` says true (not fetched) or a page that is neither form.
   */
  async run(url: string, login: string, stop: (url: string) => boolean) {
    let next: { url: string; form?: Record<string, string> } | undefined = { url };
    for (let hops = 0; hops < 20 && next; hops++) {
      if (stop(next.url)) return { stoppedAt: next.url };
      const res = await this.request(next.url, { form: next.form });
      if (res.location) { next = { url: res.location }; continue; }
      const action = /<form[^>]*action="([^"]+)"/.exec(res.text)?.[1];
      const prompt = /name="prompt" value="([^"]+)"/.exec(res.text)?.[1];
      if (res.status === 200 && action && prompt === "login") next = { url: new URL(action, res.url).href, form: { prompt: "login", login, password: "any" } };
      else if (res.status === 200 && action && prompt === "consent") next = { url: new URL(action, res.url).href, form: { prompt: "consent" } };
      else return { final: res };
    }
    throw new Error("too many redirects");
  }
}
