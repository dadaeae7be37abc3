// Size limits, the PDU format check, the client serialization, and the room version table.
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../../src/domain/canonical-json.ts";
import { MatrixError } from "../../../src/domain/errors.ts";
import { toClientEvent } from "../../../src/domain/events/format.ts";
import { computeEventId, roomIdFromCreateEvent, withContentHash } from "../../../src/domain/events/hashes.ts";
import { checkPduSize, MAX_PDU_BYTES, pduSizeBytes } from "../../../src/domain/events/size.ts";
import type { Pdu } from "../../../src/domain/events/types.ts";
import { validatePduFormat } from "../../../src/domain/events/validate.ts";
import {
  DEFAULT_ROOM_VERSION,
  getRoomVersion,
  KNOWN_ROOM_VERSIONS,
  resolveRoomVersion,
  roomVersionsCapability,
} from "../../../src/domain/rooms/room-versions.ts";

function message(body: string, extra: Partial<Pdu> = {}): Pdu {
  return {
    room_id: "!r:example.org",
    sender: "@u:example.org",
    type: "m.room.message",
    content: { msgtype: "m.text", body },
    origin_server_ts: 1_700_000_000_000,
    prev_events: ["$prev"],
    auth_events: ["$a1", "$a2"],
    depth: 10,
    hashes: { sha256: "h" },
    signatures: { "example.org": { "ed25519:1": "s" } },
    ...extra,
  };
}

function errcodeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof MatrixError ? e.errcode : "not a MatrixError";
  }
  return undefined;
}

describe("size limits", () => {
  it("allows exactly 65536 bytes of canonical JSON and refuses 65537", () => {
    const base = pduSizeBytes(message(""));
    const exact = message("x".repeat(MAX_PDU_BYTES - base));
    expect(Buffer.byteLength(canonicalJson(exact))).toBe(65_536);
    expect(() => checkPduSize(exact)).not.toThrow();
    const over = message("x".repeat(MAX_PDU_BYTES - base + 1));
    expect(errcodeOf(() => checkPduSize(over))).toBe("M_TOO_LARGE");
  });

  it("counts bytes, not characters, and includes signatures", () => {
    const base = pduSizeBytes(message(""));
    const euro = "€"; // 3 bytes in UTF-8
    const n = Math.floor((MAX_PDU_BYTES - base) / 3);
    expect(() => checkPduSize(message(euro.repeat(n)))).not.toThrow();
    expect(errcodeOf(() => checkPduSize(message(euro.repeat(n + 1))))).toBe("M_TOO_LARGE");
    const fits = message("x".repeat(MAX_PDU_BYTES - base));
    const signed = { ...fits, signatures: { ...fits.signatures, "other.org": { "ed25519:2": "t" } } };
    expect(errcodeOf(() => checkPduSize(signed))).toBe("M_TOO_LARGE");
  });

  it.each(["sender", "room_id", "state_key", "type", "event_id"])("limits %s to 255 bytes", (field) => {
    const ok = "a".repeat(255);
    const tooLong = "é".repeat(128); // 256 bytes
    expect(() => checkPduSize(message("x", { [field]: ok }))).not.toThrow();
    expect(errcodeOf(() => checkPduSize(message("x", { [field]: tooLong })))).toBe("M_TOO_LARGE");
  });
});

