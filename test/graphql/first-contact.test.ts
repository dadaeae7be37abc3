// The GraphQL machinery is built on the first /graphql request (src/graphql/server.ts): a WebSocket that
// is a fresh server's first GraphQL contact has its connection_init, sent the moment the socket opens,
// held until graphql-ws listens and answered; an HTTP request as the first contact waits for it too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { gql } from "./client.ts";

describe("GraphQL as a fresh server's first contact", () => {
  let t: TestServer;
  let u: Session;
  beforeAll(async () => {
    t = await startTestServer();
    u = await registerUser(t, "first"); // REST only: nothing of GraphQL yet
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers a WebSocket's connection_init sent at once, then its operation", async () => {
    const ws = new WebSocket(t.baseUrl.replace(/^http/, "ws") + "/graphql", "graphql-transport-ws");
    const messages: { type: string; id?: string; payload?: any }[] = [];
    const next = (type: string) =>
      new Promise<{ type: string; payload?: any }>((resolve, reject) => {
        const seen = () => messages.find((m) => m.type === type);
        const check = () => {
          const m = seen();
          if (m) resolve(m);
          else if (ws.readyState === WebSocket.CLOSED) reject(new Error(`closed before ${type}`));
          else setImmediate(check);
        };
        check();
      });
    ws.on("message", (data) => messages.push(JSON.parse(String(data))));
    ws.on("open", () => ws.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${u.access_token}` } })));
    try {
      await next("connection_ack");
      ws.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: "{ viewer { userId } }" } }));
      const result = await next("next");
      expect(result.payload).toEqual({ data: { viewer: { userId: u.user_id } } });
      await next("complete");
    } finally {
      ws.close();
    }
  });

  it("serves HTTP queries from the same engine", async () => {
    const r = await gql(t, "{ viewer { userId } }", undefined, u.access_token);
    expect(r.body).toEqual({ data: { viewer: { userId: u.user_id } } });
  });
});
