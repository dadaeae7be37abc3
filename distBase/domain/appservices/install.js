import { appServiceUserId } from "../accounts/appservices.js";
async function ensureSenderAccounts(s) {
    for (const as of s.config.app_services) {
        const userId = appServiceUserId(s.config, as);
        if (await s.users.exists(userId))
            continue;
        try {
            await s.db.$transaction((tx) => s.users.create(tx, { userId, passwordHash: null, appserviceId: as.id, displayname: as.sender_localpart }, s.clock.now()));
        }
        catch (err) {
            // Registered meanwhile (the service's own /register): the account exists, which is all we need.
            if (err.code !== "P2002")
                throw err;
        }
    }
}
export const appServiceSenders = (s) => {
    if (s.config.app_services.length === 0)
        return () => { };
    const ready = ensureSenderAccounts(s)
        .catch((err) => s.log.error({ err }, "could not create the application services' sender accounts"))
        .then(() => s.appservices.senders.start());
    return async () => {
        await ready;
        await s.appservices.senders.close();
        await s.appservices.client.close();
    };
};
