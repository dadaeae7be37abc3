// A web client on GraphQL alone, in headless Chromium (Debian's, driven by playwright-core), on SQLite and
// PostgreSQL (issue 39): a page served by the test (another origin than the homeserver: CORS as a real
// web app meets it) loads graphql-ws's browser build, logs in with the `login` mutation, lists the
// viewer's rooms live from the `syncUpdates` subscription (a room another user creates and invites it
// to appears without reload, and moves to joined once the page joins it with `joinRoom`), uploads an
// image it draws with `createUpload` and a plain PUT to the signed URL and shows it in an <img> from
// `media(mxcUri).httpUrl`, and shows a message the other user sends, live. The page makes no request
// but to /graphql (HTTP and WebSocket) and the signed upload URL; the test asserts on its DOM.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { gql, REGISTER } from "./client.ts";

const CHROMIUM = "/usr/bin/chromium";
// The package's browser build (its exports map does not list the umd folder: found beside package.json).
const GRAPHQL_WS_UMD = join(dirname(createRequire(import.meta.url).resolve("graphql-ws/package.json")), "umd", "graphql-ws.min.js");

/** The web app: plain script, no framework; every call is a GraphQL operation. */
function appHtml(homeserver: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Weft GraphQL app</title>
<script src="/graphql-ws.js"></script></head><body>
<form id="login"><input id="user" name="user"><input id="password" type="password" name="password"><button id="login-button">Log in</button></form>
<p id="me"></p><p id="status"></p>
<h2>Invites</h2><ul id="invites"></ul>
<h2>Rooms</h2><ul id="rooms"></ul>
<h2>Messages</h2><ul id="messages"></ul>
<button id="upload">Upload a picture</button><p id="upload-status"></p><img id="picture" alt="">
<script>
const HS = ${JSON.stringify(homeserver)};
let token;
async function gql(query, variables) {
  const res = await fetch(HS + "/graphql", {
    method: "POST",
    headers: Object.assign({ "content-type": "application/json" }, token ? { authorization: "Bearer " + token } : {}),
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors && body.errors.length) throw new Error(body.errors.map((e) => (e.extensions && e.extensions.code) + ": " + e.message).join("; "));
  return body.data;
}
function item(list, id, text) {
  let li = document.querySelector("#" + list + " li[data-id='" + CSS.escape(id) + "']");
  if (!li) { li = document.createElement("li"); li.dataset.id = id; document.getElementById(list).appendChild(li); }
  li.textContent = text;
  return li;
}
function drop(list, id) {
  const li = document.querySelector("#" + list + " li[data-id='" + CSS.escape(id) + "']");
  if (li) li.remove();
}
function joinButton(li, roomId) {
  const b = document.createElement("button");
  b.textContent = "Join"; b.className = "join";
  b.onclick = async () => { await gql("mutation ($r: String!) { joinRoom(roomIdOrAlias: $r) { roomId } }", { r: roomId }); };
  li.appendChild(b);
}
function live() {
  const ws = graphqlWs.createClient({ url: HS.replace(/^http/, "ws") + "/graphql", connectionParams: { authorization: "Bearer " + token }, retryAttempts: 0 });
  ws.subscribe({
    query: "subscription { syncUpdates { nextBatch invitedRoomIds leftRoomIds joinedRooms { roomId timeline { eventId type sender body } } } }",
  }, {
    next(r) {
      if (r.errors) { document.getElementById("status").textContent = "error: " + r.errors[0].message; return; }
      const u = r.data.syncUpdates;
      for (const id of u.invitedRoomIds) joinButton(item("invites", id, id), id);
      for (const id of u.leftRoomIds) drop("rooms", id);
      for (const room of u.joinedRooms) {
        drop("invites", room.roomId);
        item("rooms", room.roomId, room.roomId);
        for (const e of room.timeline) if (e.type === "m.room.message") item("messages", e.eventId, e.sender + ": " + e.body).dataset.room = room.roomId;
      }
      document.getElementById("status").textContent = "live " + u.nextBatch;
    },
    error(e) { document.getElementById("status").textContent = "error: " + (e && e.message || e); },
    complete() {},
  });
}
document.getElementById("login").onsubmit = async (ev) => {
  ev.preventDefault();
  const data = await gql("mutation ($input: LoginInput!) { login(input: $input) { userId accessToken } }",
    { input: { user: document.getElementById("user").value, password: document.getElementById("password").value } });
  token = data.login.accessToken;
  document.getElementById("me").textContent = data.login.userId;
  live();
};
document.getElementById("upload").onclick = async () => {
  const canvas = document.createElement("canvas");
  canvas.width = 48; canvas.height = 32;
  const c = canvas.getContext("2d"); c.fillStyle = "#c03"; c.fillRect(0, 0, 48, 32);
  const png = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
  const ticket = (await gql("mutation { createUpload { uploadUrl media { mxcUri } } }")).createUpload;
  const put = await fetch(ticket.uploadUrl, { method: "PUT", body: png, headers: { "content-type": "image/png" } });
  if (!put.ok) { document.getElementById("upload-status").textContent = "PUT " + put.status; return; }
  const media = (await gql("query ($m: String!) { media(mxcUri: $m) { mxcUri httpUrl } }", { m: ticket.media.mxcUri })).media;
  const img = document.getElementById("picture");
  img.onload = () => { document.getElementById("upload-status").textContent = "shown " + media.mxcUri; };
  img.onerror = () => { document.getElementById("upload-status").textContent = "img error"; };
  img.src = media.httpUrl;
};
</script></body></html>`;
}

describe.each(backends())("a GraphQL-only web app in headless Chromium (%s)", (backend) => {
  let t: TestServer;
  let web: Server;
  let webOrigin: string;
  let browser: Browser;
  let page: Page;
  let bobToken: string;
  let bobId: string;
  let aliceId: string;
  let roomIdJoined: string;
  const foreign: string[] = [];
  const pageErrors: string[] = [];
  const sockets: string[] = [];
  let navigations = 0;

  beforeAll(async () => {
    t = await startTestServer({ backend });
    aliceId = (await gql(t, REGISTER, { input: { username: "alice", password: "alice-password" } })).body.data.register.userId;
    const bob = (await gql(t, REGISTER, { input: { username: "bob", password: "bob-password" } })).body.data.register;
    bobToken = bob.accessToken;
    bobId = bob.userId;
    const html = appHtml(t.baseUrl);
    const script = readFileSync(GRAPHQL_WS_UMD);
    web = createServer((req, res) => {
      if (req.url === "/") return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
      if (req.url === "/graphql-ws.js") return res.writeHead(200, { "content-type": "text/javascript" }).end(script);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => web.listen(0, "127.0.0.1", () => r()));
    webOrigin = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
    page = await browser.newPage();
    const hs = new URL(t.baseUrl);
    page.on("request", (req) => {
      const u = new URL(req.url());
      if (u.origin === webOrigin) return;
      // The homeserver: GraphQL, and the signed media URLs (upload, download) it hands out.
      if (u.host === hs.host && (u.pathname === "/graphql" || u.pathname.startsWith("/_impl/media/"))) return;
      foreign.push(req.url());
    });
    page.on("pageerror", (err) => pageErrors.push(err.message));
    page.on("websocket", (ws) => sockets.push(ws.url()));
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    await page.goto(webOrigin + "/");
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (web ? web.close(() => r()) : r()));
    await t?.close();
  });

  const text = (selector: string) => page.locator(selector).allTextContents();

  it("logs in with the login mutation and goes live", async () => {
    await page.fill("#user", "alice");
    await page.fill("#password", "alice-password");
    await page.click("#login-button");
    await expect.poll(() => page.textContent("#me"), { timeout: 20_000 }).toBe(aliceId);
    await expect.poll(() => page.textContent("#status"), { timeout: 20_000 }).toMatch(/^live /);
    expect(await text("#rooms li")).toEqual([]);
  });

  it("lists a room another user creates and invites it to, live, and joins it", async () => {
    const created = await gql(t, `mutation ($invite: [String!]) { createRoom(input: { name: "Garden", invite: $invite }) { roomId } }`, { invite: [aliceId] }, bobToken);
    expect(created.body.errors).toBeUndefined();
    const roomId = created.body.data.createRoom.roomId as string;
    await expect.poll(() => page.locator("#invites li").evaluateAll((lis) => lis.map((li) => (li as unknown as { dataset: { id: string } }).dataset.id)), { timeout: 20_000 }).toEqual([roomId]);
    expect(await text("#rooms li")).toEqual([]);
    await page.click("#invites li button.join");
    await expect.poll(() => text("#rooms li"), { timeout: 20_000 }).toEqual([roomId]);
    expect(await text("#invites li")).toEqual([]);

    roomIdJoined = roomId;
  });

  it("shows a message the other user sends, live", async () => {
    const sent = await gql(t, `mutation ($roomId: String!) { sendMessage(roomId: $roomId, txnId: "m1", body: "hello from bob") { eventId } }`, { roomId: roomIdJoined }, bobToken);
    expect(sent.body.errors).toBeUndefined();
    await expect.poll(() => text("#messages li"), { timeout: 20_000 }).toEqual([`${bobId}: hello from bob`]);
    const shown = await page.locator("#messages li").evaluateAll((lis) => lis.map((li) => {
      const d = (li as unknown as { dataset: { id: string; room: string } }).dataset;
      return { id: d.id, room: d.room };
    }));
    expect(shown).toEqual([{ id: sent.body.data.sendMessage.eventId, room: roomIdJoined }]);
  });

  it("uploads a picture through createUpload and a signed PUT, and shows it from media.httpUrl", async () => {
    await page.click("#upload");
    await expect.poll(() => page.textContent("#upload-status"), { timeout: 20_000 }).toMatch(/^shown mxc:\/\//);
    const img = await page.locator("#picture").evaluate((el) => {
      const i = el as unknown as { src: string; naturalWidth: number; naturalHeight: number };
      return { src: i.src, w: i.naturalWidth, h: i.naturalHeight };
    });
    expect(img.w).toBe(48);
    expect(img.h).toBe(32);
    // A token-less URL of the homeserver (the page never puts its token in a URL).
    expect(new URL(img.src).origin).toBe(new URL(t.baseUrl).origin);
    const pageToken = (await page.evaluate("token")) as string;
    expect(pageToken.length).toBeGreaterThan(10);
    expect(img.src).not.toContain(pageToken);
  });

  it("made no request but GraphQL and the signed media URLs, never reloaded, and threw nothing", () => {
    expect(foreign).toEqual([]);
    // One WebSocket, to /graphql: the live parts came over the subscription, with the page loaded once.
    expect(sockets).toEqual([t.baseUrl.replace(/^http/, "ws") + "/graphql"]);
    expect(navigations).toBe(1);
    expect(pageErrors).toEqual([]);
  });
});
