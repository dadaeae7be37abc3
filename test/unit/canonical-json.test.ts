// Canonical JSON: the examples of the spec's appendix ("Signing JSON" → "Canonical JSON" → "Examples")
// and the edge cases of its grammar (escapes, code point key order, integer range, negative zero).
import { describe, expect, it } from "vitest";
import {
  base64Unpadded,
  base64UrlUnpadded,
  canonicalJson,
  canonicalJsonIteratively,
  compareCodePoints,
  decodeBase64,
} from "../../src/domain/canonical-json.ts";
import { MatrixError } from "../../src/domain/errors.ts";

/** Parses JSON text as a server receives it, then encodes it canonically. */
const canon = (jsonText: string) => canonicalJson(JSON.parse(jsonText));

describe("canonical JSON: the spec's examples", () => {
  it("{} stays {}", () => {
    expect(canon("{}")).toBe("{}");
  });

  it("drops whitespace", () => {
    expect(canon('{\n    "one": 1,\n    "two": "Two"\n}')).toBe('{"one":1,"two":"Two"}');
  });

  it("sorts keys (pretty and compact inputs)", () => {
    expect(canon('{\n    "b": "2",\n    "a": "1"\n}')).toBe('{"a":"1","b":"2"}');
    expect(canon('{"b":"2","a":"1"}')).toBe('{"a":"1","b":"2"}');
  });

  it("sorts nested objects, keeps array order", () => {
    const input = `{
      "auth": {
        "success": true,
        "mxid": "@john.doe:example.com",
        "profile": {
          "display_name": "John Doe",
          "three_pids": [
            { "medium": "email", "address": "john.doe@example.org" },
            { "medium": "msisdn", "address": "123456789" }
          ]
        }
      }
    }`;
    expect(canon(input)).toBe(
      '{"auth":{"mxid":"@john.doe:example.com","profile":{"display_name":"John Doe","three_pids":' +
        '[{"address":"john.doe@example.org","medium":"email"},{"address":"123456789","medium":"msisdn"}]},"success":true}}',
    );
  });

  it("keeps non-ASCII as UTF-8, not \\u escapes", () => {
    const out = canon('{\n    "a": "日本語"\n}');
    expect(out).toBe('{"a":"日本語"}');
    expect(Buffer.from(out, "utf8")).toEqual(
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe6, 0x97, 0xa5, 0xe6, 0x9c, 0xac, 0xe8, 0xaa, 0x9e, 0x22, 0x7d]),
    );
  });

  it("sorts non-ASCII keys by code point", () => {
    expect(canon('{\n    "本": 2,\n    "日": 1\n}')).toBe('{"日":1,"本":2}');
  });

  it("unescapes \\u escapes that need no escaping", () => {
    expect(canon('{\n    "a": "\\u65E5"\n}')).toBe('{"a":"日"}');
  });

  it("keeps null", () => {
    expect(canon('{\n    "a": null\n}')).toBe('{"a":null}');
  });

  it("writes -0 as 0 and 1e10 as an integer", () => {
    expect(canon('{\n    "a": -0,\n    "b": 1e10\n}')).toBe('{"a":0,"b":10000000000}');
  });
});

describe("canonical JSON: string escapes", () => {
  it("uses the short escapes for \\b \\t \\n \\f \\r, quote and backslash", () => {
    expect(canonicalJson("\b\t\n\f\r\"\\")).toBe('"\\b\\t\\n\\f\\r\\"\\\\"');
  });

  it("uses lowercase \\u00XX for the other control characters", () => {
    expect(canonicalJson("\u0000")).toBe('"\\u0000"');
    expect(canonicalJson("\u0001\u0007\u000b\u000e\u000f")).toBe('"\\u0001\\u0007\\u000b\\u000e\\u000f"');
    expect(canonicalJson("\u0010\u001a\u001f")).toBe('"\\u0010\\u001a\\u001f"');
    expect(canon('"\\u001F"')).toBe('"\\u001f"');
  });

  it("does not escape /, DEL, U+2028 or astral characters", () => {
    expect(canonicalJson("a/b\u007f\u2028😀")).toBe('"a/b\u007f\u2028😀"');
    expect(canon('"\\ud83d\\ude00"')).toBe('"😀"');
  });

  it("rejects lone surrogates, which have no UTF-8 form", () => {
    expect(() => canonicalJson("\ud800")).toThrow(MatrixError);
    expect(() => canonicalJson({ "\udc00": 1 })).toThrow(MatrixError);
  });
});

