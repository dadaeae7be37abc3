// Test helper: assert that an auth check passes or fails with a given rule id.
import { expect } from "vitest";
import { AuthError } from "../../../src/domain/auth/index.ts";

export function expectRule(fn: () => unknown, rule: string, httpStatus = 403): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected rule ${rule} to fail`).toBeInstanceOf(AuthError);
  const err = caught as AuthError;
  expect(err.errcode).toBe("M_FORBIDDEN");
  expect(err.httpStatus).toBe(httpStatus);
  expect(err.rule).toBe(rule);
  expect(err.message).toContain(rule);
}

export function expectAllowed(fn: () => unknown): void {
  expect(fn).not.toThrow();
}
