// matrix-js-sdk 43 and the content repository, on SQLite and PostgreSQL: one client uploads an image with
// uploadContent, sends it in a room, and another client reads the event, turns the mxc URI into an
// authenticated media URL with mxcUrlToHttp (useAuthentication) and downloads it and a thumbnail with its
// own access token, as Element does; getMediaConfig reads the upload limit. Once with media on local
// disk, once with an S3 bucket (s3rver) as the primary store, whose objects the test then lists.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import sharp from "sharp";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { makeClient, registerWithDummy } from "../helpers/js-sdk.ts";
import { png } from "../helpers/media.ts";
import { startS3, type TestS3 } from "../helpers/s3.ts";

const cases = backends().flatMap((backend) => (["local disk", "an S3 bucket"] as const).map((store) => [backend, store] as const));

describe.each(cases)("matrix-js-sdk media on %s, stored on %s", (backend, store) => {
  let t: TestServer;
  let s3: TestS3 | undefined;
  beforeAll(async () => {
    if (store === "an S3 bucket") s3 = await startS3();
    t = await startTestServer({ backend, config: s3 ? { media_store: { backend: "s3", ...s3.options() } } : {} });
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });

  it("uploads an image with one client and downloads it with another", async () => {
    const register = async (name: string) => {
      const { response } = await registerWithDummy(makeClient(t.baseUrl), name, "password123");
      return makeClient(t.baseUrl, { userId: response.user_id, accessToken: response.access_token!, deviceId: response.device_id! });
    };
    const alice = await register("alice");
    const bob = await register("bob");

    const config = await bob.getMediaConfig(true);
    expect(config["m.upload.size"]).toBe(50 * 1024 * 1024);

    const image = await png(400, 300);
    const { content_uri } = await alice.uploadContent(image, { type: "image/png", name: "garden.png" });
    expect(content_uri).toMatch(/^mxc:\/\/weft\.test\//);

    const { room_id } = await alice.createRoom({ invite: [bob.getUserId()!] });
    await bob.joinRoom(room_id);
    const { event_id } = await alice.sendMessage(room_id, { msgtype: "m.image", body: "garden.png", url: content_uri, info: { mimetype: "image/png", w: 400, h: 300, size: image.length } } as never);
    const event = await bob.fetchRoomEvent(room_id, event_id);
    const mxc = (event.content as { url: string }).url;
    expect(mxc).toBe(content_uri);

    const url = bob.mxcUrlToHttp(mxc, undefined, undefined, undefined, false, true, true)!;
    expect(url).toContain("/_matrix/client/v1/media/download/weft.test/");
    const auth = { authorization: `Bearer ${bob.getAccessToken()}` };
    const res = await fetch(url, { headers: auth });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(image)).toBe(true);
    expect(res.headers.get("content-disposition")).toBe("inline; filename=garden.png");
    expect((await fetch(url)).status).toBe(401);

    const thumbUrl = bob.mxcUrlToHttp(mxc, 320, 240, "scale", false, true, true)!;
    expect(thumbUrl).toContain("/_matrix/client/v1/media/thumbnail/weft.test/");
    const thumb = await fetch(thumbUrl, { headers: auth });
    const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
    expect([thumb.status, meta.width, meta.height]).toEqual([200, 320, 240]);
    if (s3) {
      const mediaId = mxc.split("/").pop()!;
      expect((await s3.keys()).filter((k) => k.includes(mediaId))).toContain(t.hs.services.media.files.contentKey({ origin: "weft.test", mediaId }));
    }
  });
});