describe("canonical JSON: key order by code point", () => {
  it("orders astral keys after U+E000–U+FFFF (UTF-16 order would not)", () => {
    const obj = { "\u{1F600}": 1, "\uFFFD": 2, "\uE000": 3, z: 4, A: 5 };
    expect(canonicalJson(obj)).toBe('{"A":5,"z":4,"\uE000":3,"\uFFFD":2,"\u{1F600}":1}');
  });

  it("orders a prefix before its extensions and uppercase before lowercase", () => {
    expect(canonicalJson({ ab: 1, a: 2, B: 3, b: 4 })).toBe('{"B":3,"a":2,"ab":1,"b":4}');
  });

  it("compareCodePoints agrees with sorting by code point arrays", () => {
    const keys = ["\u{10000}", "\uFFFF", "\uD7FF", "a", "", "\u{10FFFF}", "é", "e\u0301"];
    const byCodePoints = [...keys].sort((x, y) => {
      const a = [...x].map((c) => c.codePointAt(0)!);
      const b = [...y].map((c) => c.codePointAt(0)!);
      for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
      return a.length - b.length;
    });
    expect([...keys].sort(compareCodePoints)).toEqual(byCodePoints);
  });
});

describe("canonical JSON: numbers and other values", () => {
  it("accepts integers at the edges of the range", () => {
    expect(canonicalJson(2 ** 53 - 1)).toBe("9007199254740991");
    expect(canonicalJson(-(2 ** 53) + 1)).toBe("-9007199254740991");
    expect(canonicalJson(-0)).toBe("0");
    expect(canonicalJson([0, -1, 1])).toBe("[0,-1,1]");
  });

  it("rejects integers out of range", () => {
    expect(() => canonicalJson(2 ** 53)).toThrow(MatrixError);
    expect(() => canonicalJson(-(2 ** 53))).toThrow(MatrixError);
    expect(() => canon('{"a": 1e300}')).toThrow(MatrixError);
  });

  it("rejects floats, NaN and infinities with M_BAD_JSON", () => {
    for (const bad of [1.5, -0.1, NaN, Infinity, -Infinity]) {
      try {
        canonicalJson({ a: [bad] });
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(MatrixError);
        expect((e as MatrixError).errcode).toBe("M_BAD_JSON");
      }
    }
  });

  it("rejects values JSON cannot carry", () => {
    expect(() => canonicalJson(undefined)).toThrow(MatrixError);
    expect(() => canonicalJson(() => 1)).toThrow(MatrixError);
    expect(() => canonicalJson(BigInt(1))).toThrow(MatrixError);
  });

  it("encodes booleans, null, arrays and nested structures", () => {
    expect(canonicalJson([true, false, null, [], {}, [{}], "x"])).toBe('[true,false,null,[],{},[{}],"x"]');
    expect(canonicalJson({ b: { d: [3, { f: 1, e: 2 }], c: null }, a: [] })).toBe('{"a":[],"b":{"c":null,"d":[3,{"e":2,"f":1}]}}');
  });

  it("leaves out object members whose value is undefined", () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
  });
});

