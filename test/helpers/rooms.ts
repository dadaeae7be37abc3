// Room helpers for tests: create a room over the real API and check the answer against the spec.
import { expect } from "vitest";
import type { TestServer } from "./server.ts";
import type { Session } from "./users.ts";
import { expectMatchesSpec } from "./spec.ts";

export async function createRoom(t: TestServer, who: Session, body: Record<string, unknown> = {}): Promise<string> {
  const res = await t.call("POST", "/_matrix/client/v3/createRoom", { token: who.access_token, body });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  expectMatchesSpec(res, "POST", "/_matrix/client/v3/createRoom");
  expect(res.json.room_id).toMatch(/^!/);
  return res.json.room_id as string;
}
