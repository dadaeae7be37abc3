// GET /capabilities over HTTP: the default answer, every switch it reflects, guests and missing tokens
// — on SQLite and PostgreSQL, under r0 and v3 and both brands.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";
import { KNOWN_ROOM_VERSIONS } from "../../src/domain/rooms/room-versions.ts";

// Every known version, with its stability (the stable ones, and Synapse's unstable MSC3757 versions).
const allKnown = () => Object.fromEntries(KNOWN_ROOM_VERSIONS.map((v) => [v, /^\d+$/.test(v) ? "stable" : "unstable"]));

describe.each(backends())("capabilities on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
  });
  afterAll(async () => {
    await t?.close();
  });

  it("describes the default configuration", async () => {
    for (const p of ["/_matrix/client/v3/capabilities", "/_matrix/client/r0/capabilities", "/_proto/client/v3/capabilities", "/_proto/client/r0/capabilities"]) {
      const res = await t.call("GET", p, { token: alice.access_token });
      expect(res.status, p).toBe(200);
      expectMatchesSpec(res, "GET", p);
      expect(res.json).toEqual({
        capabilities: {
          "m.change_password": { enabled: true },
          "m.room_versions": { default: "11", available: allKnown() },
          "m.set_displayname": { enabled: true },
          "m.set_avatar_url": { enabled: true },
          "m.3pid_changes": { enabled: true },
          "m.get_login_token": { enabled: false },
          // Spec v1.16 (MSC4133): every profile field may be changed.
          "m.profile_fields": { enabled: true },
          "m.forget_forced_upon_leave": { enabled: false },
          // As Synapse: delayed events' limits, also when they are off (max_event_delay_duration unset).
          "org.matrix.msc4140.delayed_events": { max_delay_ms: 0, max_scheduled: 100 },
        },
      });
    }
    expect(Object.keys(allKnown())).toEqual(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "org.matrix.msc3757.10", "org.matrix.msc3757.11"]);
  });

  it("answers guests and refuses requests without a valid token", async () => {
    const guest = await t.call("POST", "/_matrix/client/v3/register?kind=guest", { body: {} });
    const res = await t.call("GET", "/_matrix/client/v3/capabilities", { token: guest.json.access_token });
    expect(res.status).toBe(200);
    expect(res.json.capabilities["m.change_password"]).toEqual({ enabled: true });
    const none = await t.call("GET", "/_matrix/client/v3/capabilities");
    expect([none.status, none.json.errcode]).toEqual([401, "M_MISSING_TOKEN"]);
    const bad = await t.call("GET", "/_matrix/client/v3/capabilities", { token: "nope" });
    expect([bad.status, bad.json.errcode]).toEqual([401, "M_UNKNOWN_TOKEN"]);
  });

  it("reflects the configuration switches", async () => {
    const t2 = await startTestServer({
      backend,
      config: {
        password_config: { enabled: false },
        enable_set_displayname: false,
        enable_set_avatar_url: false,
        login_via_existing_session: { enabled: true },
        default_room_version: "10",
        enable_3pid_changes: false,
        forget_rooms_on_leave: true,
        max_event_delay_duration: "1d",
        experimental_features: { msc4140_max_delayed_events_per_user: 7 },
      },
    });
    try {
      const guest = await t2.call("POST", "/_matrix/client/v3/register?kind=guest", { body: {} });
      expect(guest.status).toBe(200);
      const res = await t2.call("GET", "/_matrix/client/v3/capabilities", { token: guest.json.access_token });
      expect(res.status).toBe(200);
      expectMatchesSpec(res, "GET", "/_matrix/client/v3/capabilities");
      expect(res.json).toEqual({
        capabilities: {
          "m.change_password": { enabled: false },
          "m.room_versions": { default: "10", available: allKnown() },
          "m.set_displayname": { enabled: false },
          "m.set_avatar_url": { enabled: false },
          "m.3pid_changes": { enabled: false },
          "m.get_login_token": { enabled: true },
          // As Synapse: the fields enable_set_displayname / enable_set_avatar_url lock are disallowed.
          "m.profile_fields": { enabled: true, disallowed: ["displayname", "avatar_url"] },
          "m.forget_forced_upon_leave": { enabled: true },
          "org.matrix.msc4140.delayed_events": { max_delay_ms: 86_400_000, max_scheduled: 7 },
        },
      });
    } finally {
      await t2.close();
    }
  });

  it("reflects profile_fields (m.profile_fields, with m.set_displayname / m.set_avatar_url consistent) and msc4133_enabled", async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      // Nothing may be changed: both deprecated capabilities say so too (spec v1.16).
      [{ profile_fields: { enabled: false } }, { "m.profile_fields": { enabled: false }, "m.set_displayname": { enabled: false }, "m.set_avatar_url": { enabled: false } }],
      // Only the listed fields; a field enable_set_avatar_url locks is left out of the list.
      [
        { profile_fields: { allowed: ["displayname", "avatar_url", "m.tz"] }, enable_set_avatar_url: false },
        { "m.profile_fields": { enabled: true, allowed: ["displayname", "m.tz"] }, "m.set_displayname": { enabled: true }, "m.set_avatar_url": { enabled: false } },
      ],
      [
        { profile_fields: { disallowed: ["displayname", "org.example.badge"] } },
        { "m.profile_fields": { enabled: true, disallowed: ["displayname", "org.example.badge"] }, "m.set_displayname": { enabled: false }, "m.set_avatar_url": { enabled: true } },
      ],
      // Synapse's unstable name of the capability beside the stable one.
      [
        { experimental_features: { msc4133_enabled: true } },
        { "m.profile_fields": { enabled: true }, "uk.tcpip.msc4133.profile_fields": { enabled: true }, "m.set_displayname": { enabled: true }, "m.set_avatar_url": { enabled: true } },
      ],
    ];
    for (const [config, expected] of cases) {
      const t2 = await startTestServer({ backend, config });
      try {
        const bob = await registerUser(t2, "bob");
        const res = await t2.call("GET", "/_matrix/client/v3/capabilities", { token: bob.access_token });
        expectMatchesSpec(res, "GET", "/_matrix/client/v3/capabilities");
        const shown = Object.fromEntries(Object.entries(res.json.capabilities).filter(([k]) => k in expected || k.includes("profile_fields")));
        expect(shown, JSON.stringify(config)).toEqual(expected);
      } finally {
        await t2.close();
      }
    }
  });
});
