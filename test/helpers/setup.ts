// Runs before every test file: polyfills matrix-js-sdk needs on Node 20, and the noble ed25519 hash.
import { createHash } from "node:crypto";
import "reflect-metadata";

const P = Promise as unknown as { withResolvers?: unknown };
if (typeof P.withResolvers !== "function") {
  P.withResolvers = function withResolvers<T>() {
    let resolve!: (v: T | PromiseLike<T>) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

void createHash;
