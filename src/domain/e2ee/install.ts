// Installs what E2EE adds to other capabilities: device hooks (device-list stream, clean-up on
// deletion) and encryption by default in createRoom. Called once from src/main.ts; idempotent.
import { installDeviceListHooks } from "./device-lists.ts";
import { installEncryptionDefault } from "./encryption-default.ts";

export function installE2eeHooks(): void {
  installDeviceListHooks();
  installEncryptionDefault();
}
