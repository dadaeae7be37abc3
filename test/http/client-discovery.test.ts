// What clients discover beside the API, on SQLite and PostgreSQL and beside the pinned live Synapse with
// the same options: GET /.well-known/matrix/client (m.homeserver, m.identity_server from
// default_identity_server, extra_well_known_client_content, which may not set the server's own keys,
// MSC4143's org.matrix.msc4143.rtc_foci, CORS for browser clients such as Element Call) and MatrixRTC's
// GET /_matrix/client/unstable/org.matrix.msc4143/rtc/transports (MSC4143) with and without configured
// transports, for users, guests and callers without a token; the config's checks of the transports.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type JsonResponse, type TestServer } from "../helpers/server.ts";
import { registerUser } from "../helpers/users.ts";
import { startSynapse, type SynapseServer } from "../helpers/synapse.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { ConfigError, parseConfig } from "../../src/config/config.ts";

const TRANSPORTS = [
  { type: "livekit", livekit_service_url: "https://sfu.rtc.test/livekit/jwt" },
  { type: "org.example.other", url: "wss://other.rtc.test" },
];
const EXTRA = { "io.element.e2ee": { default: false } };
const OPTIONS = { matrix_rtc: { transports: TRANSPORTS }, extra_well_known_client_content: EXTRA, default_identity_server: "https://id.rtc.test", allow_guest_access: true };
const TRANSPORTS_PATH = "/_matrix/client/unstable/org.matrix.msc4143/rtc/transports";

/** One server under test with and without transports configured: Weft on a database, or Synapse. */
interface Pair {
  configured: { call: TestServer["call"]; baseUrl: string; token: string; guestToken: string };
  bare: { call: TestServer["call"]; token: string };
  close(): Promise<void>;
}

async function guestToken(call: TestServer["call"]): Promise<string> {
  const res = await call("POST", "/_matrix/client/v3/register?kind=guest", { body: {} });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.access_token;
}

const servers: [string, () => Promise<Pair>][] = [
  ...backends().map((backend): [string, () => Promise<Pair>] => [`Weft on ${backend}`, async () => {
    const [a, b] = await Promise.all([startTestServer({ backend, config: OPTIONS }), startTestServer({ backend, config: { experimental_features: { msc4143_enabled: true } } })]);
    return {
      configured: { call: a.call.bind(a), baseUrl: a.baseUrl, token: (await registerUser(a, "caller")).access_token, guestToken: await guestToken(a.call.bind(a)) },
      bare: { call: b.call.bind(b), token: (await registerUser(b, "caller")).access_token },
      close: async () => { await Promise.all([a.close(), b.close()]); },
    };
  }]),
  ["Synapse", async () => {
    // Synapse serves the client .well-known only with serve_client_wellknown, and MSC4143 only with its flag.
    const synapseOptions = { ...OPTIONS, serve_client_wellknown: true, experimental_features: { msc4143_enabled: true } };
    const [a, b]: SynapseServer[] = await Promise.all([startSynapse({ config: synapseOptions }), startSynapse({ config: { experimental_features: { msc4143_enabled: true } } })]);
    const call = (s: SynapseServer): TestServer["call"] => (m, p, o) => s.call(m, p, o);
    return {
      configured: { call: call(a), baseUrl: a.clientUrl, token: (await a.register("caller")).access_token, guestToken: await guestToken(call(a)) },
      bare: { call: call(b), token: (await b.register("caller")).access_token },
      close: async () => { await Promise.all([a.close(), b.close()]); },
    };
  }],
];

