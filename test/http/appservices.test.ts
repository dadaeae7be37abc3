// The Application Service API end to end over real HTTP, on both databases: identity assertion with the
// as_token (user_id, device_id), registration and login of a service's users, exclusive namespaces,
// transactions (interest by member, alias, room id and sender; ephemeral data and to-device messages),
// queries of unknown users and aliases, the ping, third-party lookups and per-network room directories.
// Three services: "bridge" (exclusive users and aliases, irc, ephemeral data), "watcher" (a
// non-exclusive rooms namespace `.*`: every room) and "quiet" (url: null). What Weft sends them is
// checked against the Application Service API's schemas (RecordingAppService).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";
import { RecordingAppService, writeRegistration } from "../helpers/appservice.ts";
import { expectMatchesSpec } from "../helpers/spec.ts";

const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const BRIDGE_AS = "bridge-as-token";
const WATCHER_AS = "watcher-as-token";
const QUIET_AS = "quiet-as-token";

const protocol = (network: string) => ({
  user_fields: ["network", "nickname"],
  location_fields: ["network", "channel"],
  icon: "mxc://example.org/irc",
  field_types: { network: { regexp: "[a-z.]+", placeholder: "irc.example.org" }, nickname: { regexp: "[^\\s]+", placeholder: "bob" }, channel: { regexp: "#[^\\s]+", placeholder: "#room" } },
  instances: [{ network_id: network, desc: network, fields: { network } }],
});