describe("validatePduFormat", () => {
  const v1 = (extra: Partial<Pdu> = {}) =>
    message("x", { event_id: "$1:example.org", prev_events: [["$p:example.org", { sha256: "h" }]], auth_events: [], ...extra });

  it("accepts the shape of each version and refuses the other shape", () => {
    expect(() => validatePduFormat(v1(), "1")).not.toThrow();
    expect(errcodeOf(() => validatePduFormat(v1({ event_id: undefined }), "2"))).toBe("M_BAD_JSON");
    expect(errcodeOf(() => validatePduFormat(message("x"), "2"))).toBe("M_BAD_JSON");
    expect(() => validatePduFormat(message("x"), "3")).not.toThrow();
    expect(errcodeOf(() => validatePduFormat(v1(), "3"))).toBe("M_BAD_JSON");
  });

  it("enforces canonical JSON from v6 only", () => {
    const floaty = message("x", { content: { body: "x", n: 1.5 } });
    expect(() => validatePduFormat(floaty, "5")).not.toThrow();
    expect(errcodeOf(() => validatePduFormat(floaty, "6"))).toBe("M_BAD_JSON");
    const big = message("x", { content: { n: 2 ** 53 } });
    expect(errcodeOf(() => validatePduFormat(big, "6"))).toBe("M_BAD_JSON");
    expect(errcodeOf(() => validatePduFormat(message("x", { depth: 2 ** 53 }), "6"))).toBe("M_BAD_JSON");
  });

  it("caps prev_events at 20 and auth_events at 10", () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `$e${i}`);
    expect(() => validatePduFormat(message("x", { prev_events: ids(20), auth_events: ids(10) }), "11")).not.toThrow();
    expect(errcodeOf(() => validatePduFormat(message("x", { prev_events: ids(21) }), "11"))).toBe("M_BAD_JSON");
    expect(errcodeOf(() => validatePduFormat(message("x", { auth_events: ids(11) }), "11"))).toBe("M_BAD_JSON");
  });

  it("requires room_id except on a v12 create event", () => {
    const create = { ...message("x"), type: "m.room.create", state_key: "", content: {}, prev_events: [], auth_events: [] };
    delete (create as Partial<Pdu>).room_id;
    expect(() => validatePduFormat(create, "12")).not.toThrow();
    expect(errcodeOf(() => validatePduFormat(create, "11"))).toBe("M_BAD_JSON");
    expect(errcodeOf(() => validatePduFormat({ ...message("x"), room_id: undefined }, "12"))).toBe("M_BAD_JSON");
  });

  it("refuses oversized events", () => {
    expect(errcodeOf(() => validatePduFormat(message("x".repeat(70_000)), "11"))).toBe("M_TOO_LARGE");
  });
});

describe("toClientEvent", () => {
  const NOW = 1_700_000_005_000;

  it("carries only client fields, with age from now", () => {
    const e = message("hi", { origin: "example.org", unsigned: { age_ts: 5 } });
    const c = toClientEvent(e, { roomVersion: "10", now: NOW });
    expect(c).toEqual({
      event_id: computeEventId(e, "10"),
      type: "m.room.message",
      content: { msgtype: "m.text", body: "hi" },
      sender: "@u:example.org",
      origin_server_ts: 1_700_000_000_000,
      room_id: "!r:example.org",
      unsigned: { age: 5000 },
    });
    for (const k of ["hashes", "signatures", "auth_events", "prev_events", "depth", "origin", "state_key"]) expect(c).not.toHaveProperty(k);
  });

  it("has no origin for v11 and no unsigned when nothing goes in it", () => {
    const c = toClientEvent(message("hi", { origin: "example.org" }), { roomVersion: "11" });
    expect(c).not.toHaveProperty("origin");
    expect(c).not.toHaveProperty("unsigned");
  });

  it("puts prev_content inside unsigned for state events only, and transaction_id only when given", () => {
    const state = message("", { type: "m.room.topic", state_key: "", content: { topic: "new" } });
    const c = toClientEvent(state, { roomVersion: "11", prevContent: { topic: "old" }, transactionId: "txn1", now: NOW, ageTs: NOW - 10 });
    expect(c.state_key).toBe("");
    expect(c.unsigned).toEqual({ prev_content: { topic: "old" }, transaction_id: "txn1", age: 10 });
    expect(c).not.toHaveProperty("prev_content");
    const plain = toClientEvent(message("x"), { roomVersion: "11", prevContent: { topic: "old" } });
    expect(plain).not.toHaveProperty("unsigned");
  });

  it("serves redacts at the top level and in content in every version", () => {
    const v10 = message("", { type: "m.room.redaction", content: { reason: "spam" }, redacts: "$target" });
    const c10 = toClientEvent(v10, { roomVersion: "10", eventId: "$r" });
    expect(c10.redacts).toBe("$target");
    expect(c10.content).toEqual({ reason: "spam", redacts: "$target" });
    expect(v10.content).toEqual({ reason: "spam" }); // input untouched

    const v11 = message("", { type: "m.room.redaction", content: { reason: "spam", redacts: "$target" } });
    const c11 = toClientEvent(v11, { roomVersion: "11", eventId: "$r" });
    expect(c11.redacts).toBe("$target");
    expect(c11.content).toEqual({ reason: "spam", redacts: "$target" });
  });

  it("adds redacted_because and can omit room_id", () => {
    const because = { type: "m.room.redaction", event_id: "$r", content: {}, sender: "@m:x", origin_server_ts: 1 };
    const c = toClientEvent(message(""), { roomVersion: "11", eventId: "$e", redactedBecause: because, omitRoomId: true });
    expect(c.unsigned?.redacted_because).toEqual(because);
    expect(c).not.toHaveProperty("room_id");
  });

  it("gives a v12 create event the room id derived from it", () => {
    const create = withContentHash({
      type: "m.room.create",
      state_key: "",
      sender: "@u:example.org",
      content: { room_version: "12" },
      origin_server_ts: 1,
      prev_events: [],
      auth_events: [],
      depth: 1,
      hashes: { sha256: "" },
      signatures: {},
    } as Pdu);
    const c = toClientEvent(create, { roomVersion: "12" });
    expect(c.room_id).toBe(roomIdFromCreateEvent(create, "12"));
    expect(c.event_id).toBe("$" + c.room_id!.slice(1));
  });

  it("uses the carried event_id in v1–2", () => {
    const e = message("x", { event_id: "$abc:example.org", prev_events: [], auth_events: [] });
    expect(toClientEvent(e, { roomVersion: "1" }).event_id).toBe("$abc:example.org");
  });
});

