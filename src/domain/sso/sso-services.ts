// Single sign-on machinery built once at start-up: one OIDC relying party per configured provider and the
// repository of external ids and pending attempts.
import type { Config } from "../../config/config.ts";
import type { Db } from "../../storage/database.ts";
import { SsoStore } from "../store/sso.ts";
import { OidcProvider } from "./oidc.ts";

export class SsoServices {
  readonly providers: Map<string, OidcProvider>;
  readonly store: SsoStore;

  constructor(config: Config, db: Db) {
    this.providers = new Map(config.oidc_providers.map((p) => [p.idp_id, new OidcProvider(p)]));
    this.store = new SsoStore(db);
  }

  get enabled(): boolean {
    return this.providers.size > 0;
  }
}
