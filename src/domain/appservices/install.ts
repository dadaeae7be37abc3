// The application-service capability's start and stop (declared in src/main.ts as a background task):
// each service's sender account exists (its sender_localpart user, made at start if missing, so that it
// has a profile and can join rooms like any user), then the sender loops start — each resuming its
// persistent queue — and stop on shutdown. Spec: Application Service API "Registration".
import type { BackgroundTask } from "../extensions.ts";
import type { Services } from "../services.ts";
import { appServiceUserId } from "../accounts/appservices.ts";

async function ensureSenderAccounts(s: Services): Promise<void> {
  for (const as of s.config.app_services) {
    const userId = appServiceUserId(s.config, as);
    if (await s.users.exists(userId)) continue;
    try {
      await s.db.$transaction((tx) => s.users.create(tx, { userId, passwordHash: null, appserviceId: as.id, displayname: as.sender_localpart }, s.clock.now()));
    } catch (err) {
      // Registered meanwhile (the service's own /register): the account exists, which is all we need.
      if ((err as { code?: string }).code !== "P2002") throw err;
    }
  }
}

export const appServiceSenders: BackgroundTask = (s, fence) => {
  if (s.config.app_services.length === 0) return () => {};
  const ready = ensureSenderAccounts(s)
    .catch((err) => s.log.error({ err }, "could not create the application services' sender accounts"))
    .then(() => s.appservices.senders.start(fence));
  return async () => {
    await ready;
    await s.appservices.senders.close();
    await s.appservices.client.close();
  };
};
