import { SsoStore } from "../store/sso.js";
import { OidcProvider } from "./oidc.js";
export class SsoServices {
    providers;
    store;
    constructor(config, db) {
        this.providers = new Map(config.oidc_providers.map((p) => [p.idp_id, new OidcProvider(p)]));
        this.store = new SsoStore(db);
    }
    get enabled() {
        return this.providers.size > 0;
    }
}
