// A room deletion (DELETE /_synapse/admin/v2/rooms/{roomId}) stopped half-way by a server shutdown, on
// SQLite and PostgreSQL: the status endpoint still answers after the restart, the deletion resumes at
// start and completes — every local member removed, one notice room only, the room purged.
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V2 = "/_synapse/admin/v2";
const MEMBERS = 20;

describe.each(backends())("room deletion across a restart (%s)", (backend) => {
  let t: TestServer;
  let admin: Session;
  const call = (method: string, path: string, body?: unknown, token = admin.access_token) => t.call(method, path, { token, body });
  const waitFor = async <T>(fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> => {
    for (let i = 0; i < 1200; i++) {
      const v = await fn();
      if (ok(v)) return v;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error("condition never met");
  };

  // The server's log, to see that the deletion was interrupted by the stop and resumed at start.
  const logLines: string[] = [];
  const logged = (msg: string) => logLines.some((l) => l.includes(msg));

  beforeAll(async () => {
    const sink = new Writable({ write(chunk, _enc, done) { logLines.push(String(chunk)); done(); } });
    t = await startTestServer({ backend, log: pino({ level: "info" }, sink) });
    admin = await registerUser(t, "admin");
    await t.hs.services.users.setAdmin(admin.user_id, true);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("resumes at start and completes; the status answers before and after", async () => {
    const owner = await registerUser(t, "owner");
    const room = await createRoom(t, owner, { preset: "public_chat", room_alias_name: "doomed" });
    const members: Session[] = [owner];
    for (let i = 0; i < MEMBERS; i++) {
      const u = await registerUser(t, `member${i}`);
      expect((await t.call("POST", `/_matrix/client/v3/join/${encodeURIComponent(room)}`, { token: u.access_token, body: {} })).status).toBe(200);
      members.push(u);
    }
    const del = await call("DELETE", `${V2}/rooms/${encodeURIComponent(room)}`, { new_room_user_id: admin.user_id, room_name: "Closed", message: "Closed." });
    expect(del.status).toBe(200);
    const id = del.json.delete_id as string;
    // Stopped at once, while members are still being removed: the row stays active.
    await t.stop();
    expect(logged("room deletion interrupted by shutdown")).toBe(true);
    expect(logged("resuming a room deletion")).toBe(false);
    await t.restart();

    const after = await call("GET", `${V2}/rooms/delete_status/${id}`);
    expect(after.status).toBe(200);
    expect(["active", "complete"]).toContain(after.json.status);
    const done = await waitFor(() => call("GET", `${V2}/rooms/delete_status/${id}`), (r) => r.json.status !== "active");
    expect(done.json.status).toBe("complete");
    expect(logged("resuming a room deletion")).toBe(true);
    const result = done.json.shutdown_room;
    expect([...result.kicked_users].sort()).toEqual(members.map((m) => m.user_id).sort());
    expect(result.failed_to_kick_users).toEqual([]);
    expect(result.local_aliases).toEqual(["#doomed:weft.test"]);
    expect(result.new_room_id).toMatch(/^!/);
    // One notice room, made before the stop and reused after it.
    const adminRooms = (await call("GET", "/_matrix/client/v3/joined_rooms")).json.joined_rooms as string[];
    expect(adminRooms).toEqual([result.new_room_id]);
    expect((await call("GET", `/_matrix/client/v3/directory/room/${encodeURIComponent("#doomed:weft.test")}`)).json.room_id).toBe(result.new_room_id);
    for (const m of members) {
      const joined = (await t.call("GET", "/_matrix/client/v3/joined_rooms", { token: m.access_token })).json.joined_rooms as string[];
      expect(joined, m.user_id).not.toContain(room);
    }
    expect((await call("GET", `/_synapse/admin/v1/rooms/${encodeURIComponent(room)}`)).status).toBe(404);
    expect((await call("GET", `${V2}/rooms/${encodeURIComponent(room)}/delete_status`)).json.results).toEqual([done.json]);
  });
});
