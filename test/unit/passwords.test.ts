// Password hashing (scrypt with parameters in the hash) and the password policy's error codes.
import { describe, expect, it } from "vitest";
import { checkPasswordPolicy, hashPassword, verifyPassword } from "../../src/domain/accounts/passwords.ts";
import { MatrixError } from "../../src/domain/errors.ts";

describe("password hashing", () => {
  it("verifies the right password only, with a fresh salt each time", async () => {
    const a = await hashPassword("correct horse", 4);
    const b = await hashPassword("correct horse", 4);
    expect(a).toMatch(/^\$scrypt\$ln=4,r=8,p=1\$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword("correct horse", a)).toBe(true);
    expect(await verifyPassword("correct horsf", a)).toBe(false);
    expect(await verifyPassword("correct horse", null)).toBe(false);
    expect(await verifyPassword("correct horse", "$2b$12$bcrypt-style")).toBe(false);
  });

  it("keeps verifying old hashes after the cost changes", async () => {
    const old = await hashPassword("pw", 5);
    expect(await verifyPassword("pw", old)).toBe(true);
  });

  it("normalizes unicode so the same password typed differently matches", async () => {
    const h = await hashPassword("caf\u00e9", 4);
    expect(await verifyPassword("cafe\u0301", h)).toBe(true);
  });
});

describe("password policy", () => {
  const policy = { enabled: true, minimum_length: 6, require_digit: true, require_symbol: true, require_lowercase: true, require_uppercase: true };
  const code = (pw: string) => {
    try {
      checkPasswordPolicy(pw, policy);
      return "ok";
    } catch (e) {
      return (e as MatrixError).errcode;
    }
  };
  it("names the first rule broken", () => {
    expect(code("Ab1!")).toBe("M_PASSWORD_TOO_SHORT");
    expect(code("Abcdef!")).toBe("M_PASSWORD_NO_DIGIT");
    expect(code("Abcdef1")).toBe("M_PASSWORD_NO_SYMBOL");
    expect(code("abcdef1!")).toBe("M_PASSWORD_NO_UPPERCASE");
    expect(code("ABCDEF1!")).toBe("M_PASSWORD_NO_LOWERCASE");
    expect(code("Abcdef1!")).toBe("ok");
  });
  it("does nothing when disabled", () => {
    expect(() => checkPasswordPolicy("", { ...policy, enabled: false })).not.toThrow();
  });
});