describe.each(backends())("application services on %s", (backend) => {
  let t: TestServer;
  let bridge: RecordingAppService;
  let watcher: RecordingAppService;
  let alice: Session;
  let bob: Session;

  const call = (method: string, path: string, o: { token?: string; body?: unknown } = {}) => t.call(method, path, o);
  const whoami = (token: string, query = "") => call("GET", `${V3}/account/whoami${query}`, { token });
  const userCount = () => t.hs.services.db.user.count();

  beforeAll(async () => {
    bridge = await new RecordingAppService("bridge-hs-token").start();
    watcher = await new RecordingAppService("watcher-hs-token").start();
    const files = [
      writeRegistration(bridge.registration({
        id: "bridge",
        as_token: BRIDGE_AS,
        sender_localpart: "bridgebot",
        namespaces: { users: [{ exclusive: true, regex: "@bridge_.*:weft\\.test" }], aliases: [{ exclusive: true, regex: "#bridge_.*:weft\\.test" }] },
        protocols: ["irc"],
        rate_limited: false,
        receive_ephemeral: true,
        "de.sorunome.msc2409.push_ephemeral": true,
      })),
      writeRegistration(watcher.registration({
        id: "watcher",
        as_token: WATCHER_AS,
        sender_localpart: "watcherbot",
        namespaces: { users: [{ exclusive: false, regex: "@watch_.*" }], rooms: [{ exclusive: false, regex: ".*" }] },
        protocols: ["irc", "gitter"],
      })),
      writeRegistration({ id: "quiet", url: null, as_token: QUIET_AS, hs_token: "quiet-hs-token", sender_localpart: "quietbot", namespaces: { users: [{ exclusive: true, regex: "@quiet_.*:weft\\.test" }] } }),
    ];
    t = await startTestServer({ backend, config: { app_service_config_files: files, app_service_request_timeout: "3s" } });
    alice = await registerUser(t, "alice");
    bob = await registerUser(t, "bob");
  });
  afterAll(async () => {
    await t?.close();
    await bridge?.stop();
    await watcher?.stop();
  });

  /** Registers a user of the bridge (with a device) through the AS API. */
  async function bridgeUser(localpart: string): Promise<Session> {
    const res = await call("POST", `${V3}/register`, { token: BRIDGE_AS, body: { type: "m.login.application_service", username: localpart } });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json as Session;
  }

  describe("identity assertion", () => {
    it("acts as the sender, or as a registered user of the namespace with user_id, on one of its devices with device_id", async () => {
      expect((await whoami(BRIDGE_AS)).json).toEqual({ user_id: "@bridgebot:weft.test", is_guest: false });
      const ghost = await bridgeUser("bridge_ghost");
      const masq = await whoami(BRIDGE_AS, `?user_id=${enc(ghost.user_id)}`);
      expect(masq.status).toBe(200);
      expectMatchesSpec(masq, "GET", `${V3}/account/whoami`);
      expect(masq.json).toEqual({ user_id: ghost.user_id, is_guest: false });
      const dev = await whoami(BRIDGE_AS, `?user_id=${enc(ghost.user_id)}&device_id=${enc(ghost.device_id)}`);
      expect(dev.json).toEqual({ user_id: ghost.user_id, is_guest: false, device_id: ghost.device_id });
      // MSC3202's unstable name is no longer read (spec v1.17 names it device_id; Synapse 1.163 reads only that).
      const unstable = await whoami(BRIDGE_AS, `?user_id=${enc(ghost.user_id)}&org.matrix.msc3202.device_id=${enc(ghost.device_id)}`);
      expect(unstable.json).toEqual({ user_id: ghost.user_id, is_guest: false });
    });

    it("refuses users outside the namespace, unregistered ones, remote ones, unknown devices and wrong tokens", async () => {
      const refused = async (token: string, query: string, status: number, errcode: string) => {
        const res = await whoami(token, query);
        expect([res.status, res.json.errcode], query).toEqual([status, errcode]);
      };
      await refused(BRIDGE_AS, `?user_id=${enc(alice.user_id)}`, 403, "M_FORBIDDEN");
      await refused(BRIDGE_AS, `?user_id=${enc("@bridge_nobody:weft.test")}`, 403, "M_FORBIDDEN");
      await refused(BRIDGE_AS, `?user_id=${enc("@quiet_x:weft.test")}`, 403, "M_FORBIDDEN");
      // The watcher's namespace has no server part: only local users count.
      await refused(WATCHER_AS, `?user_id=${enc("@watch_x:elsewhere.test")}`, 403, "M_FORBIDDEN");
      await refused(BRIDGE_AS, `?user_id=not-a-user-id`, 403, "M_FORBIDDEN");
      await refused(BRIDGE_AS, `?device_id=NOSUCHDEVICE`, 400, "M_UNKNOWN_DEVICE");
      await refused("not-an-as-token", `?user_id=${enc("@bridge_ghost:weft.test")}`, 401, "M_UNKNOWN_TOKEN");
      // An ordinary access token ignores user_id.
      expect((await whoami(alice.access_token, `?user_id=${enc(bob.user_id)}`)).json.user_id).toBe(alice.user_id);
    });

    it("made the sender's account at start: it has a profile", async () => {
      const res = await call("GET", `${V3}/profile/${enc("@bridgebot:weft.test")}`, { token: alice.access_token });
      expect(res.status).toBe(200);
      expect(res.json.displayname).toBe("bridgebot");
    });
  });

  describe("registration and login of a service's users", () => {
    const asBody = (username: string, extra: Record<string, unknown> = {}) => ({ type: "m.login.application_service", username, ...extra });

    it("registers users of the namespace without a password, honouring inhibit_login", async () => {
      const plain = await call("POST", `${V3}/register`, { token: BRIDGE_AS, body: asBody("bridge_reg1") });
      expect(plain.status).toBe(200);
      expectMatchesSpec(plain, "POST", `${V3}/register`);
      expect(plain.json).toMatchObject({ user_id: "@bridge_reg1:weft.test", device_id: expect.any(String), access_token: expect.any(String) });
      expect((await whoami(plain.json.access_token)).json.user_id).toBe("@bridge_reg1:weft.test");
      const quiet = await call("POST", `${V3}/register`, { token: BRIDGE_AS, body: asBody("bridge_reg2", { inhibit_login: true }) });
      expect(quiet.json).toEqual({ user_id: "@bridge_reg2:weft.test", home_server: "weft.test" });
      // Bridges name users after foreign ids: the historical grammar, case kept.
      const upper = await call("POST", `${V3}/register`, { token: BRIDGE_AS, body: asBody("bridge_Bob[m]", { inhibit_login: true }) });
      expect(upper.json.user_id).toBe("@bridge_Bob[m]:weft.test");
      const again = await call("POST", `${V3}/register`, { token: BRIDGE_AS, body: asBody("bridge_reg2", { inhibit_login: true }) });
      expect([again.status, again.json.errcode]).toEqual([400, "M_USER_IN_USE"]);
      // The sender's own account exists already (made at start): bridges take M_USER_IN_USE as success.
      const bot = await call("POST", `${V3}/register`, { token: BRIDGE_AS, body: asBody("bridgebot") });
      expect(bot.json.errcode).toBe("M_USER_IN_USE");
    });

    it("refuses without a valid as_token, outside the namespace and in another's exclusive one, writing nothing", async () => {
      const before = await userCount();
      const cases: [string | undefined, Record<string, unknown>, number, string][] = [
        [undefined, asBody("bridge_x"), 401, "M_MISSING_TOKEN"],
        ["wrong-token", asBody("bridge_x"), 401, "M_UNKNOWN_TOKEN"],
        [alice.access_token, asBody("bridge_x"), 401, "M_UNKNOWN_TOKEN"],
        [BRIDGE_AS, asBody("someone_else"), 400, "M_EXCLUSIVE"],
        [WATCHER_AS, asBody("bridge_x"), 400, "M_EXCLUSIVE"],
        [BRIDGE_AS, { type: "m.login.application_service" }, 400, "M_MISSING_PARAM"],
        [BRIDGE_AS, asBody("bridge_a:b"), 400, "M_INVALID_USERNAME"],
      ];
      for (const [token, body, status, errcode] of cases) {
        const res = await call("POST", `${V3}/register`, { token, body });
        expect([res.status, res.json.errcode], JSON.stringify(body)).toEqual([status, errcode]);
      }
      expect(await userCount()).toBe(before);
    });

    it("keeps exclusive namespaces and senders from ordinary users (M_EXCLUSIVE)", async () => {
      for (const username of ["bridge_taken", "bridgebot", "quiet_one"]) {
        const res = await call("POST", `${V3}/register`, { body: { username, password: "pw" } });
        expect([res.status, res.json.errcode], username).toEqual([400, "M_EXCLUSIVE"]);
        const available = await call("GET", `${V3}/register/available?username=${username}`);
        expect(available.json.errcode).toBe("M_EXCLUSIVE");
      }
      // A non-exclusive namespace stays open.
      expect((await registerUser(t, "watch_human")).user_id).toBe("@watch_human:weft.test");
    });

    it("logs a user of the namespace in with m.login.application_service, only with its as_token", async () => {
      await bridgeUser("bridge_login");
      const body = { type: "m.login.application_service", identifier: { type: "m.id.user", user: "bridge_login" } };
      const cases: [string | undefined, Record<string, unknown>, number, string][] = [
        [undefined, body, 401, "M_MISSING_TOKEN"],
        ["wrong-token", body, 401, "M_UNKNOWN_TOKEN"],
        [alice.access_token, body, 401, "M_UNKNOWN_TOKEN"],
        [BRIDGE_AS, { ...body, identifier: { type: "m.id.user", user: "alice" } }, 403, "M_FORBIDDEN"],
        [WATCHER_AS, body, 403, "M_FORBIDDEN"],
      ];
      for (const [token, b, status, errcode] of cases) {
        const res = await call("POST", `${V3}/login`, { token, body: b });
        expect([res.status, res.json.errcode]).toEqual([status, errcode]);
      }
      const ok = await call("POST", `${V3}/login`, { token: BRIDGE_AS, body });
      expect(ok.status).toBe(200);
      expectMatchesSpec(ok, "POST", `${V3}/login`);
      expect((await whoami(ok.json.access_token)).json.user_id).toBe("@bridge_login:weft.test");
      const flows = await call("GET", `${V3}/login`);
      expect(flows.json.flows.map((f: { type: string }) => f.type)).toContain("m.login.application_service");
    });
  });

  describe("alias namespaces", () => {
    it("closes an exclusive alias namespace to users; a service makes aliases in its own only", async () => {
      const roomId = await createRoom(t, alice);
      const put = (alias: string, token: string) => call("PUT", `${V3}/directory/room/${enc(alias)}`, { token, body: { room_id: roomId } });
      const taken = await put("#bridge_mine:weft.test", alice.access_token);
      expect([taken.status, taken.json.errcode]).toEqual([400, "M_EXCLUSIVE"]);
      const outside = await put("#elsewhere:weft.test", BRIDGE_AS);
      expect([outside.status, outside.json.errcode]).toEqual([400, "M_EXCLUSIVE"]);
      // The service need not be in the room to name it in its namespace.
      expect((await put("#bridge_named:weft.test", BRIDGE_AS)).status).toBe(200);
      expect((await call("GET", `${V3}/directory/room/${enc("#bridge_named:weft.test")}`)).json.room_id).toBe(roomId);
    });
  });

  describe("transactions", () => {
    it("pushes the events of rooms with a member of the namespace, in order, with the hs_token, as the spec describes them", async () => {
      const ghost = await bridgeUser("bridge_tx");
      const roomId = await createRoom(t, alice, { invite: [ghost.user_id] });
      const join = await call("POST", `${V3}/join/${enc(roomId)}?user_id=${enc(ghost.user_id)}`, { token: BRIDGE_AS, body: {} });
      expect(join.status).toBe(200);
      for (const body of ["one", "two", "three"]) await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/${body}`, { token: alice.access_token, body: { msgtype: "m.text", body } });
      await bridge.until(() => bridge.bodies(roomId).length === 3, 20_000, "three messages at the bridge");
      expect(bridge.bodies(roomId)).toEqual(["one", "two", "three"]);
      const events = bridge.events().filter((e) => e.room_id === roomId);
      // The invite of its user reached it too (the member event names the user).
      expect(events.some((e) => e.type === "m.room.member" && e.state_key === ghost.user_id && e.content.membership === "invite")).toBe(true);
      for (const e of events) expect(e).toMatchObject({ event_id: expect.stringMatching(/^\$/), sender: expect.any(String), origin_server_ts: expect.any(Number), content: expect.any(Object) });
      // Transaction ids only grow; every body matched the spec; every request carried the hs_token.
      const ids = bridge.transactions.map((x) => Number(x.txnId));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(bridge.invalid).toEqual([]);
      expect(bridge.requests.every((r) => r.authorization === "Bearer bridge-hs-token" && !r.query.has("access_token"))).toBe(true);
    });

    it("a non-exclusive rooms namespace sees every room; rooms of nobody in the namespace stay unseen; a service without URL gets nothing", async () => {
      const roomId = await createRoom(t, bob);
      await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/w1`, { token: bob.access_token, body: { msgtype: "m.text", body: "for the watcher" } });
      await watcher.until(() => watcher.bodies(roomId).length === 1, 20_000, "the watcher");
      // The bridge got a transaction after that message, or none at all: check after a later event it sees.
      const ghost = await bridgeUser("bridge_later");
      const other = await createRoom(t, bob, { invite: [ghost.user_id] });
      await bridge.until(() => bridge.events().some((e) => e.room_id === other), 20_000, "the bridge's invite");
      expect(bridge.events().some((e) => e.room_id === roomId)).toBe(false);
      expect(watcher.invalid).toEqual([]);
      // Watcher asked for no ephemeral data: no such fields.
      expect(watcher.transactions.every((x) => Object.keys(x.body).join() === "events")).toBe(true);
    });

    it("counts a room by its alias in the namespace, and by the sender in it", async () => {
      const byAlias = await createRoom(t, bob);
      expect((await call("PUT", `${V3}/directory/room/${enc("#bridge_aliased:weft.test")}`, { token: BRIDGE_AS, body: { room_id: byAlias } })).status).toBe(200);
      await t.call("PUT", `${V3}/rooms/${enc(byAlias)}/send/m.room.message/a1`, { token: bob.access_token, body: { msgtype: "m.text", body: "aliased" } });
      await bridge.until(() => bridge.bodies(byAlias).includes("aliased"), 20_000, "the aliased room's message");

      const bySender = await createRoom(t, bob, { preset: "public_chat" });
      expect((await call("POST", `${V3}/join/${enc(bySender)}`, { token: BRIDGE_AS, body: {} })).status).toBe(200);
      await t.call("PUT", `${V3}/rooms/${enc(bySender)}/send/m.room.message/s1`, { token: bob.access_token, body: { msgtype: "m.text", body: "with the bot" } });
      await bridge.until(() => bridge.bodies(bySender).includes("with the bot"), 20_000, "the bot's room's message");
    });

    it("sends typing, receipts and presence of its rooms and to-device messages for its users (receive_ephemeral, MSC2409)", async () => {
      const ghost = await bridgeUser("bridge_eph");
      const roomId = await createRoom(t, alice, { invite: [ghost.user_id] });
      await call("POST", `${V3}/join/${enc(roomId)}?user_id=${enc(ghost.user_id)}`, { token: BRIDGE_AS, body: {} });
      const sent = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/e1`, { token: alice.access_token, body: { msgtype: "m.text", body: "read me" } });
      await t.call("PUT", `${V3}/rooms/${enc(roomId)}/typing/${enc(alice.user_id)}`, { token: alice.access_token, body: { typing: true, timeout: 30000 } });
      await t.call("POST", `${V3}/rooms/${enc(roomId)}/receipt/m.read/${enc(sent.json.event_id)}`, { token: alice.access_token, body: {} });
      await t.call("PUT", `${V3}/presence/${enc(alice.user_id)}/status`, { token: alice.access_token, body: { presence: "online", status_msg: "bridging" } });
      await t.call("PUT", `${V3}/sendToDevice/m.test.ping/td1`, { token: alice.access_token, body: { messages: { [ghost.user_id]: { [ghost.device_id]: { hello: "ghost" } } } } });
      const has = (pred: (e: any) => boolean) => bridge.ephemeral().some(pred);
      await bridge.until(
        () =>
          has((e) => e.type === "m.typing" && e.room_id === roomId && e.content.user_ids.includes(alice.user_id)) &&
          has((e) => e.type === "m.receipt" && e.room_id === roomId && e.content[sent.json.event_id]?.["m.read"]?.[alice.user_id]) &&
          has((e) => e.type === "m.presence" && e.sender === alice.user_id && e.content.status_msg === "bridging") &&
          bridge.ephemeral("de.sorunome.msc2409.to_device").some((m) => m.to_user_id === ghost.user_id && m.to_device_id === ghost.device_id && m.content.hello === "ghost"),
        20_000,
        "typing, receipt, presence and the to-device message",
      );
      // The stable and the unstable (MSC2409) fields carry the same data.
      for (const x of bridge.transactions) if (x.body.ephemeral) expect(x.body["de.sorunome.msc2409.ephemeral"]).toEqual(x.body.ephemeral);
      const toDevice = bridge.ephemeral("de.sorunome.msc2409.to_device").find((m) => m.to_user_id === ghost.user_id);
      expect(toDevice).toMatchObject({ type: "m.test.ping", sender: alice.user_id });
      expect(bridge.invalid).toEqual([]);
    });
  });

  describe("queries", () => {
    it("asks the service about an unknown user of its namespace (profile, invite), then looks again", async () => {
      const asked: string[] = [];
      bridge.handler = async (req) => {
        const m = /^\/_matrix\/app\/v1\/users\/(.+)$/.exec(req.path);
        if (!m) return undefined;
        const userId = decodeURIComponent(m[1]!);
        asked.push(userId);
        if (!userId.startsWith("@bridge_made")) return { status: 404, body: { errcode: "M_NOT_FOUND" } };
        const localpart = userId.slice(1, userId.indexOf(":"));
        await call("POST", `${V3}/register`, { token: BRIDGE_AS, body: { type: "m.login.application_service", username: localpart, inhibit_login: true } });
        return { status: 200, body: {} };
      };
      try {
        const profile = await call("GET", `${V3}/profile/${enc("@bridge_made1:weft.test")}`, { token: alice.access_token });
        expect(profile.status).toBe(200);
        expect(profile.json.displayname).toBe("bridge_made1");
        const missing = await call("GET", `${V3}/profile/${enc("@bridge_nothere:weft.test")}`, { token: alice.access_token });
        expect([missing.status, missing.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
        const roomId = await createRoom(t, alice);
        const invite = await call("POST", `${V3}/rooms/${enc(roomId)}/invite`, { token: alice.access_token, body: { user_id: "@bridge_made2:weft.test" } });
        expect(invite.status).toBe(200);
        // Users outside every namespace are never asked about.
        const nobody = await call("GET", `${V3}/profile/${enc("@nobody:weft.test")}`, { token: alice.access_token });
        expect(nobody.status).toBe(404);
        expect(asked).toEqual(["@bridge_made1:weft.test", "@bridge_nothere:weft.test", "@bridge_made2:weft.test"]);
      } finally {
        bridge.handler = () => undefined;
      }
    });

    it("asks the service about an unknown alias of its namespace (directory, join), then looks again", async () => {
      const asked: string[] = [];
      bridge.handler = async (req) => {
        const m = /^\/_matrix\/app\/v1\/rooms\/(.+)$/.exec(req.path);
        if (!m) return undefined;
        const alias = decodeURIComponent(m[1]!);
        asked.push(alias);
        if (alias !== "#bridge_portal:weft.test") return { status: 404, body: { errcode: "M_NOT_FOUND" } };
        const room = await call("POST", `${V3}/createRoom`, { token: BRIDGE_AS, body: { preset: "public_chat", room_alias_name: "bridge_portal" } });
        expect(room.status).toBe(200);
        return { status: 200, body: {} };
      };
      try {
        const found = await call("GET", `${V3}/directory/room/${enc("#bridge_portal:weft.test")}`);
        expect(found.status).toBe(200);
        expectMatchesSpec(found, "GET", `${V3}/directory/room/x`);
        expect((await call("POST", `${V3}/join/${enc("#bridge_portal:weft.test")}`, { token: bob.access_token, body: {} })).json.room_id).toBe(found.json.room_id);
        const joinUnknown = await call("POST", `${V3}/join/${enc("#bridge_void:weft.test")}`, { token: bob.access_token, body: {} });
        expect([joinUnknown.status, joinUnknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
        expect((await call("GET", `${V3}/directory/room/${enc("#plain:weft.test")}`)).status).toBe(404);
        expect(asked).toEqual(["#bridge_portal:weft.test", "#bridge_void:weft.test"]);
      } finally {
        bridge.handler = () => undefined;
      }
    });
  });

  describe("ping", () => {
    const ping = (id: string, token: string | undefined, body: unknown = {}) => call("POST", `/_matrix/client/v1/appservice/${id}/ping`, { token, body });

    it("pings the service with the transaction id, answering the time it took", async () => {
      const res = await ping("bridge", BRIDGE_AS, { transaction_id: "ping-1" });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "POST", "/_matrix/client/v1/appservice/bridge/ping");
      expect(res.json.duration_ms).toBeGreaterThanOrEqual(0);
      const seen = bridge.requests.filter((r) => r.path === "/_matrix/app/v1/ping");
      expect(seen.length).toBe(1);
      expect(bridge.invalid).toEqual([]);
    });

    it("refuses other callers and services, a service without URL and bad bodies", async () => {
      const cases: [string, string | undefined, unknown, number, string][] = [
        ["bridge", WATCHER_AS, {}, 403, "M_FORBIDDEN"],
        ["bridge", alice.access_token, {}, 403, "M_FORBIDDEN"],
        ["bridge", undefined, {}, 401, "M_MISSING_TOKEN"],
        ["quiet", QUIET_AS, {}, 400, "M_URL_NOT_SET"],
        ["bridge", BRIDGE_AS, { transaction_id: 7 }, 400, "M_BAD_JSON"],
      ];
      for (const [id, token, body, status, errcode] of cases) {
        const res = await ping(id, token, body);
        expect([res.status, res.json.errcode], `${id} ${token}`).toEqual([status, errcode]);
        if (status !== 401) expectMatchesSpec(res, "POST", `/_matrix/client/v1/appservice/${id}/ping`);
      }
    });

    it("reports a bad status, a refused connection and a timeout as the spec names them", async () => {
      watcher.mode = "fail";
      try {
        const bad = await ping("watcher", WATCHER_AS);
        expect([bad.status, bad.json.errcode, bad.json.status]).toEqual([502, "M_BAD_STATUS", 500]);
        expect(bad.json.body).toContain("down for maintenance");
        expectMatchesSpec(bad, "POST", "/_matrix/client/v1/appservice/watcher/ping");
        watcher.mode = "hang";
        const slow = await ping("watcher", WATCHER_AS);
        expect([slow.status, slow.json.errcode]).toEqual([504, "M_CONNECTION_TIMEOUT"]);
        await watcher.stop();
        const down = await ping("watcher", WATCHER_AS);
        expect([down.status, down.json.errcode]).toEqual([502, "M_CONNECTION_FAILED"]);
      } finally {
        watcher.mode = "ok";
        await watcher.stop();
        await watcher.restart();
      }
    });
  });

  describe("third-party networks", () => {
    beforeAll(() => {
      const answer = (id: string) => (req: { path: string; query: URLSearchParams }) => {
        // The bridge's description carries instances not in the spec's shape (no desc and fields; a number
        // for network_id): they are left out, the rest of the description still offered.
        if (req.path === "/_matrix/app/v1/thirdparty/protocol/irc")
          return { status: 200, body: id === "bridge" ? { ...protocol(`${id}net`), instances: [...protocol(`${id}net`).instances, { network_id: "broken" }, { desc: "n", fields: {}, network_id: 5 }, "x"] } : protocol(`${id}net`) };
        if (req.path === "/_matrix/app/v1/thirdparty/protocol/gitter") return { status: 200, body: { ...protocol("gitter"), user_fields: ["username"], location_fields: ["room"] } };
        if (req.path === "/_matrix/app/v1/thirdparty/location/irc" && req.query.get("channel") === "#matrix")
          return { status: 200, body: [{ alias: `#${id}_matrix:weft.test`, protocol: "irc", fields: { network: req.query.get("network"), channel: "#matrix" } }, { alias: 3 }] };
        if (req.path === "/_matrix/app/v1/thirdparty/user/irc" && req.query.get("nickname") === "bob")
          return { status: 200, body: [{ userid: `@${id}_bob:weft.test`, protocol: "irc", fields: { nickname: "bob" } }] };
        // Reverse lookups: the bridge knows its own aliases and users (the watcher answers 404).
        if (id === "bridge" && req.path === "/_matrix/app/v1/thirdparty/location" && req.query.get("alias") === "#bridge_matrix:weft.test")
          return { status: 200, body: [{ alias: "#bridge_matrix:weft.test", protocol: "irc", fields: { channel: "#matrix" } }] };
        if (id === "bridge" && req.path === "/_matrix/app/v1/thirdparty/user" && req.query.get("userid") === "@bridge_bob:weft.test")
          return { status: 200, body: [{ userid: "@bridge_bob:weft.test", protocol: "irc", fields: { nickname: "bob" } }] };
        return undefined;
      };
      bridge.handler = answer("bridge");
      watcher.handler = answer("watcher");
    });
    afterAll(() => {
      bridge.handler = () => undefined;
      watcher.handler = () => undefined;
    });
    const get = (path: string, token: string | undefined = alice.access_token) => call("GET", `${V3}/thirdparty${path}`, { token });

    it("merges the services' descriptions of each protocol, each instance given its instance_id", async () => {
      const res = await get("/protocols");
      expect(res.status).toBe(200);
      expectMatchesSpec(res, "GET", `${V3}/thirdparty/protocols`);
      expect(Object.keys(res.json).sort()).toEqual(["gitter", "irc"]);
      expect(res.json.irc.instances.map((i: any) => i.instance_id)).toEqual(["bridge|bridgenet", "watcher|watchernet"]);
      expect(res.json.gitter.instances.map((i: any) => i.instance_id)).toEqual(["watcher|gitter"]);
      const one = await get("/protocol/irc");
      expect(one.status).toBe(200);
      expectMatchesSpec(one, "GET", `${V3}/thirdparty/protocol/irc`);
      expect(one.json).toEqual(res.json.irc);
      const unknown = await get("/protocol/xmpp");
      expect([unknown.status, unknown.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
      expectMatchesSpec(unknown, "GET", `${V3}/thirdparty/protocol/xmpp`);
      // Names of Object.prototype's members are protocols no service declares (appservice fuzz seed 3481333454).
      for (const name of ["__proto__", "constructor", "toString"]) {
        const r = await get(`/protocol/${name}`);
        expect([r.status, r.json.errcode], name).toEqual([404, "M_NOT_FOUND"]);
      }
      // The services were asked with their hs_token, on documented paths.
      expect(bridge.invalid).toEqual([]);
      expect(watcher.invalid).toEqual([]);
    });

    it("relays lookups with the client's free-form fields to the services of the protocol, merging valid results", async () => {
      const loc = await get("/location/irc?network=example&channel=%23matrix");
      expect(loc.status, JSON.stringify(loc.json)).toBe(200);
      expectMatchesSpec(loc, "GET", `${V3}/thirdparty/location/irc`);
      expect(loc.json.map((l: any) => l.alias).sort()).toEqual(["#bridge_matrix:weft.test", "#watcher_matrix:weft.test"]);
      expect(loc.json[0].fields.network).toBe("example");
      const seen = bridge.requests.find((r) => r.path === "/_matrix/app/v1/thirdparty/location/irc")!;
      expect([...seen.query.keys()].sort()).toEqual(["channel", "network"]);
      const user = await get("/user/irc?nickname=bob");
      expect(user.status).toBe(200);
      expectMatchesSpec(user, "GET", `${V3}/thirdparty/user/irc`);
      expect(user.json.map((u: any) => u.userid).sort()).toEqual(["@bridge_bob:weft.test", "@watcher_bob:weft.test"]);
      // Only services declaring the protocol are asked: gitter is the watcher's alone.
      const before = bridge.requests.length;
      expect((await get("/user/gitter?username=x")).status).toBe(404);
      expect(bridge.requests.length).toBe(before);
    });

    it("answers reverse lookups, and 404 when nothing matches", async () => {
      const loc = await get(`/location?alias=${enc("#bridge_matrix:weft.test")}`);
      expect(loc.status).toBe(200);
      expectMatchesSpec(loc, "GET", `${V3}/thirdparty/location`);
      expect(loc.json).toEqual([{ alias: "#bridge_matrix:weft.test", protocol: "irc", fields: { channel: "#matrix" } }]);
      const user = await get(`/user?userid=${enc("@bridge_bob:weft.test")}`);
      expect(user.status).toBe(200);
      expectMatchesSpec(user, "GET", `${V3}/thirdparty/user`);
      expect(user.json).toEqual([{ userid: "@bridge_bob:weft.test", protocol: "irc", fields: { nickname: "bob" } }]);
      // Both services declaring a protocol were asked.
      expect(watcher.requests.some((r) => r.path === "/_matrix/app/v1/thirdparty/user" && r.query.get("userid") === "@bridge_bob:weft.test")).toBe(true);
      const none = await get("/location/irc?channel=%23nothing");
      expect([none.status, none.json.errcode]).toEqual([404, "M_NOT_FOUND"]);
      expectMatchesSpec(none, "GET", `${V3}/thirdparty/location/irc`);
      expect((await get("/location/xmpp?x=1")).status).toBe(404);
      const missing = await get("/location");
      expect([missing.status, missing.json.errcode]).toEqual([400, "M_MISSING_PARAM"]);
      expect((await get("/user")).json.errcode).toBe("M_MISSING_PARAM");
      const anonymous = await call("GET", `${V3}/thirdparty/protocols`);
      expect([anonymous.status, anonymous.json.errcode]).toEqual([401, "M_MISSING_TOKEN"]);
    });
  });

  describe("per-network room directories", () => {
    const list = (network: string, roomId: string, token: string, body: unknown = { visibility: "public" }) =>
      call("PUT", `${V3}/directory/list/appservice/${enc(network)}/${enc(roomId)}`, { token, body });
    const publicRooms = (body: Record<string, unknown>) => call("POST", `${V3}/publicRooms`, { token: alice.access_token, body });
    const ids = (res: { json: { chunk: { room_id: string }[] } }) => res.json.chunk.map((c) => c.room_id).sort();

    it("lists a room in a service's network, which /publicRooms reads by third_party_instance_id", async () => {
      const bridged = await createRoom(t, alice, { name: "bridged" });
      const published = await createRoom(t, alice, { name: "published", visibility: "public" });
      const res = await list("irc", bridged, BRIDGE_AS);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expectMatchesSpec(res, "PUT", `${V3}/directory/list/appservice/irc/${enc(bridged)}`);
      const network = await publicRooms({ third_party_instance_id: "bridge|irc" });
      expect(network.status).toBe(200);
      expectMatchesSpec(network, "POST", `${V3}/publicRooms`);
      expect(ids(network)).toEqual([bridged]);
      expect(network.json.total_room_count_estimate).toBe(1);
      expect(ids(await publicRooms({}))).not.toContain(bridged);
      expect(ids(await publicRooms({}))).toContain(published);
      const all = await publicRooms({ include_all_networks: true });
      expect(ids(all)).toEqual(expect.arrayContaining([bridged, published]));
      expect(ids(await publicRooms({ third_party_instance_id: "watcher|irc" }))).toEqual([]);
      // Unlisted again (PUT private, or DELETE as Synapse).
      expect((await list("irc", bridged, BRIDGE_AS, { visibility: "private" })).status).toBe(200);
      expect(ids(await publicRooms({ third_party_instance_id: "bridge|irc" }))).toEqual([]);
      await list("irc", bridged, BRIDGE_AS);
      expect((await call("DELETE", `${V3}/directory/list/appservice/irc/${enc(bridged)}`, { token: BRIDGE_AS })).status).toBe(200);
      expect(ids(await publicRooms({ third_party_instance_id: "bridge|irc" }))).toEqual([]);
    });

    it("refuses users, unknown rooms, bad visibilities and contradictory /publicRooms requests", async () => {
      const roomId = await createRoom(t, alice);
      const cases: [string, string, unknown, number, string][] = [
        [roomId, alice.access_token, { visibility: "public" }, 403, "M_FORBIDDEN"],
        ["!unknown:weft.test", BRIDGE_AS, { visibility: "public" }, 404, "M_NOT_FOUND"],
        ["not-a-room", BRIDGE_AS, { visibility: "public" }, 400, "M_INVALID_PARAM"],
        [roomId, BRIDGE_AS, { visibility: "everyone" }, 400, "M_INVALID_PARAM"],
      ];
      for (const [room, token, body, status, errcode] of cases) {
        const res = await list("irc", room, token, body);
        expect([res.status, res.json.errcode]).toEqual([status, errcode]);
      }
      expect((await call("PUT", `${V3}/directory/list/appservice/irc/${enc(roomId)}`, { token: BRIDGE_AS, body: undefined })).json.errcode).toBe("M_NOT_JSON");
      const both = await publicRooms({ include_all_networks: true, third_party_instance_id: "bridge|irc" });
      expect([both.status, both.json.errcode]).toEqual([400, "M_INVALID_PARAM"]);
      expect((await publicRooms({ third_party_instance_id: "no-bar" })).json.errcode).toBe("M_INVALID_PARAM");
      expect((await publicRooms({ third_party_instance_id: 5 })).json.errcode).toBe("M_BAD_JSON");
      expect((await publicRooms({ include_all_networks: "yes" })).json.errcode).toBe("M_BAD_JSON");
    });
  });
});
