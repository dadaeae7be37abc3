// Phone-number requestToken endpoints on SQLite and PostgreSQL: the body is checked as Synapse checks it,
// then the answer is Synapse's without an SMS delegate (register: 400 M_UNKNOWN; adding a number:
// 400 M_THREEPID_MEDIUM_NOT_SUPPORTED) — never a 404 or a 500, and nothing stored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";

const V3 = "/_matrix/client/v3";
const good = { client_secret: "secret-1", country: "GB", phone_number: "07700 900123", send_attempt: 1 };

describe.each(backends())("msisdn requestToken (%s)", (backend) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });
  const post = (path: string, body: unknown) => t.call("POST", `${V3}${path}`, { body });
  const sessions = async () => Number((await t.hs.services.storage.sql.get<{ n: number | string }>(`SELECT COUNT(*) AS n FROM threepid_validation_sessions`))?.n ?? 0);

  it("answers as Synapse does without an SMS delegate", async () => {
    const before = await sessions();
    const reg = await post("/register/msisdn/requestToken", good);
    expect([reg.status, reg.json.errcode]).toEqual([400, "M_UNKNOWN"]);
    expect(reg.json.error).toMatch(/phone number/i);
    const add = await post("/account/3pid/msisdn/requestToken", { ...good, next_link: "https://client.example/done" });
    expect([add.status, add.json.errcode]).toEqual([400, "M_THREEPID_MEDIUM_NOT_SUPPORTED"]);
    const r0 = await t.call("POST", "/_matrix/client/r0/register/msisdn/requestToken", { body: good });
    expect(r0.status).toBe(400);
    expect(await sessions()).toBe(before);
  });

  it("refuses bad bodies with the spec's errors first", async () => {
    const cases: [unknown, string][] = [
      [{ country: "GB", phone_number: "07700900123", send_attempt: 1 }, "M_MISSING_PARAM"],
      [{ client_secret: "s", phone_number: "07700900123", send_attempt: 1 }, "M_MISSING_PARAM"],
      [{ client_secret: "s", country: "GB", send_attempt: 1 }, "M_MISSING_PARAM"],
      [{ client_secret: "s", country: "GB", phone_number: "07700900123" }, "M_MISSING_PARAM"],
      [{ ...good, client_secret: "has space" }, "M_INVALID_PARAM"],
      [{ ...good, client_secret: 7 }, "M_BAD_JSON"],
      [{ ...good, phone_number: "call me" }, "M_INVALID_PARAM"],
      [{ ...good, country: "Britain" }, "M_INVALID_PARAM"],
      [{ ...good, send_attempt: "1" }, "M_INVALID_PARAM"],
      [{ ...good, next_link: 5 }, "M_BAD_JSON"],
    ];
    for (const path of ["/register/msisdn/requestToken", "/account/3pid/msisdn/requestToken"]) {
      for (const [body, errcode] of cases) {
        const r = await post(path, body);
        expect([r.status, r.json.errcode], `${path} ${JSON.stringify(body)}`).toEqual([400, errcode]);
      }
      const notJson = await fetch(`${t.baseUrl}${V3}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
      expect(notJson.status).toBe(400);
      expect(((await notJson.json()) as { errcode: string }).errcode).toBe("M_NOT_JSON");
    }
  });
});

describe("msisdn requestToken with enable_3pid_changes off", () => {
  it("refuses adding a number as the e-mail endpoint does", async () => {
    const t = await startTestServer({ config: { enable_3pid_changes: false } });
    try {
      const r = await t.call("POST", `${V3}/account/3pid/msisdn/requestToken`, { body: good });
      expect([r.status, r.json.errcode]).toEqual([400, "M_FORBIDDEN"]);
    } finally {
      await t.close();
    }
  });
});
