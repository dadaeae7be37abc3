// Metrics and health (issue 19 item 5): enable_metrics, Synapse's `type: metrics` listener and `metrics`
// resource, the Prometheus text parsed by a strict parser of our own (test/helpers/prometheus.ts), /health.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePrometheusText, sampleValue, type PromFamily } from "../helpers/prometheus.ts";
import { backends, freePort, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

async function scrape(url: string): Promise<Map<string, PromFamily>> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await res.text());
}

/** Polls `fn` until it holds (metrics are read, never waited for by sleeping). */
async function until(fn: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

describe.each(backends())("metrics (%s)", (backend) => {
  let t: TestServer;
  let metricsUrl: string;
  let alice: Session;

  beforeAll(async () => {
    const metricsPort = await freePort();
    t = await startTestServer({
      backend,
      config: {
        enable_metrics: true,
        listeners: [
          { port: 0, type: "http", bind_addresses: ["127.0.0.1"], resources: [{ names: ["client", "federation", "metrics"] }] },
          { port: metricsPort, type: "metrics", bind_addresses: ["127.0.0.1"] },
        ],
      },
    });
    metricsUrl = `${t.hs.metricsUrls[0]}/metrics`;
    expect(t.hs.metricsUrls[0]).toBe(`http://127.0.0.1:${metricsPort}`);
    alice = await registerUser(t, "alice");
  });
  afterAll(() => t?.close());

  it("counts HTTP requests by route pattern and status, with latency histograms", async () => {
    const roomId = await createRoom(t, alice, { name: "metrics" });
    for (const txn of ["a", "b"]) {
      const r = await t.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${txn}`, { token: alice.access_token, body: { msgtype: "m.text", body: txn } });
      expect(r.status).toBe(200);
    }
    const bad = await t.call("GET", "/_matrix/client/v3/rooms/!nope:weft.test/state", { token: alice.access_token });
    expect(bad.status).toBe(403);
    const m = await scrape(metricsUrl);
    const sendRoute = "/_matrix/client/v3/rooms/:roomId/send/:eventType/:txnId";
    expect(m.get("weft_http_requests_total")?.type).toBe("counter");
    expect(sampleValue(m, "weft_http_requests_total", { method: "PUT", route: sendRoute, status: "200" })).toBe(2);
    expect(sampleValue(m, "weft_http_requests_total", { method: "GET", route: "/_matrix/client/v3/rooms/:roomId/state", status: "403" })).toBe(1);
    expect(m.get("weft_http_request_duration_seconds")?.type).toBe("histogram");
    const send = { method: "PUT", route: sendRoute, status: "200" };
    expect(sampleValue(m, "weft_http_request_duration_seconds_count", send)).toBe(2);
    expect(sampleValue(m, "weft_http_request_duration_seconds_sum", send)).toBeGreaterThan(0);
    expect(sampleValue(m, "weft_http_request_duration_seconds_bucket", { ...send, le: "+Inf" })).toBe(2);
    // An unknown path is one bounded label, not its URL.
    await t.call("GET", "/_matrix/client/v3/no/such/thing");
    const after = await scrape(metricsUrl);
    expect(sampleValue(after, "weft_http_requests_total", { route: "unmatched", status: "404" })).toBeGreaterThanOrEqual(1);
    expect(after.get("weft_http_requests_total")!.samples.some((s) => s.labels.route?.includes("no/such"))).toBe(false);
  });

  it("counts persisted events, database query time, cache hits and sizes, process metrics", async () => {
    const before = sampleValue(await scrape(metricsUrl), "weft_events_persisted_total", { origin: "local" });
    const roomId = await createRoom(t, alice);
    const m = await scrape(metricsUrl);
    const created = sampleValue(m, "weft_events_persisted_total", { origin: "local" }) - before;
    // create, member, power levels, join rules, history visibility (at least)
    expect(created).toBeGreaterThanOrEqual(5);
    const msgs = await t.call("GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/messages?dir=b`, { token: alice.access_token });
    expect(msgs.json.chunk.length).toBe(created);

    expect(m.get("weft_db_query_duration_seconds")?.type).toBe("histogram");
    expect(sampleValue(m, "weft_db_query_duration_seconds_count", { client: "sql", operation: "all" })).toBeGreaterThan(0);
    expect(sampleValue(m, "weft_db_query_duration_seconds_count", { client: "sql", operation: "transaction" })).toBeGreaterThan(0);
    expect(m.get("weft_db_query_duration_seconds")!.samples.some((s) => s.name.endsWith("_count") && s.labels.client === "prisma" && s.value > 0)).toBe(true);

    expect(m.get("weft_cache_hits_total")?.type).toBe("counter");
    expect(m.get("weft_cache_size")!.samples.map((s) => s.labels.name)).toContain("event");
    expect(sampleValue(m, "weft_cache_max_size", { name: "event" })).toBeGreaterThan(0);
    // The event cache was read while the room was created and its messages served.
    expect(sampleValue(m, "weft_cache_hits_total", { name: "event" }) + sampleValue(m, "weft_cache_misses_total", { name: "event" })).toBeGreaterThan(0);
    expect(sampleValue(m, "weft_cache_weight_bytes", { name: "event" })).toBeGreaterThan(0);

    expect(sampleValue(m, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(sampleValue(m, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    for (const name of ["weft_federation_destination_queued_pdus", "weft_federation_destination_down", "weft_federation_destination_retry_interval_seconds", "weft_federation_transactions_sent_total"])
      expect(m.has(name), name).toBe(true);
  });

  it("shows open /sync long polls", async () => {
    const since = (await t.call("GET", "/_matrix/client/v3/sync?timeout=0", { token: alice.access_token })).json.next_batch;
    const gauge = async () => sampleValue(await scrape(metricsUrl), "weft_sync_connections");
    expect(await gauge()).toBe(0);
    const roomId = await createRoom(t, alice);
    const since2 = (await t.call("GET", `/_matrix/client/v3/sync?since=${since}&timeout=0`, { token: alice.access_token })).json.next_batch;
    const poll = t.call("GET", `/_matrix/client/v3/sync?since=${since2}&timeout=20000`, { token: alice.access_token });
    await until(async () => (await gauge()) === 1, "the long poll to show");
    await t.call("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/wake`, { token: alice.access_token, body: { msgtype: "m.text", body: "wake" } });
    expect((await poll).status).toBe(200);
    await until(async () => (await gauge()) === 0, "the long poll to end");
  });

  it("serves the same text at /_synapse/metrics on an http listener with the metrics resource", async () => {
    const res = await fetch(`${t.baseUrl}/_synapse/metrics`);
    expect(res.status).toBe(200);
    expect(parsePrometheusText(await res.text()).get("weft_http_requests_total")?.type).toBe("counter");
    const other = await fetch(`${t.hs.metricsUrls[0]}/elsewhere`);
    expect(other.status).toBe(404);
  });

  it("answers /health with OK", async () => {
    const res = await fetch(`${t.baseUrl}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await res.text()).toBe("OK");
  });
});

describe("metrics off", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      config: {
        listeners: [
          { port: 0, type: "http", bind_addresses: ["127.0.0.1"], resources: [{ names: ["client", "metrics"] }] },
          { port: await freePort(), type: "metrics", bind_addresses: ["127.0.0.1"] },
        ],
      },
    });
  });
  afterAll(() => t?.close());

  it("serves no metrics without enable_metrics, and still /health", async () => {
    expect(t.hs.metrics).toBeUndefined();
    expect(t.hs.metricsUrls).toEqual([]);
    const res = await t.call("GET", "/_synapse/metrics");
    expect(res.status).toBe(404);
    expect(res.json.errcode).toBe("M_UNRECOGNIZED");
    expect((await t.call("GET", "/health")).json).toBe("OK");
  });
});