describe.each(servers)("client discovery on %s", (name, start) => {
  let p: Pair;
  beforeAll(async () => { p = await start(); }, 120_000);
  afterAll(async () => { await p?.close(); });

  it("serves the configured transports to a signed-in user, {} when none are configured", async () => {
    const res = await p.configured.call("GET", TRANSPORTS_PATH, { token: p.configured.token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json).toEqual({ rtc_transports: TRANSPORTS });
    const none = await p.bare.call("GET", TRANSPORTS_PATH, { token: p.bare.token });
    expect(none.status).toBe(200);
    expect(none.json).toEqual({});
  });

  it("refuses callers without a token and guests", async () => {
    const anon: JsonResponse = await p.configured.call("GET", TRANSPORTS_PATH);
    expect([anon.status, anon.json.errcode]).toEqual([401, "M_MISSING_TOKEN"]);
    const bad = await p.configured.call("GET", TRANSPORTS_PATH, { token: "not-a-token" });
    expect([bad.status, bad.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
    const guest = await p.configured.call("GET", TRANSPORTS_PATH, { token: p.configured.guestToken });
    expect([guest.status, guest.json.errcode]).toEqual([403, "M_GUEST_ACCESS_FORBIDDEN"]);
  });

  it("/.well-known/matrix/client carries the homeserver, the identity server, the extra content and rtc_foci", async () => {
    const res = await p.configured.call("GET", "/.well-known/matrix/client");
    expect(res.status).toBe(200);
    expectMatchesSpec(res, "GET", "/.well-known/matrix/client");
    expect(res.json["m.homeserver"].base_url.replace(/\/$/, "")).toBe(p.configured.baseUrl);
    expect(res.json["m.identity_server"]).toEqual({ base_url: "https://id.rtc.test" });
    expect(res.json["io.element.e2ee"]).toEqual({ default: false });
    // Weft offers the configured transports as Element Call's rtc_foci; Synapse only through
    // extra_well_known_client_content (the operator writes them twice there).
    if (!name.startsWith("Synapse")) expect(res.json["org.matrix.msc4143.rtc_foci"]).toEqual(TRANSPORTS);
  });

  it("answers browsers' CORS preflight and GET for /.well-known/matrix/client and the transports", async () => {
    for (const path of ["/.well-known/matrix/client", TRANSPORTS_PATH]) {
      const pre = await fetch(p.configured.baseUrl + path, {
        method: "OPTIONS",
        headers: { origin: "https://call.rtc.test", "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
      });
      expect(pre.status, path).toBeLessThan(300);
      expect(pre.headers.get("access-control-allow-origin"), path).toBe("*");
      expect(pre.headers.get("access-control-allow-headers")?.toLowerCase(), path).toContain("authorization");
      expect(pre.headers.get("access-control-allow-methods"), path).toContain("GET");
    }
    const get = await fetch(p.configured.baseUrl + "/.well-known/matrix/client", { headers: { origin: "https://call.rtc.test" } });
    expect(get.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("Weft's client discovery options", () => {
  let t: TestServer;
  beforeAll(async () => { t = await startTestServer({ config: { extra_well_known_client_content: { "org.matrix.msc4143.rtc_foci": [{ type: "livekit", livekit_service_url: "https://written.test" }] }, matrix_rtc: { transports: TRANSPORTS } } }); });
  afterAll(async () => { await t?.close(); });

  it("rtc_foci written in extra_well_known_client_content wins over the transports", async () => {
    const res = await t.call("GET", "/.well-known/matrix/client");
    expect(res.json["org.matrix.msc4143.rtc_foci"]).toEqual([{ type: "livekit", livekit_service_url: "https://written.test" }]);
  });

  it("/versions advertises MSC4143 once transports are configured; without them and the flag the endpoint is unknown, as on Synapse", async () => {
    const res = await t.call("GET", "/_matrix/client/versions");
    expect(res.json.unstable_features["org.matrix.msc4143"]).toBe(true);
    const plain = await startTestServer({});
    try {
      const token = (await registerUser(plain, "caller")).access_token;
      expect((await plain.call("GET", "/_matrix/client/versions")).json.unstable_features["org.matrix.msc4143"]).toBe(false);
      const res2 = await plain.call("GET", TRANSPORTS_PATH, { token });
      expect([res2.status, res2.json.errcode]).toEqual([404, "M_UNRECOGNIZED"]);
    } finally {
      await plain.close();
    }
  });

  it.each([
    [{ matrix_rtc: { transports: [{ type: "livekit" }] } }, "matrix_rtc.transports[0].livekit_service_url"],
    [{ matrix_rtc: { transports: [{ type: "livekit", livekit_service_url: "not a url" }] } }, "matrix_rtc.transports[0].livekit_service_url"],
    [{ matrix_rtc: { transports: [{ livekit_service_url: "https://x.test" }] } }, "matrix_rtc.transports[0].type"],
    [{ matrix_rtc: { transports: ["livekit"] } }, "matrix_rtc.transports[0]"],
    [{ matrix_rtc: { transports: { type: "livekit" } } }, "matrix_rtc.transports"],
    [{ extra_well_known_client_content: ["x"] }, "extra_well_known_client_content"],
    [{ default_identity_server: "id.example.org" }, "default_identity_server"],
    [{ extra_well_known_client_content: { "m.homeserver": { base_url: "https://elsewhere.test" } } }, "extra_well_known_client_content"],
    [{ extra_well_known_client_content: { "m.identity_server": { base_url: "https://id.test" } } }, "extra_well_known_client_content"],
  ])("refuses %j naming %s", (patch, option) => {
    let err: unknown;
    try {
      parseConfig({ server_name: "example.org", ...patch }, "/srv/weft");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(option);
  });
});
