// Per-user upload quotas (Synapse's `media_upload_limits`) on SQLite and PostgreSQL, beside the pinned
// live Synapse with the same limits and assertions: uploads within every period's quota pass; one that
// would pass a quota is refused with 403 and spec v1.18's M_USER_LIMIT_EXCEEDED (MSC4335) with the
// limit's `info_uri` and `can_upgrade`, or the server's own page about the limits (which it serves) — whether
// its size is announced (Content-Length) or only known once received (chunked), through POST /upload and
// through PUT /upload/{serverName}/{mediaId} after /create; nothing of a refused upload is kept; another
// user's quota is their own; the config's checks of the option.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { startSynapse } from "../helpers/synapse.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { ConfigError, parseConfig } from "../../src/config/config.ts";

const KB = 1024;
const INFO = "https://quota.test/about";
const LIMITS = [{ time_period: "1h", max_size: "60K", info_uri: INFO, can_upgrade: true }, { time_period: "1d", max_size: "100K" }];

interface Home {
  baseUrl: string;
  call: TestServer["call"];
  register(localpart: string): Promise<Session>;
  weft: boolean;
  close(): Promise<void>;
}

const homesWith = (limits: unknown[]): [string, () => Promise<Home>][] => [
  ...backends().map((backend): [string, () => Promise<Home>] => [`Weft on ${backend}`, async () => {
    const t = await startTestServer({ backend, config: { media_upload_limits: limits } });
    return { baseUrl: t.baseUrl, call: t.call.bind(t), register: (l) => registerUser(t, l), weft: true, close: () => t.close() };
  }]),
  ["Synapse", async () => {
    const s = await startSynapse({ config: { media_upload_limits: limits } });
    return { baseUrl: s.clientUrl, call: (m, p, o) => s.call(m, p, o), register: (l) => s.register(l), weft: false, close: () => s.close() };
  }],
];
const homes = homesWith(LIMITS);

/** Uploads `size` bytes to `baseUrl`; `chunked` sends no Content-Length (the size is known only once received). */
async function uploadTo(baseUrl: string, who: Session, size: number, opts: { chunked?: boolean; path?: string; method?: string } = {}) {
  const bytes = new Uint8Array(size).fill(120);
  const body = opts.chunked ? new ReadableStream({ start(c) { c.enqueue(bytes); c.close(); } }) : bytes;
  const res = await fetch(baseUrl + (opts.path ?? "/_matrix/media/v3/upload?filename=q.bin"), {
    method: opts.method ?? "POST",
    headers: { authorization: `Bearer ${who.access_token}`, "content-type": "application/octet-stream" },
    body,
    ...(opts.chunked ? { duplex: "half" } : {}),
  } as RequestInit);
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

describe.each(homes)("upload quotas on %s", (_name, start) => {
  let home: Home;
  let alice: Session, bob: Session;

  const upload = (who: Session, size: number, opts: { chunked?: boolean; path?: string; method?: string } = {}) => uploadTo(home.baseUrl, who, size, opts);
  const expectRefused = (res: { status: number; json: any }) => {
    expect(res.status, JSON.stringify(res.json)).toBe(403);
    // Every refusal here is the hour's quota, whose info_uri and can_upgrade are configured.
    expect(res.json).toEqual({ errcode: "M_USER_LIMIT_EXCEEDED", error: expect.any(String), info_uri: INFO, can_upgrade: true });
  };

  beforeAll(async () => {
    home = await start();
    [alice, bob] = [await home.register("alice"), await home.register("bob")];
  }, 120_000);
  afterAll(async () => { await home?.close(); });

  it("passes uploads within the quotas and refuses one that would pass the hour's, announced or chunked", async () => {
    const first = await upload(alice, 40 * KB);
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    if (home.weft) expectMatchesSpec(first, "POST", "/_matrix/media/v3/upload");
    expectRefused(await upload(alice, 30 * KB)); // 70K > 60K in the hour
    if (home.weft) {
      // Synapse takes no upload without a Content-Length (400 M_UNKNOWN); Weft takes chunked uploads and
      // checks the quota once it knows the size.
      expectRefused(await upload(alice, 30 * KB, { chunked: true }));
    }
    // The refused uploads were not counted: 20K more still fits the hour's 60K.
    expect((await upload(alice, 20 * KB, { chunked: home.weft })).status).toBe(200);
    expectRefused(await upload(alice, 1 * KB));
    // Bob's quota is his own.
    expect((await upload(bob, 50 * KB)).status).toBe(200);
  });

  it("refuses content for a /create'd mxc URI that would pass the quota; the URI stays unfilled", async () => {
    const created = await home.call("POST", "/_matrix/media/v1/create", { token: bob.access_token, body: {} });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const [serverName, mediaId] = (created.json.content_uri as string).slice("mxc://".length).split("/");
    const path = `/_matrix/media/v3/upload/${serverName}/${mediaId}?filename=q.bin`;
    expectRefused(await upload(bob, 20 * KB, { path, method: "PUT" })); // 70K > 60K
    const get = await fetch(`${home.baseUrl}/_matrix/client/v1/media/download/${serverName}/${mediaId}?timeout_ms=0`, { headers: { authorization: `Bearer ${bob.access_token}` } });
    expect(get.status).toBe(504); // still M_NOT_YET_UPLOADED
    expect((await upload(bob, 5 * KB, { path, method: "PUT" })).status).toBe(200);
  });
});

describe.each(homesWith([{ time_period: "1d", max_size: "10K" }]))("a quota without info_uri on %s", (_name, start) => {
  let home: Home;
  beforeAll(async () => { home = await start(); }, 120_000);
  afterAll(async () => { await home?.close(); });

  it("names the server's own page about upload limits, which it serves", async () => {
    const erin = await home.register("erin");
    const res = await uploadTo(home.baseUrl, erin, 11 * 1024);
    expect(res.status, JSON.stringify(res.json)).toBe(403);
    expect(res.json).toEqual({ errcode: "M_USER_LIMIT_EXCEEDED", error: expect.any(String), info_uri: `${home.baseUrl}/_synapse/client/media_upload_limit_exceeded` });
    const page = await fetch(res.json.info_uri);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await page.text()).toContain("media upload limit");
  });
});

describe("media_upload_limits in the config", () => {
  it.each([
    [[{ max_size: "1M" }], "media_upload_limits[0].time_period"],
    [[{ time_period: "1d" }], "media_upload_limits[0].max_size"],
    [[{ time_period: "1d", max_size: "lots" }], "media_upload_limits[0].max_size"],
    [[{ time_period: "1d", max_size: "1M", info_uri: "not a url" }], "media_upload_limits[0].info_uri"],
    [["1M"], "media_upload_limits[0]"],
    [[{ time_period: "1d", max_size: "1M", can_upgrade: "yes" }], "media_upload_limits[0].can_upgrade"],
  ])("refuses %j naming %s", (limits, option) => {
    let err: unknown;
    try {
      parseConfig({ server_name: "example.org", media_upload_limits: limits }, "/srv/weft");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(option);
  });
});
