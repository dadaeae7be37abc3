// Content hash, reference hash and event ids, checked against the spec's "Cryptographic Test Vectors"
// (Appendices, Event Signing), against a real federated event with a known id, and against an
// independent computation with node:crypto.
import { createHash, createPrivateKey, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../../src/domain/canonical-json.ts";
import {
  checkContentHash,
  computeContentHash,
  computeEventId,
  eventIdOf,
  eventReference,
  referenceHash,
  roomIdFromCreateEvent,
  roomIdOf,
  withContentHash,
} from "../../../src/domain/events/hashes.ts";
import { redactEvent } from "../../../src/domain/events/redaction.ts";
import type { Pdu } from "../../../src/domain/events/types.ts";

// Appendices → Cryptographic Test Vectors: seed, server "domain", key "ed25519:1".
const SEED = Buffer.from("YJDBA9Xnr2sVqXD9Vj7XVUnmFZcZrlw8Md7kMW+3XA1", "base64");
const PRIVATE_KEY = createPrivateKey({
  key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), SEED]),
  format: "der",
  type: "pkcs8",
});

/** The spec's event signing, done here independently: redact, drop signatures/unsigned, sign canonical JSON. */
function specSignature(event: Pdu, version: string): string {
  const redacted = redactEvent(event, version) as Record<string, unknown>;
  delete redacted["signatures"];
  delete redacted["unsigned"];
  return sign(null, Buffer.from(canonicalJson(redacted)), PRIVATE_KEY).toString("base64").replace(/=+$/, "");
}

describe("spec test vectors: Appendices → Event Signing", () => {
  it("minimal event: content hash and signature over the redacted form", () => {
    const event = {
      room_id: "!x:domain",
      sender: "@a:domain",
      origin: "domain",
      origin_server_ts: 1000000,
      signatures: {},
      hashes: {},
      type: "X",
      content: {},
      prev_events: [],
      auth_events: [],
      depth: 3,
      unsigned: { age_ts: 1000000 },
    } as unknown as Pdu;
    const hashed = withContentHash(event);
    expect(hashed.hashes.sha256).toBe("5jM4wQpv6lnBo7CLIghJuHdW+s2CMBJPUOGOC89ncos");
    expect(checkContentHash(hashed)).toBe(true);
    // The test vector keeps `origin`, so it follows the v1–10 redaction algorithm.
    for (const version of ["1", "4", "10"]) {
      expect(specSignature(hashed, version)).toBe(
        "KxwGjPSDEtvnFgU00fwFz+l6d2pJM6XBIaMEn81SXPTRl16AqLAYqfIReFGZlHi5KLjAWbOoMszkwsQma+lYAg",
      );
    }
  });

  it("event with redactable content: content hash covers the body, the signature does not", () => {
    const event = {
      content: { body: "Here is the message content" },
      event_id: "$0:domain",
      origin: "domain",
      origin_server_ts: 1000000,
      type: "m.room.message",
      room_id: "!r:domain",
      sender: "@u:domain",
      signatures: {},
      unsigned: { age_ts: 1000000 },
    } as unknown as Pdu;
    const hashed = withContentHash(event);
    expect(hashed.hashes.sha256).toBe("onLKD1bGljeBWQhWZ1kaP9SorVmRQNdN5aM2JYU2n/g");
    expect(specSignature(hashed, "1")).toBe(
      "Wm+VzmOUOz08Ds+0NTWb1d4CZrVsJSikkeRxh6aCcUwu6pNC78FunoD7KNWzqFn241eYHYMGCA5McEiVPdhzBA",
    );
    // Changing the body breaks the content hash but not the (redacted) signature.
    const tampered = { ...hashed, content: { body: "changed" } };
    expect(checkContentHash(tampered)).toBe(false);
    expect(specSignature(tampered, "1")).toBe(specSignature(hashed, "1"));
  });
});

