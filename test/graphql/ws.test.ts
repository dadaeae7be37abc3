// The GraphQL face over WebSocket (graphql-ws on /graphql): the token comes in connection_init and is
// checked per operation, so register/login work without one and a bad one fails operations with
// M_UNKNOWN_TOKEN. Also: app.close() ends open sockets.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { errcode, gql, LOGIN, REGISTER, SET_DISPLAY_NAME, VIEWER, wsClient, wsRun } from "./client.ts";

describe("GraphQL over WebSocket", () => {
  let t: TestServer;
  let token: string;
  let deviceId: string;
  beforeAll(async () => {
    t = await startTestServer();
    const r = await gql(t, REGISTER, { input: { username: "carol", password: "carol-pw" } });
    ({ accessToken: token, deviceId } = r.body.data.register);
  });
  afterAll(async () => { await t?.close(); });

  it("runs viewer and setDisplayName with the token from connection_init", async () => {
    const c = wsClient(t, { authorization: `Bearer ${token}` });
    try {
      const v = await wsRun(c, VIEWER);
      expect(v.errors).toBeUndefined();
      expect(v.data.viewer).toMatchObject({ userId: "@carol:weft.test", deviceId, isGuest: false, displayName: "carol" });
      const m = await wsRun(c, SET_DISPLAY_NAME, { name: "Carol C." });
      expect(m.errors).toBeUndefined();
      expect(m.data.setDisplayName).toEqual({ userId: "@carol:weft.test", displayName: "Carol C." });
      expect((await wsRun(c, "{ viewer { displayName } }")).data.viewer.displayName).toBe("Carol C.");
    } finally {
      await c.dispose();
    }
    // access_token works as well.
    const c2 = wsClient(t, { access_token: token });
    try {
      expect((await wsRun(c2, "{ viewer { userId } }")).data.viewer.userId).toBe("@carol:weft.test");
    } finally {
      await c2.dispose();
    }
  });

  it("registers and logs in without a token; viewer then fails with M_MISSING_TOKEN", async () => {
    const c = wsClient(t);
    try {
      const r = await wsRun(c, REGISTER, { input: { username: "dave", password: "dave-pw" } });
      expect(r.errors).toBeUndefined();
      expect(r.data.register).toMatchObject({ userId: "@dave:weft.test", homeServer: "weft.test" });
      const l = await wsRun(c, LOGIN, { input: { user: "dave", password: "dave-pw" } });
      expect(l.data.login.userId).toBe("@dave:weft.test");
      expect(l.data.login.accessToken).not.toBe(r.data.register.accessToken);
      const bad = await wsRun(c, LOGIN, { input: { user: "dave", password: "nope" } });
      expect(errcode(bad)).toBe("M_FORBIDDEN");
      const v = await wsRun(c, VIEWER);
      expect(v.data).toEqual({ viewer: null });
      expect(v.errors![0]!.extensions).toEqual({ errcode: "M_MISSING_TOKEN", code: "UNAUTHENTICATED" });
    } finally {
      await c.dispose();
    }
  });

  it("accepts a bad token in connection_init and fails each operation needing it with M_UNKNOWN_TOKEN", async () => {
    const c = wsClient(t, { authorization: "Bearer not-a-token" });
    try {
      const v = await wsRun(c, VIEWER);
      expect(v.data).toEqual({ viewer: null });
      expect(v.errors![0]!.extensions).toEqual({ errcode: "M_UNKNOWN_TOKEN", code: "UNAUTHENTICATED", soft_logout: false });
      expect(v.errors![0]!.path).toEqual(["viewer"]);
      expect(errcode(await wsRun(c, SET_DISPLAY_NAME, { name: "x" }))).toBe("M_UNKNOWN_TOKEN");
      // Operations that need no token still work on the same socket.
      expect((await wsRun(c, LOGIN, { input: { user: "carol", password: "carol-pw" } })).data.login.userId).toBe("@carol:weft.test");
    } finally {
      await c.dispose();
    }
  });

  it("notices a logout while the socket is open", async () => {
    const l = await gql(t, LOGIN, { input: { user: "carol", password: "carol-pw" } });
    const session = l.body.data.login.accessToken as string;
    const c = wsClient(t, { authorization: `Bearer ${session}` });
    try {
      expect((await wsRun(c, "{ viewer { userId } }")).data.viewer.userId).toBe("@carol:weft.test");
      expect((await wsRun(c, "mutation { logout }")).data).toEqual({ logout: true });
      expect(errcode(await wsRun(c, "{ viewer { userId } }"))).toBe("M_UNKNOWN_TOKEN");
    } finally {
      await c.dispose();
    }
  });

  it("reports validation errors as graphql-ws errors", async () => {
    const c = wsClient(t, { authorization: `Bearer ${token}` });
    try {
      const err = await wsRun(c, "{ viewer { noSuchField } }").then(() => undefined, (e: unknown) => e);
      expect(Array.isArray(err)).toBe(true);
      expect((err as { message: string }[])[0]!.message).toMatch(/noSuchField/);
    } finally {
      await c.dispose();
    }
  });
});

describe("GraphQL WebSocket shutdown", () => {
  it("app.close() ends open sockets and returns, also after upgrades to other paths", async () => {
    const t = await startTestServer();
    // An upgrade request to a REST path is answered like a plain request, and its socket closed.
    const other = new WebSocket(t.baseUrl.replace(/^http/, "ws") + "/_matrix/client/v3/account/whoami");
    const outcome = await new Promise<string>((resolve) => {
      other.on("open", () => resolve("open"));
      other.on("error", (e) => resolve(e.message));
    });
    expect(outcome).toMatch(/Unexpected server response: 401/);
    const c = wsClient(t);
    const closed = new Promise<unknown>((resolve) => c.on("closed", resolve));
    try {
      const r = await wsRun(c, REGISTER, { input: { username: "erin", password: "erin-pw" } });
      expect(r.data.register.userId).toBe("@erin:weft.test");
      const started = Date.now();
      await t.close();
      expect(Date.now() - started).toBeLessThan(5000);
      // The server's shutdown closes the socket (the promise settles only when the client sees it).
      expect(await closed).toBeDefined();
    } finally {
      await c.dispose();
      await t.close();
    }
  });
});
