// The OAuth pages' theme (Synapse's `templates.custom_template_directory`) over HTTP on SQLite and PostgreSQL:
// a custom login page is served (its marker, the values escaped, the same strict content security policy)
// and the code grant still completes through it with CSRF (openid-client exchanges the code); custom
// templates that would drop the CSRF field (no `{{ form_fields }}`, or one never output) are not used: the
// built-in page serves and a warning is logged; the custom stylesheet cannot close its <style> element.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as oidc from "openid-client";
import pino from "pino";
import { fetch as undiciFetch } from "undici";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { OAuthAgent, readForm } from "../helpers/oauth-agent.ts";

const EVIL_NAME = `<script>alert("x")</script> & co`;
const CLIENT = {
  client_name: EVIL_NAME,
  client_uri: "https://client.example.org/",
  redirect_uris: ["https://app.client.example.org/callback"],
  response_types: ["code"],
  grant_types: ["authorization_code", "refresh_token"],
  token_endpoint_auth_method: "none",
  application_type: "web",
};

const TEMPLATES: Record<string, string> = {
  // A themed sign-in page: other words and layout, the same fields; {{ client_name }} escaped by the server.
  "oauth_login.html": `<div class="themed">THEMED-LOGIN-MARKER
    {# a comment the page does not show #}
    <h1>Welcome to {{ server_name }}</h1>
    {% if client_name %}<p class="who">{{ client_name }} asks for your account.</p>{% endif %}
    {% if error %}<p class="error" role="alert" id="error">{{ error }}</p>{% endif %}
    <form method="post" action="{{ form_action }}">{{ form_fields }}
      <label for="username">Username</label><input type="text" id="username" name="username" required value="{{ username }}">
      <label for="password">Password</label><input type="password" id="password" name="password" required>
      <button type="submit" name="action" value="login">Sign in</button>
      {% if client_name %}<button type="submit" name="action" value="deny" formnovalidate>Cancel</button>{% endif %}
    </form></div>`,
  // No {{ form_fields }}: the built-in consent page serves instead.
  "oauth_consent.html": `THEMED-CONSENT-MARKER <form method="post" action="{{ form_action }}"><button type="submit" name="action" value="consent">Allow</button></form>`,
  // Names {{ form_fields }} but never outputs it: the rendered page's form lacks the token, the built-in page serves.
  "oauth_device.html": `THEMED-DEVICE-MARKER <form method="post" action="{{ form_action }}">{% if not form_fields %}{{ form_fields }}{% endif %}` +
    `<label for="user_code">Code</label><input type="text" id="user_code" name="user_code"><button type="submit" name="action" value="code">Continue</button></form>`,
  // A syntax error (an expression): the built-in error page serves.
  "oauth_error.html": `THEMED-ERROR-MARKER {{ description.constructor("return process")() }}`,
  "oauth_style.css": `.themed{color:#123456}</style><script>alert(1)</script>`,
};

