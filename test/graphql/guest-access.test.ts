// What a guest may do is decided by the domain operation, so both faces answer alike.
import { describe, expect, it } from "vitest";
import { backends } from "../helpers/server.ts";
import { withServer } from "../helpers/with-server.ts";
import { errcode, gql } from "./client.ts";

const V3 = "/_matrix/client/v3";

describe.each(backends())("guest access on both faces (%s)", (backend) => {
  const { t } = withServer({ backend });

  it("a guest can create a room through neither face", async () => {
    const guest = (await t.call("POST", `${V3}/register?kind=guest`, { body: {} })).json;
    const rest = await t.call("POST", `${V3}/createRoom`, { token: guest.access_token, body: {} });
    expect([rest.status, rest.json.errcode]).toEqual([403, "M_GUEST_ACCESS_FORBIDDEN"]);
    const g = await gql(t, `mutation { createRoom(input: {}) { roomId } }`, undefined, guest.access_token);
    expect(errcode(g.body)).toBe("M_GUEST_ACCESS_FORBIDDEN");
    expect(g.body.data?.createRoom ?? null).toBeNull();
  });
});
