// `encryption_enabled_by_default_for_room_type` on SQLite and PostgreSQL: `off` adds nothing, `invite`
// encrypts private_chat and trusted_private_chat rooms only, `all` every room; an explicit
// m.room.encryption in initial_state wins; the option is validated at start.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { parseConfig } from "../../src/config/config.ts";
import { ConfigError } from "../../src/config/errors.ts";
import { V3 } from "../helpers/e2ee.ts";

const enc = encodeURIComponent;

describe.each(backends())("encryption by default on %s", (backend) => {
  let t: TestServer;
  let alice: Session;

  beforeAll(async () => {
    t = await startTestServer({ backend, config: { encryption_enabled_by_default_for_room_type: "invite" } });
    alice = await registerUser(t, "alice");
  });
  afterAll(async () => {
    await t?.close();
  });

  const encryption = async (roomId: string) => {
    const res = await t.call("GET", `${V3}/rooms/${enc(roomId)}/state/m.room.encryption/`, { token: alice.access_token });
    return res.status === 200 ? res.json : res.json.errcode;
  };
  const setting = (v: "all" | "invite" | "off") => { t.config.encryption_enabled_by_default_for_room_type = v; };

  it("invite: private_chat and trusted_private_chat rooms are encrypted, public ones are not", async () => {
    setting("invite");
    expect(await encryption(await createRoom(t, alice))).toEqual({ algorithm: "m.megolm.v1.aes-sha2" });
    expect(await encryption(await createRoom(t, alice, { preset: "trusted_private_chat" }))).toEqual({ algorithm: "m.megolm.v1.aes-sha2" });
    expect(await encryption(await createRoom(t, alice, { preset: "public_chat" }))).toBe("M_NOT_FOUND");
    expect(await encryption(await createRoom(t, alice, { visibility: "public" }))).toBe("M_NOT_FOUND");
  });

  it("all: every room; off: none; initial_state wins", async () => {
    setting("all");
    expect(await encryption(await createRoom(t, alice, { preset: "public_chat" }))).toEqual({ algorithm: "m.megolm.v1.aes-sha2" });
    const own = { algorithm: "m.megolm.v1.aes-sha2", rotation_period_ms: 1000 };
    const room = await createRoom(t, alice, { initial_state: [{ type: "m.room.encryption", state_key: "", content: own }] });
    expect(await encryption(room)).toEqual(own);
    const state = await t.call("GET", `${V3}/rooms/${enc(room)}/state`, { token: alice.access_token });
    expect(state.json.filter((e: any) => e.type === "m.room.encryption")).toHaveLength(1);
    setting("off");
    expect(await encryption(await createRoom(t, alice))).toBe("M_NOT_FOUND");
  });
});

describe("encryption_enabled_by_default_for_room_type config", () => {
  it("defaults to off and accepts only all, invite or off", () => {
    expect(parseConfig({ server_name: "a.test" }).encryption_enabled_by_default_for_room_type).toBe("off");
    expect(parseConfig({ server_name: "a.test", encryption_enabled_by_default_for_room_type: "all" }).encryption_enabled_by_default_for_room_type).toBe("all");
    expect(() => parseConfig({ server_name: "a.test", encryption_enabled_by_default_for_room_type: "sometimes" })).toThrow(ConfigError);
    expect(() => parseConfig({ server_name: "a.test", encryption_enabled_by_default_for_room_type: "sometimes" })).toThrow(/all.*invite.*off/);
  });
});