describe.each(backends())("themed OAuth pages (templates.custom_template_directory) on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let dir: string;
  const logged: string[] = [];
  const log = pino({ level: "warn" }, new Writable({ write(chunk, _enc, done) { logged.push(String(chunk)); done(); } }));

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "weft-oauth-theme-"));
    for (const [name, text] of Object.entries(TEMPLATES)) writeFileSync(path.join(dir, name), text);
    t = await startTestServer({
      backend, log,
      config: {
        templates: { custom_template_directory: dir },
        oauth_server: { enabled: true, rc_client_registration: { per_second: 1000, burst_count: 1000 }, rc_authorization: { per_second: 1000, burst_count: 1000 }, rc_token: { per_second: 1000, burst_count: 1000 } },
      },
    });
    alice = await registerUser(t, "alice");
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const oauthClient = () =>
    oidc.dynamicClientRegistration(new URL(t.config.public_baseurl), CLIENT, oidc.None(), { algorithm: "oauth2", execute: [oidc.allowInsecureRequests] });
  const authorizationUrl = async (config: oidc.Configuration) => {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CLIENT.redirect_uris[0]!,
      scope: "urn:matrix:client:api:* urn:matrix:client:device:THEMEDEV01",
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
    });
    return { url: url.href, verifier, state };
  };

  it("reports the templates it cannot use at startup, naming them", () => {
    const warnings = logged.map((l) => JSON.parse(l) as { template?: string; msg: string });
    expect(warnings.find((w) => w.template === "oauth_consent.html")?.msg).toContain("{{ form_fields }}");
    expect(warnings.find((w) => w.template === "oauth_error.html")?.msg).toContain("syntax error");
    expect(warnings.some((w) => w.template === "oauth_login.html")).toBe(false);
  });

  it("serves the custom login page (values escaped, the same script-free CSP) and the code grant completes through it with CSRF", async () => {
    const config = await oauthClient();
    const { url, verifier, state } = await authorizationUrl(config);
    const agent = new OAuthAgent();
    const login = await agent.open(url);
    expect(login.status).toBe(200);
    expect(login.text).toContain("THEMED-LOGIN-MARKER");
    expect(login.text).not.toContain("a comment the page does not show");
    expect(login.text).toContain(`<p class="who">&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; co asks for your account.</p>`);
    // The only <script> text is the stylesheet's, inert inside the one <style> element.
    expect(login.text.split("</style>")).toHaveLength(2);
    expect(login.text.split("</style>")[1]).not.toContain("<script");
    const headers = (await undiciFetch(url, { redirect: "manual" })).headers;
    expect(headers.get("content-security-policy")).toBe(`default-src 'none'; style-src 'unsafe-inline'; form-action 'self' https://app.client.example.org; frame-ancestors 'none'`);
    // The custom stylesheet is used, and cannot end the <style> element to add markup.
    expect(login.text).toContain(".themed{color:#123456}<\\/style>");
    const form = readForm(login.text, login.url)!;
    expect(form.labelled).toEqual({ username: "Username", password: "Password" });
    expect(form.hidden.csrf).toBe(agent.cookie("weft_oauth_csrf"));
    expect(form.hidden.state).toBe(state);

    // A forged token is refused as on the built-in page.
    const forged = await agent.submit(login, "login", { username: "alice", password: "password" }, { override: { csrf: "forged" } });
    expect(forged.status).toBe(403);
    expect(forged.text).not.toContain("THEMED-ERROR-MARKER");
    expect(forged.text).toContain("This application cannot sign you in");

    const wrong = await agent.submit(login, "login", { username: "alice", password: "wrong" });
    expect(wrong.status).toBe(403);
    expect(wrong.text).toContain("THEMED-LOGIN-MARKER");
    expect(wrong.text).toContain('role="alert"');

    // The custom consent template lacks {{ form_fields }}: the built-in page, with the token, serves.
    const consent = await agent.submit(wrong, "login", { username: "alice", password: "password" });
    expect(consent.status).toBe(200);
    expect(consent.text).not.toContain("THEMED-CONSENT-MARKER");
    expect(consent.text).toContain(`<span id="client-name">&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; co</span>`);
    expect(readForm(consent.text, consent.url)!.hidden.csrf).toBe(form.hidden.csrf);

    const done = await agent.submit(consent, "consent");
    expect(done.status).toBe(303);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: state });
    const me = await t.call("GET", "/_matrix/client/v3/account/whoami", { token: tokens.access_token });
    expect(me.json).toMatchObject({ user_id: alice.user_id, device_id: "THEMEDEV01" });
  });

  it("a custom form page whose form would render without the CSRF field is replaced by the built-in page, with a warning", async () => {
    const agent = new OAuthAgent();
    const page = await agent.open(new URL("/_weft/oauth2/device/verify", t.baseUrl).href);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain("THEMED-DEVICE-MARKER");
    expect(page.text).toContain("Enter the code your device shows.");
    expect(readForm(page.text, page.url)!.hidden.csrf).toBe(agent.cookie("weft_oauth_csrf"));
    expect(logged.some((l) => l.includes("oauth_device.html") && l.includes("without the CSRF field"))).toBe(true);
  });
});