// A real m.room.create event sent by Synapse on jki.re (room version 5), as published in
// matrix-org/gomatrixserverlib's eventversion_test.go together with its event id. Used as data only.
const JKI_CREATE = JSON.parse(
  `{"auth_events": [], "prev_events": [], "type": "m.room.create", "room_id": "!uXDCzlYgCTHtiWCkEx:jki.re", "sender": "@erikj:jki.re", "content": {"room_version": "5", "predecessor": {"room_id": "!gdRMqOrTFdOCYHNwOo:half-shot.uk", "event_id": "$LP7ROBc4b+cMc1UE9haIz8q5AK2AIW4eJ90FfKLvyZI"}, "creator": "@erikj:jki.re"}, "depth": 1, "prev_state": [], "state_key": "", "origin": "jki.re", "origin_server_ts": 1560284621137, "hashes": {"sha256": "IX6zuNiJpJPNf70BLleL3HSCpjKeq9Uhu7uUpyDjBmc"}, "signatures": {"jki.re": {"ed25519:auto": "O4IyFfF2PPtGp5uaDm8t57dZbdh8vc8Q64LgCwvzYRVItAMI0uisfiAFaxkVT7MRpzh6N2QNN5NMRXZKmgPYDA"}}, "unsigned": {"age": 1321650}}`,
) as Pdu;

// A real room version 1 event from the same source (its event_id is carried, not derived).
const LOCALHOST_V1 = JSON.parse(
  `{"auth_events":[["$oXL79cT7fFxR7dPH:localhost",{"sha256":"abjkiDSg1RkuZrbj2jZoGMlQaaj1Ue3Jhi7I7NlKfXY"}],["$IVUsaSkm1LBAZYYh:localhost",{"sha256":"X7RUj46hM/8sUHNBIFkStbOauPvbDzjSdH4NibYWnko"}],["$VS2QT0EeArZYi8wf:localhost",{"sha256":"k9eM6utkCH8vhLW9/oRsH74jOBS/6RVK42iGDFbylno"}]],"content":{"name":"test3"},"depth":7,"event_id":"$yvN1b43rlmcOs5fY:localhost","hashes":{"sha256":"Oh1mwI1jEqZ3tgJ+V1Dmu5nOEGpCE4RFUqyJv2gQXKs"},"origin":"localhost","origin_server_ts":1510854416361,"prev_events":[["$FqI6TVvWpcbcnJ97:localhost",{"sha256":"upCsBqUhNUgT2/+zkzg8TbqdQpWWKQnZpGJc6KcbUC4"}]],"prev_state":[],"room_id":"!19Mp0U9hjajeIiw1:localhost","sender":"@test:localhost","signatures":{"localhost":{"ed25519:u9kP":"5IzSuRXkxvbTp0vZhhXYZeOe+619iG3AybJXr7zfNn/4vHz4TH7qSJVQXSaHHvcTcDodAKHnTG1WDulgO5okAQ"}},"state_key":"","type":"m.room.name"}`,
) as Pdu;

