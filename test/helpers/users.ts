// Account helpers for tests: register through the real two-step UIA flow, log in with a password.
import { expect } from "vitest";
import type { TestServer } from "./server.ts";

export interface Session {
  user_id: string;
  access_token: string;
  device_id: string;
  refresh_token?: string;
  expires_in_ms?: number;
}

export async function registerUser(t: TestServer, localpart: string, password = "password", extra: Record<string, unknown> = {}): Promise<Session> {
  const first = await t.call("POST", "/_matrix/client/v3/register", { body: { username: localpart, password, ...extra } });
  expect(first.status, JSON.stringify(first.json)).toBe(401);
  const res = await t.call("POST", "/_matrix/client/v3/register", {
    body: { username: localpart, password, ...extra, auth: { type: "m.login.dummy", session: first.json.session } },
  });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json as Session;
}

export async function loginUser(t: TestServer, localpart: string, password = "password", extra: Record<string, unknown> = {}): Promise<Session> {
  const res = await t.call("POST", "/_matrix/client/v3/login", {
    body: { type: "m.login.password", identifier: { type: "m.id.user", user: localpart }, password, ...extra },
  });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json as Session;
}
