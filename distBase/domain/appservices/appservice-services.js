import { AppServiceQueueStore } from "../store/appservice-queue.js";
import { AppServiceClient } from "./client.js";
import { AppServiceSenders } from "./sender.js";
export class AppServiceServices {
    queue;
    client;
    senders;
    /** (service id, protocol) → its answer to GET /thirdparty/protocol/{protocol} (Synapse keeps it an hour). */
    protocols;
    constructor(s) {
        this.protocols = s.caches.get("as_protocol_meta", 1000);
        this.queue = new AppServiceQueueStore(s.storage.sql);
        this.client = new AppServiceClient({ timeoutMs: s.config.app_service_request_timeout, legacyAuthorization: s.config.use_appservice_legacy_authorization });
        this.senders = new AppServiceSenders(s, this.queue, this.client);
    }
}
