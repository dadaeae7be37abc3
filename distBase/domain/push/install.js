export const dropDevicePushers = async (s, userId, deviceIds) => {
    for (const p of await s.push.pushers.store.deleteOf(userId, deviceIds))
        s.push.pushers.removed(p.userId, p.appId, p.pushkey);
};
export const dropUserPushers = async (s, userId) => {
    for (const p of await s.push.pushers.store.deleteOf(userId))
        s.push.pushers.removed(p.userId, p.appId, p.pushkey);
};
/** The gateway queues: each pusher's queue resumes from its stored position. */
export const pushGateways = (s) => {
    const started = s.push.pushers.start();
    return async () => {
        await started.catch(() => undefined);
        await s.push.pushers.close();
    };
};