describe("event ids from the reference hash", () => {
  it("a real federated event: content hash and id in v3 (base64) and v4+ (URL-safe) form", () => {
    expect(checkContentHash(JKI_CREATE)).toBe(true);
    expect(computeEventId(JKI_CREATE, "3")).toBe("$RrGxF28UrHLmoASHndYb9Jb/1SFww2ptmtur9INS438");
    expect(computeEventId(JKI_CREATE, "4")).toBe("$RrGxF28UrHLmoASHndYb9Jb_1SFww2ptmtur9INS438");
    expect(computeEventId(JKI_CREATE, "5")).toBe("$RrGxF28UrHLmoASHndYb9Jb_1SFww2ptmtur9INS438");
  });

  it("a real v1 event: content hash verifies and the id is the carried event_id", () => {
    expect(checkContentHash(LOCALHOST_V1)).toBe(true);
    expect(eventIdOf(LOCALHOST_V1, "1")).toBe("$yvN1b43rlmcOs5fY:localhost");
    expect(() => computeEventId(LOCALHOST_V1, "1")).toThrow();
    const [id, hash] = eventReference(LOCALHOST_V1, "1");
    expect(id).toBe("$yvN1b43rlmcOs5fY:localhost");
    expect(hash.sha256).toMatch(/^[A-Za-z0-9+/]{43}$/);
  });

  it("the reference hash ignores signatures, unsigned and redactable content", () => {
    const base = referenceHash(JKI_CREATE, "5");
    const changed = {
      ...JKI_CREATE,
      signatures: { other: { "ed25519:x": "abc" } },
      unsigned: { age: 1 },
      content: { ...JKI_CREATE.content, predecessor: { room_id: "!other:x" } },
    };
    expect(referenceHash(changed, "5").equals(base)).toBe(true);
    // ... but v11's redaction keeps the whole create content, so there it counts.
    expect(referenceHash(changed, "11").equals(referenceHash(JKI_CREATE, "11"))).toBe(false);
  });

  it("matches an independent node:crypto computation for every hash-id version", () => {
    const event = {
      room_id: "!r:example.org",
      sender: "@u:example.org",
      type: "m.room.message",
      content: { body: "hello", msgtype: "m.text" },
      origin_server_ts: 1_700_000_000_000,
      prev_events: ["$a"],
      auth_events: ["$b", "$c"],
      depth: 5,
      hashes: { sha256: "x" },
      signatures: { "example.org": { "ed25519:1": "sig" } },
      unsigned: { age: 3 },
      origin: "example.org",
    } as unknown as Pdu;
    // By hand: the message's redacted form (content emptied; origin kept until v11), sorted keys.
    const v10Form = `{"auth_events":["$b","$c"],"content":{},"depth":5,"hashes":{"sha256":"x"},"origin":"example.org","origin_server_ts":1700000000000,"prev_events":["$a"],"room_id":"!r:example.org","sender":"@u:example.org","type":"m.room.message"}`;
    const v11Form = v10Form.replace(`"origin":"example.org",`, "");
    const h = (s: string) => createHash("sha256").update(s).digest();
    expect(computeEventId(event, "3")).toBe("$" + h(v10Form).toString("base64").replace(/=+$/, ""));
    for (const v of ["4", "5", "6", "7", "8", "9", "10"]) expect(computeEventId(event, v)).toBe("$" + h(v10Form).toString("base64url"));
    for (const v of ["11", "12"]) expect(computeEventId(event, v)).toBe("$" + h(v11Form).toString("base64url"));
  });

  it("v12: the room id is `!` + the create event's reference hash; the create event has no room_id", () => {
    const create = withContentHash({
      type: "m.room.create",
      state_key: "",
      sender: "@alice:example.org",
      content: { room_version: "12", additional_creators: ["@bob:example.org"] },
      origin_server_ts: 1_700_000_000_000,
      prev_events: [],
      auth_events: [],
      depth: 1,
      hashes: { sha256: "" },
      signatures: {},
    } as Pdu);
    const { signatures: _s, ...rest } = create;
    const expected = "!" + createHash("sha256").update(canonicalJson(rest)).digest("base64url");
    expect(roomIdFromCreateEvent(create, "12")).toBe(expected);
    expect(roomIdOf(create, "12")).toBe(expected);
    expect(computeEventId(create, "12")).toBe("$" + expected.slice(1));
    expect(() => roomIdFromCreateEvent(create, "11")).toThrow();
  });

  it("checkContentHash refuses a missing or wrong hash", () => {
    const e = withContentHash({ ...JKI_CREATE });
    expect(checkContentHash(e)).toBe(true);
    expect(checkContentHash({ ...e, hashes: { sha256: "AAAA" } })).toBe(false);
    expect(checkContentHash({ ...e, hashes: {} as Pdu["hashes"] })).toBe(false);
    expect(computeContentHash(e)).toBe(e.hashes.sha256);
  });
});
