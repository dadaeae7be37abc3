// Application service registration files (app_service_config_files): every field Synapse reads, validated
// at start with a message naming the file and the field; namespaces matched as Synapse matches them
// (Python's re.match: anchored at the start); duplicate ids and tokens refused.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { ConfigError, parseConfig } from "../../src/config/config.ts";
import { compileNamespaceRegex } from "../../src/config/appservices.ts";

const base = { server_name: "example.org" };
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "weft-as-config-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const valid = (): Record<string, unknown> => ({
  id: "bridge",
  url: "http://localhost:9000/",
  as_token: "as-secret",
  hs_token: "hs-secret",
  sender_localpart: "bridgebot",
  namespaces: { users: [{ exclusive: true, regex: "@bridge_.*:example.org" }] },
});

let n = 0;
function write(reg: unknown, raw?: string): string {
  const file = path.join(dir, `reg-${++n}.yaml`);
  writeFileSync(file, raw ?? YAML.stringify(reg));
  return file;
}

const load = (...files: string[]) => parseConfig({ ...base, app_service_config_files: files }, dir);

/** The start-up error a set of registration files gives (fails the test when they load). */
function refusal(...files: string[]): string {
  try {
    load(...files);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

function without(key: string): Record<string, unknown> {
  const r = valid();
  delete r[key];
  return r;
}

describe("app_service_config_files", () => {
  it("reads every field, with Synapse's defaults", () => {
    const f = write({ ...valid(), protocols: ["irc", "irc"], "de.sorunome.msc2409.push_ephemeral": true, ip_range_whitelist: ["127.0.0.1/8"] });
    const [as] = load(f).app_services;
    expect(as).toMatchObject({
      id: "bridge",
      url: "http://localhost:9000", // the trailing slash dropped, as Synapse
      as_token: "as-secret",
      hs_token: "hs-secret",
      sender_localpart: "bridgebot",
      rate_limited: true,
      protocols: ["irc"],
      receive_ephemeral: false,
      push_ephemeral_unstable: true,
      msc3202: false,
      msc4190: false,
      file: f,
    });
    expect(as!.ip_range_whitelist.map((c) => c.text)).toEqual(["127.0.0.1/8"]);
    expect(as!.namespaces.aliases).toEqual([]);
    expect(as!.namespaces.rooms).toEqual([]);
    const stable = load(write({ ...valid(), url: null, rate_limited: false, receive_ephemeral: true, "org.matrix.msc3202": true, "io.element.msc4190": true })).app_services[0]!;
    expect(stable).toMatchObject({ url: null, rate_limited: false, receive_ephemeral: true, push_ephemeral_unstable: false, msc3202: true, msc4190: true });
  });

  it("matches namespaces from the start of the id, as Python's re.match, and reads Python's spellings", () => {
    const users = load(write(valid())).app_services[0]!.namespaces.users[0]!.pattern;
    expect(users.test("@bridge_x:example.org")).toBe(true);
    expect(users.test("x@bridge_x:example.org")).toBe(false);
    expect(compileNamespaceRegex("@irc_").test("@irc_bob:example.org")).toBe(true); // a prefix is enough
    expect(compileNamespaceRegex("@a|@b").test("x@b")).toBe(false); // both alternatives anchored
    expect(compileNamespaceRegex("(?P<nick>@[a-z]+)_(?P=nick)").test("@ab_@ab")).toBe(true);
    expect(compileNamespaceRegex("(?i)@BRIDGE_").test("@bridge_x:example.org")).toBe(true);
    expect(compileNamespaceRegex("@x\\Z").test("@x")).toBe(true);
    expect(compileNamespaceRegex("@x\\Z").test("@xy")).toBe(false);
  });

  it("refuses a namespace with an invalid regex, naming the file and the field", () => {
    const f = write({ ...valid(), namespaces: { users: [{ exclusive: true, regex: "@bridge_x:example.org" }], aliases: [{ exclusive: false, regex: "#bridge_(.*" }] } });
    const msg = refusal(f);
    expect(msg).toContain(f);
    expect(msg).toContain("namespaces.aliases[0].regex");
    expect(msg).toContain("not a valid regular expression");
  });

  it("refuses each missing or mistyped field, naming the file and the field", () => {
    const cases: [Record<string, unknown> | string, string][] = [
      [without("id"), "id"],
      [without("as_token"), "as_token"],
      [without("hs_token"), "hs_token"],
      [without("sender_localpart"), "sender_localpart"],
      [without("url"), "url"],
      [without("namespaces"), "namespaces"],
      [{ ...valid(), as_token: "" }, "as_token"],
      [{ ...valid(), hs_token: 42 }, "hs_token"],
      [{ ...valid(), id: "a|b" }, "id"],
      [{ ...valid(), url: "ftp://example.org" }, "url"],
      [{ ...valid(), url: "not a url" }, "url"],
      [{ ...valid(), url: 8080 }, "url"],
      [{ ...valid(), sender_localpart: "bot bot" }, "sender_localpart"],
      [{ ...valid(), namespaces: [] }, "namespaces"],
      [{ ...valid(), namespaces: { users: { regex: ".*", exclusive: true } } }, "namespaces.users"],
      [{ ...valid(), namespaces: { rooms: ["!x"] } }, "namespaces.rooms[0]"],
      [{ ...valid(), namespaces: { users: [{ exclusive: true }] } }, "namespaces.users[0].regex"],
      [{ ...valid(), namespaces: { users: [{ regex: ".*", exclusive: "yes" }] } }, "namespaces.users[0].exclusive"],
      [{ ...valid(), rate_limited: "no" }, "rate_limited"],
      [{ ...valid(), protocols: "irc" }, "protocols"],
      [{ ...valid(), protocols: ["irc", 3] }, "protocols[1]"],
      [{ ...valid(), receive_ephemeral: 1 }, "receive_ephemeral"],
      [{ ...valid(), "de.sorunome.msc2409.push_ephemeral": "true" }, "de.sorunome.msc2409.push_ephemeral"],
      [{ ...valid(), "org.matrix.msc3202": "yes" }, "org.matrix.msc3202"],
      [{ ...valid(), ip_range_whitelist: ["nonsense"] }, "ip_range_whitelist"],
      ["- just\n- a list\n", "must be a YAML mapping"],
      ["id: [unclosed\n", "app_service_config_files"],
    ];
    for (const [reg, field] of cases) {
      const f = typeof reg === "string" ? write(undefined, reg) : write(reg);
      const msg = refusal(f);
      expect(msg, JSON.stringify(reg)).toContain(f);
      expect(msg, JSON.stringify(reg)).toContain(field);
    }
  });

  it("refuses a missing file, and two services sharing an id, an as_token or an hs_token", () => {
    expect(refusal(path.join(dir, "nope.yaml"))).toContain("nope.yaml");
    const a = write(valid());
    const sameId = write({ ...valid(), as_token: "t2", hs_token: "h2" });
    const sameAs = write({ ...valid(), id: "other", hs_token: "h3" });
    const sameHs = write({ ...valid(), id: "third", as_token: "t4" });
    const msg = refusal(a, sameId);
    expect(msg).toContain("duplicate id");
    expect(msg).toContain(sameId);
    expect(msg).toContain(a);
    expect(refusal(a, sameAs)).toContain("duplicate as_token");
    expect(refusal(a, sameHs)).toContain("duplicate hs_token");
    const distinct = write({ ...valid(), id: "fourth", as_token: "t5", hs_token: "h5" });
    expect(load(a, distinct).app_services.map((x) => x.id)).toEqual(["bridge", "fourth"]);
  });

  it("resolves registration files against the config's folder", () => {
    const f = write(valid());
    const c = parseConfig({ ...base, app_service_config_files: [path.basename(f)] }, dir);
    expect(c.app_service_config_files).toEqual([f]);
  });

  it("reads the other application-service options: legacy authorization and the request time limit", () => {
    const c = parseConfig(base, dir);
    expect(c.use_appservice_legacy_authorization).toBe(false);
    expect(c.app_service_request_timeout).toBe(60_000);
    const d = parseConfig({ ...base, use_appservice_legacy_authorization: true, app_service_request_timeout: "5s" }, dir);
    expect([d.use_appservice_legacy_authorization, d.app_service_request_timeout]).toEqual([true, 5000]);
  });
});
