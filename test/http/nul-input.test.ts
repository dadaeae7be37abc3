// NUL (U+0000) in input (issue 11, finding 2), the same on SQLite and PostgreSQL: in a path parameter
// (room id, event id, state key, event type, txn id, session id, account data type, device id, relation
// type) or in free text stored in a column (display name, device name, status_msg, report reason, backup
// algorithm) it is refused with 400 M_INVALID_PARAM and nothing changes; inside event content (JSON) it
// is kept, and derived columns (room name in the directory, member display names, the search index)
// stay consistent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";
import { createRoom } from "../helpers/rooms.ts";

const V1 = "/_matrix/client/v1";
const V3 = "/_matrix/client/v3";
const enc = encodeURIComponent;
const NUL = "\u0000";

describe.each(backends())("NUL in input on %s", (backend) => {
  let t: TestServer;
  let alice: Session;
  let roomId: string;
  let eventId: string;
  let version: string;
  let txn = 0;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    alice = await registerUser(t, "alice");
    roomId = await createRoom(t, alice, { preset: "public_chat", name: "Plain" });
    const sent = await t.call("PUT", `${V3}/rooms/${enc(roomId)}/send/m.room.message/t${++txn}`, { token: alice.access_token, body: { msgtype: "m.text", body: "hello" } });
    eventId = sent.json.event_id;
    const v = await t.call("POST", `${V3}/room_keys/version`, { token: alice.access_token, body: { algorithm: "m.megolm_backup.v1.curve25519-aes-sha2", auth_data: { public_key: "k" } } });
    version = v.json.version;
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token: alice.access_token, body });
  const expectRefused = async (method: string, path: string, body?: unknown, answer: [number, string] = [400, "M_INVALID_PARAM"]) => {
    const res = await call(method, path, body);
    expect.soft([res.status, res.json?.errcode], `${method} ${JSON.stringify(path)}: ${JSON.stringify(res.json)}`).toEqual(answer);
  };

  it("refuses NUL in path parameters", async () => {
    const r = enc(roomId);
    await expectRefused("GET", `${V3}/rooms/${enc(`!a${NUL}b:weft.test`)}/state`);
    await expectRefused("POST", `${V3}/join/${enc(`!a${NUL}b:weft.test`)}`, {});
    await expectRefused("GET", `${V3}/rooms/${r}/event/${enc(`$a${NUL}b`)}`);
    await expectRefused("GET", `${V3}/rooms/${r}/context/${enc(`$a${NUL}b`)}`);
    await expectRefused("PUT", `${V3}/rooms/${r}/state/org.example.x/${enc(`k${NUL}`)}`, { v: 1 });
    // A lookup in the room's state (in memory): no state key has a NUL, so none is found.
    await expectRefused("GET", `${V3}/rooms/${r}/state/org.example.x/${enc(`k${NUL}`)}`, undefined, [404, "M_NOT_FOUND"]);
    await expectRefused("PUT", `${V3}/rooms/${r}/send/${enc(`m.x${NUL}`)}/t${++txn}`, { body: "x" });
    await expectRefused("PUT", `${V3}/rooms/${r}/send/m.room.message/${enc(`t${NUL}`)}`, { msgtype: "m.text", body: "x" });
    await expectRefused("PUT", `${V3}/rooms/${r}/redact/${enc(eventId)}/${enc(`t${NUL}`)}`, {});
    await expectRefused("PUT", `${V3}/room_keys/keys/${r}/${enc(`s${NUL}`)}?version=${version}`, { first_message_index: 0, forwarded_count: 0, is_verified: false, session_data: {} });
    await expectRefused("GET", `${V3}/room_keys/keys/${r}/${enc(`s${NUL}`)}?version=${version}`);
    await expectRefused("PUT", `${V3}/user/${enc(alice.user_id)}/account_data/${enc(`t${NUL}`)}`, { v: 1 });
    await expectRefused("GET", `${V3}/user/${enc(alice.user_id)}/account_data/${enc(`t${NUL}`)}`);
    await expectRefused("PUT", `${V3}/user/${enc(alice.user_id)}/rooms/${r}/tags/${enc(`u.t${NUL}`)}`, {});
    await expectRefused("GET", `${V3}/devices/${enc(`D${NUL}`)}`);
    await expectRefused("PUT", `${V3}/devices/${enc(`D${NUL}`)}`, { display_name: "x" });
    await expectRefused("GET", `${V1}/rooms/${r}/relations/${enc(eventId)}/${enc(`m.thread${NUL}`)}`);
    await expectRefused("POST", `${V3}/rooms/${r}/receipt/m.read/${enc(`$e${NUL}`)}`, {});
    await expectRefused("PUT", `${V3}/sendToDevice/m.x/${enc(`t${NUL}`)}`, { messages: {} });
    await expectRefused("GET", `${V3}/user/${enc(alice.user_id)}/filter/${enc(`1${NUL}`)}`, undefined, [404, "M_NOT_FOUND"]);
    await expectRefused("GET", `${V3}/profile/${enc(`@a${NUL}:weft.test`)}`);
    await expectRefused("GET", `${V3}/directory/room/${enc(`#a${NUL}:weft.test`)}`);
  });

  it("refuses NUL in stored free text, and changes nothing", async () => {
    const me = enc(alice.user_id);
    await expectRefused("PUT", `${V3}/profile/${me}/displayname`, { displayname: `A${NUL}lice` });
    await expectRefused("PUT", `${V3}/profile/${me}/avatar_url`, { avatar_url: `mxc://weft.test/a${NUL}` });
    expect((await call("GET", `${V3}/profile/${me}`)).json).toEqual({ displayname: "alice" });
    await expectRefused("PUT", `${V3}/devices/${enc(alice.device_id)}`, { display_name: `phone${NUL}` });
    expect((await call("GET", `${V3}/devices/${enc(alice.device_id)}`)).json.display_name ?? "").not.toContain(NUL);
    await expectRefused("PUT", `${V3}/presence/${me}/status`, { presence: "online", status_msg: `busy${NUL}` });
    expect((await call("GET", `${V3}/presence/${me}/status`)).json.status_msg).toBeUndefined();
    await expectRefused("POST", `${V3}/rooms/${enc(roomId)}/report/${enc(eventId)}`, { reason: `spam${NUL}` });
    await expectRefused("POST", `${V3}/rooms/${enc(roomId)}/report`, { reason: `spam${NUL}` });
    await expectRefused("POST", `${V3}/room_keys/version`, { algorithm: `m.megolm_backup.v1${NUL}`, auth_data: {} });
    expect((await call("GET", `${V3}/room_keys/version`)).json.version).toBe(version);
    const reports = await t.call("GET", `/_synapse/admin/v1/event_reports`, { token: alice.access_token });
    if (reports.status === 200) expect(reports.json.total).toBe(0);
  });

  it("keeps NUL inside event content, and the derived columns consistent", async () => {
    const r = enc(roomId);
    const msg = await call("PUT", `${V3}/rooms/${r}/send/m.room.message/t${++txn}`, { msgtype: "m.text", body: `needle${NUL}haystack` });
    expect(msg.status, JSON.stringify(msg.json)).toBe(200);
    const read = await call("GET", `${V3}/rooms/${r}/event/${enc(msg.json.event_id)}`);
    expect(read.json.content.body).toBe(`needle${NUL}haystack`);
    const found = await call("POST", `${V3}/search`, { search_categories: { room_events: { search_term: "haystack" } } });
    expect(found.status).toBe(200);
    expect(found.json.search_categories.room_events.results.map((x: any) => x.result.event_id)).toContain(msg.json.event_id);

    expect((await call("PUT", `${V3}/rooms/${r}/state/m.room.name/`, { name: `Bad${NUL}Name` })).status).toBe(200);
    expect((await call("PUT", `${V3}/directory/list/room/${r}`, { visibility: "public" })).status).toBe(200);
    const listed = await call("GET", `${V3}/publicRooms`);
    const entry = listed.json.chunk.find((c: any) => c.room_id === roomId);
    expect(entry).toBeDefined();
    expect(entry.name).toBeUndefined();

    const member = await call("PUT", `${V3}/rooms/${r}/state/m.room.member/${enc(alice.user_id)}`, { membership: "join", displayname: `Al${NUL}ice` });
    expect(member.status, JSON.stringify(member.json)).toBe(200);
    const joined = await call("GET", `${V3}/rooms/${r}/joined_members`);
    expect(joined.status).toBe(200);
    expect(joined.json.joined[alice.user_id].display_name).toBeNull();
    const state = await call("GET", `${V3}/rooms/${r}/state/m.room.member/${enc(alice.user_id)}`);
    expect(state.json.displayname).toBe(`Al${NUL}ice`);

    const thread = await call("PUT", `${V3}/rooms/${r}/send/m.room.message/t${++txn}`, { msgtype: "m.text", body: "x", "m.relates_to": { rel_type: `m.thr${NUL}ead`, event_id: eventId } });
    expect(thread.status).toBe(200);
    const reaction = await call("PUT", `${V3}/rooms/${r}/send/m.reaction/t${++txn}`, { "m.relates_to": { rel_type: "m.annotation", event_id: eventId, key: `👍${NUL}` } });
    expect(reaction.status).toBe(200);
    expect((await call("GET", `${V1}/rooms/${r}/relations/${enc(eventId)}`)).status).toBe(200);
  });
});