describe("unpadded base64", () => {
  const cases: [string, string][] = [
    ["", ""],
    ["f", "Zg"],
    ["fo", "Zm8"],
    ["foo", "Zm9v"],
    ["foob", "Zm9vYg"],
    ["fooba", "Zm9vYmE"],
    ["foobar", "Zm9vYmFy"],
  ];
  it.each(cases)("UNPADDED_BASE64(%j) = %j", (plain, encoded) => {
    expect(base64Unpadded(Buffer.from(plain))).toBe(encoded);
    expect(decodeBase64(encoded).toString()).toBe(plain);
  });

  it("decodes padded and URL-safe input too", () => {
    expect(decodeBase64("Zg==").toString()).toBe("f");
    const bytes = Buffer.from([0xfb, 0xff, 0xbf]);
    expect(base64Unpadded(bytes)).toBe("+/+/");
    expect(base64UrlUnpadded(bytes)).toBe("-_-_");
    expect(decodeBase64("-_-_")).toEqual(bytes);
  });
});

describe("canonical JSON: the recursive walk and the iterative one agree", () => {
  /** A pseudo-random JSON value (seeded: the same values every run) with keys that sort differently by code unit and by code point. */
  function randomValue(seed: { n: number }, depth: number): unknown {
    const r = () => ((seed.n = (seed.n * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const keys = ["a", "b", "B", "\ufb01", "\ud83d\ude00", "10", "2", "é", "", "z\u0000"];
    const pick = r();
    if (depth > 4 || pick < 0.3) return [r() < 0.5 ? Math.floor(r() * 2 ** 40) - 2 ** 39 : -0, keys[Math.floor(r() * keys.length)], true, false, null][Math.floor(r() * 5)];
    if (pick < 0.6) return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(seed, depth + 1));
    const obj: Record<string, unknown> = {};
    for (let i = Math.floor(r() * 5); i > 0; i--) obj[keys[Math.floor(r() * keys.length)]!] = r() < 0.1 ? undefined : randomValue(seed, depth + 1);
    return obj;
  }

  it("on many random values (keys with surrogates, numeric keys, undefined members)", () => {
    const seed = { n: 17 };
    for (let i = 0; i < 2000; i++) {
      const v = randomValue(seed, 0);
      expect(canonicalJson(v)).toBe(canonicalJsonIteratively(v));
    }
    expect(canonicalJson({ "\ud83d\ude00": 1, "\uffff": 2, a: 3 })).toBe('{"a":3,"\uffff":2,"\ud83d\ude00":1}');
  });

  it("on objects of every size up to 40 keys (sorted in place below 16 keys, by the engine's sort from 16)", () => {
    const seed = { n: 5 };
    const r = () => ((seed.n = (seed.n * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const pool = ["a", "b", "B", "aa", "a\u0000", "\ufb01", "\uffff", "\ud83d\ude00", "\ud83d\ude01", "10", "9", "2", "é", "", "z", "Z", "_", "~"];
    for (let size = 0; size <= 40; size++) {
      for (let round = 0; round < 20; round++) {
        const obj: Record<string, unknown> = {};
        // Pool keys and made-up ones, in random insertion order; some rounds without surrogate keys.
        const plain = round % 2 === 0;
        while (Object.keys(obj).length < size) {
          const k = r() < 0.5 ? pool[Math.floor(r() * pool.length)]! : `k${Math.floor(r() * 1000)}`;
          if (plain && /[\ud800-\udfff]/.test(k)) continue;
          obj[k] = Math.floor(r() * 100);
        }
        expect(canonicalJson(obj)).toBe(canonicalJsonIteratively(obj));
      }
    }
  });

  it("on values nested past the recursive walk's depth (the iterative walk takes over)", () => {
    let deep: unknown = { leaf: [1, "x"] };
    for (let i = 0; i < 5000; i++) deep = i % 2 ? { k: deep, b: i } : [deep];
    const text = canonicalJson(deep);
    expect(text).toBe(canonicalJsonIteratively(deep));
    expect(text.startsWith('{"b":4999,"k":[{"b":4997,')).toBe(true);
  });

  it("refuses the same values: fractions, out-of-range integers, lone surrogates, undefined in arrays", () => {
    for (const bad of [{ a: 1.5 }, [2 ** 53], { "\ud800": 1 }, ["\udc00"], [undefined], { f: () => 1 }]) {
      expect(() => canonicalJson(bad)).toThrow(MatrixError);
      expect(() => canonicalJsonIteratively(bad)).toThrow(MatrixError);
    }
  });
});
