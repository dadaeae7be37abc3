// Loads matrix-bot-sdk (0.7.1, pinned) for the application-service tests. The SDK requires its optional
// end-to-end-encryption engine, @matrix-org/matrix-sdk-crypto-nodejs, at load time, and that package's
// native library is fetched from GitHub by an install script (not allowed here, and the machine has no
// route to GitHub). Our test bridges never encrypt, so the module is registered as an empty one before the
// SDK loads; any use of the SDK's crypto would fail loudly rather than silently.
import { createRequire, Module } from "node:module";

const require = createRequire(import.meta.url);

export type BotSdk = typeof import("matrix-bot-sdk");

let loaded: BotSdk | undefined;

export function loadBotSdk(): BotSdk {
  if (loaded) return loaded;
  const main = require.resolve("matrix-bot-sdk");
  const crypto = createRequire(main).resolve("@matrix-org/matrix-sdk-crypto-nodejs");
  if (!require.cache[crypto]) {
    const stub = new Module(crypto);
    stub.filename = crypto;
    stub.loaded = true;
    stub.exports = new Proxy({}, { get: (_t, name) => (typeof name === "symbol" || name === "then" || name === "__esModule" ? undefined : () => { throw new Error(`matrix-bot-sdk's crypto (${String(name)}) is not available in these tests`); }) });
    require.cache[crypto] = stub;
  }
  loaded = require("matrix-bot-sdk") as BotSdk;
  // Quiet unless WEFT_TEST_SDK_LOG=1 (it logs, e.g., each expected M_USER_IN_USE as an error).
  if (process.env.WEFT_TEST_SDK_LOG === "1") loaded.LogService.setLevel(loaded.LogLevel.DEBUG);
  else {
    const none = () => {};
    loaded.LogService.setLogger({ info: none, warn: none, error: none, debug: none, trace: none });
  }
  return loaded;
}