describe("room version table", () => {
  // The spec's versions; Synapse's unstable MSC3757 versions follow them.
  const STABLE = KNOWN_ROOM_VERSIONS.filter((id) => getRoomVersion(id)?.stability === "stable");

  it("knows versions 1–12, all stable, default 11, then MSC3757's unstable 10 and 11", () => {
    expect(STABLE).toEqual(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"]);
    expect(KNOWN_ROOM_VERSIONS).toEqual([...STABLE, "org.matrix.msc3757.10", "org.matrix.msc3757.11"]);
    expect(DEFAULT_ROOM_VERSION).toBe("11");
    for (const base of ["10", "11"]) {
      const { id, stability, ownedState, ...rest } = getRoomVersion(`org.matrix.msc3757.${base}`)!;
      const { id: _id, ownedState: baseOwned, ...baseRest } = getRoomVersion(base)!;
      expect([id, stability, ownedState, baseOwned]).toEqual([`org.matrix.msc3757.${base}`, "unstable", true, false]);
      expect({ ...rest, stability: "stable" }).toEqual(baseRest);
    }
    expect(getRoomVersion("13")).toBeUndefined();
    expect(getRoomVersion("org.example.custom")).toBeUndefined();
    expect(errcodeOf(() => resolveRoomVersion("13"))).toBe("M_UNSUPPORTED_ROOM_VERSION");
    expect(roomVersionsCapability().default).toBe("11");
  });

  it("has the spec's feature matrix", () => {
    const flag = (k: keyof NonNullable<ReturnType<typeof getRoomVersion>>) =>
      STABLE.filter((id) => getRoomVersion(id)![k] === true).join(",");
    expect(flag("knock")).toBe("7,8,9,10,11,12");
    expect(flag("restricted")).toBe("8,9,10,11,12");
    expect(flag("knockRestricted")).toBe("10,11,12");
    expect(flag("strictCanonicalJson")).toBe("6,7,8,9,10,11,12");
    expect(flag("integerOnlyPowerLevels")).toBe("10,11,12");
    expect(flag("stringPowerLevels")).toBe("1,2,3,4,5,6,7,8,9");
    expect(flag("redactsInContent")).toBe("11,12");
    expect(flag("createHasCreator")).toBe("1,2,3,4,5,6,7,8,9,10");
    expect(flag("specialCaseAliasesAuth")).toBe("1,2,3,4,5");
    expect(flag("redactionAuthInRules")).toBe("1,2");
    expect(flag("roomIdIsCreateEventHash")).toBe("12");
    expect(flag("privilegedCreators")).toBe("12");
    expect(flag("createInAuthEvents")).toBe("1,2,3,4,5,6,7,8,9,10,11");
    expect(KNOWN_ROOM_VERSIONS.filter((id) => getRoomVersion(id)!.ownedState).join(",")).toBe("org.matrix.msc3757.10,org.matrix.msc3757.11");
    const field = (k: "eventIdFormat" | "stateResolution" | "redaction") => STABLE.map((id) => getRoomVersion(id)![k]);
    expect(field("eventIdFormat")).toEqual([
      "server-assigned",
      "server-assigned",
      "reference-hash-base64",
      ...Array(9).fill("reference-hash-base64url"),
    ]);
    expect(field("stateResolution")).toEqual(["v1", ...Array(10).fill("v2"), "v2.1"]);
    expect(field("redaction")).toEqual(["v1", "v1", "v1", "v1", "v1", "v6", "v6", "v8", "v9", "v9", "v11", "v11"]);
  });
});
