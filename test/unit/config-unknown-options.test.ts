// Unknown options in homeserver.yaml (issue 19 item 7): named in a warning with the nearest known option,
// at the same level of nesting; a generated config and Synapse's usual leftovers raise none.
import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { parseConfig } from "../../src/config/config.ts";
import { renderConfig } from "../../src/config/generate.ts";

const base = { server_name: "example.org" };

describe("unknown options", () => {
  it("name the nearest known option", () => {
    const c = parseConfig({ ...base, enable_registraton: true }, "/tmp");
    expect(c.enable_registration).toBe(false);
    expect(c.warnings).toEqual([`unknown option "enable_registraton" ignored (did you mean "enable_registration"?)`]);
  });

  it("are found inside sections and list items too", () => {
    const c = parseConfig({ ...base, password_config: { polcy: { enabled: true } }, listeners: [{ port: 8008, bind_adresses: ["0.0.0.0"] }] }, "/tmp");
    expect(c.warnings).toContain(`unknown option "password_config.polcy" ignored (did you mean "password_config.policy"?)`);
    expect(c.warnings).toContain(`unknown option "listeners[0].bind_adresses" ignored (did you mean "listeners[0].bind_addresses"?)`);
  });

  it("without a near name, are named alone", () => {
    expect(parseConfig({ ...base, frobnicate: 1 }, "/tmp").warnings).toEqual([`unknown option "frobnicate" ignored`]);
  });

  it("are none for known options, free-form sections, Synapse leftovers and a generated config", () => {
    const c = parseConfig({
      ...base,
      enable_metrics: true,
      pid_file: "/x.pid",
      report_stats: false,
      caches: { global_factor: 1, per_cache_factors: { anything_at_all: 2 } },
      database: { name: "sqlite3", args: { database: "x.db", cp_min: 5 } },
      listeners: [{ port: 8008, type: "http", resources: [{ names: ["client"], compress: false }] }, { port: 9000, type: "metrics" }],
    }, "/tmp");
    expect(c.warnings).toEqual([]);
    const generated = renderConfig({ serverName: "example.org", port: 8008, publicBaseurl: "http://example.org:8008/", database: { sqlitePath: "data/homeserver.db" }, signingKeyPath: "k", registrationSharedSecret: "s", mediaStorePath: "m" });
    expect(parseConfig(YAML.parse(generated), "/tmp").warnings).toEqual([]);
    // What a newcomer needs from its comments: the login rate limit by name, how to change the port.
    expect(generated).toMatch(/^#\s+rc_login:$/m);
    expect(generated).toContain("To change the port");
    expect(generated).toContain("generate-config --port N");
  });
});
