// Send-to-device messaging across servers (Server-Server API "Send-to-device messaging",
// m.direct_to_device EDUs). Outbound: the messages of one PUT /sendToDevice for users of one server go
// to it as one EDU with a fresh message_id, queued durably with the request's own transaction. Inbound: an EDU from a server for its own user's message is
// queued for the local devices it names (`*`: all of a user's devices) exactly once — the sender and
// message_id are recorded in the same transaction, so a resent EDU delivers nothing again.
import { randomBytes } from "node:crypto";
import { canonicalJson } from "../../canonical-json.js";
import { isPlainObject } from "../../e2ee/json.js";
import { queueLocalToDevice } from "../../e2ee/to-device.js";
import { claimToDeviceMessage } from "../e2ee/remote-device-store.js";
import { serverOfUser } from "../room-servers.js";
/** message_id is an opaque string; this bounds what we store of one. */
const MAX_MESSAGE_ID = 255;
/**
 * Queues each server its users' messages (user → device → content) as one m.direct_to_device EDU, in
 * the sending request's transaction `tx` (durable: delivered after a restart or an outage). Returns the
 * servers to wake once `tx` committed.
 */
export async function queueToRemoteDevices(s, tx, sender, type, byServer) {
    const wake = [];
    for (const [server, messages] of byServer) {
        const message_id = randomBytes(16).toString("base64url");
        wake.push(...(await s.federationSender.queueDurableEdu(tx, [server], { edu_type: "m.direct_to_device", content: { sender, type, message_id, messages } })));
    }
    return wake;
}
/** Inbound m.direct_to_device (declared in src/main.ts, `eduHandlers`). */
export const toDeviceEduHandler = {
    type: "m.direct_to_device",
    async handle(s, origin, content) {
        if (!isPlainObject(content))
            return;
        const { sender, type, message_id: messageId, messages } = content;
        if (typeof sender !== "string" || typeof type !== "string" || type === "" || typeof messageId !== "string" || messageId === "" || messageId.length > MAX_MESSAGE_ID || !isPlainObject(messages)) {
            s.log.info({ origin }, "malformed m.direct_to_device EDU dropped");
            return;
        }
        if (serverOfUser(sender) !== origin) {
            s.log.info({ origin, sender }, "m.direct_to_device EDU from a user of another server dropped");
            return;
        }
        const local = [];
        for (const [userId, devices] of Object.entries(messages)) {
            if (serverOfUser(userId) !== s.config.server_name || !isPlainObject(devices))
                continue;
            for (const [deviceId, body] of Object.entries(devices)) {
                if (!isPlainObject(body))
                    continue;
                try {
                    local.push({ userId, deviceId, content: canonicalJson(body) });
                }
                catch {
                    // Content canonical JSON cannot carry (e.g. a float): that message is dropped.
                }
            }
        }
        if (local.length === 0)
            return;
        const fresh = await queueLocalToDevice(s, sender, type, local, (tx) => claimToDeviceMessage(tx, sender, messageId, s.clock.now()));
        if (!fresh)
            s.log.debug({ origin, messageId }, "m.direct_to_device EDU seen before: not delivered again");
    },
};
/** How long a received message_id is remembered (a server retrying a transaction does so within this). */
const SEEN_KEEP_MS = 7 * 24 * 60 * 60 * 1000;
/** Forgets message ids received more than SEEN_KEEP_MS ago, hourly (declared in src/main.ts, `background`). */
export const expireSeenToDevice = (s) => {
    const timer = setInterval(() => {
        s.storage.sql.run(`DELETE FROM federation_to_device_seen WHERE ts < ?`, [s.clock.now() - SEEN_KEEP_MS]).catch((err) => s.log.warn({ err }, "expiring received to-device message ids failed"));
    }, 60 * 60 * 1000);
    timer.unref();
    return () => clearInterval(timer);
};
