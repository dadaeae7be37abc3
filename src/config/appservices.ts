// Application service registration files (spec: Application Service API, "Registration"): parsed and
// validated at start-up so a bad file stops the server with a message naming it and the field.
import { readFileSync } from "node:fs";
import YAML from "yaml";
import { ConfigError } from "./errors.ts";

export interface Namespace {
  exclusive: boolean;
  regex: string;
  pattern: RegExp;
}

export interface AppServiceRegistration {
  id: string;
  url: string | null;
  as_token: string;
  hs_token: string;
  sender_localpart: string;
  namespaces: { users: Namespace[]; aliases: Namespace[]; rooms: Namespace[] };
  rate_limited: boolean;
  protocols: string[];
  receive_ephemeral: boolean;
  file: string;
}

function namespaces(raw: unknown, where: string): Namespace[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new ConfigError(where, "must be a list of {exclusive, regex}");
  return raw.map((ns, i) => {
    const n = ns as { exclusive?: unknown; regex?: unknown };
    if (typeof n?.regex !== "string") throw new ConfigError(`${where}[${i}].regex`, "must be a string");
    if (typeof n.exclusive !== "boolean") throw new ConfigError(`${where}[${i}].exclusive`, "must be true or false");
    let pattern: RegExp;
    try {
      pattern = new RegExp(`^(?:${n.regex})$`);
    } catch (err) {
      throw new ConfigError(`${where}[${i}].regex`, `is not a valid regular expression: ${(err as Error).message}`);
    }
    return { exclusive: n.exclusive, regex: n.regex, pattern };
  });
}

export function parseAppServiceRegistration(raw: unknown, file: string): AppServiceRegistration {
  const where = (k: string) => `app_service_config_files: ${file}: ${k}`;
  if (typeof raw !== "object" || raw === null) throw new ConfigError(where("(file)"), "must be a mapping");
  const r = raw as Record<string, unknown>;
  for (const k of ["id", "as_token", "hs_token", "sender_localpart"]) {
    if (typeof r[k] !== "string" || (r[k] as string).length === 0) throw new ConfigError(where(k), "is required and must be a string");
  }
  if (r.url !== null && r.url !== undefined && typeof r.url !== "string") throw new ConfigError(where("url"), "must be a URL or null");
  const ns = (r.namespaces ?? {}) as Record<string, unknown>;
  return {
    id: r.id as string,
    url: (r.url as string | null | undefined) ?? null,
    as_token: r.as_token as string,
    hs_token: r.hs_token as string,
    sender_localpart: r.sender_localpart as string,
    namespaces: {
      users: namespaces(ns.users, where("namespaces.users")),
      aliases: namespaces(ns.aliases, where("namespaces.aliases")),
      rooms: namespaces(ns.rooms, where("namespaces.rooms")),
    },
    rate_limited: r.rate_limited === undefined ? true : Boolean(r.rate_limited),
    protocols: Array.isArray(r.protocols) ? r.protocols.map(String) : [],
    receive_ephemeral: Boolean(r["de.sorunome.msc2409.push_ephemeral"] ?? r.receive_ephemeral ?? false),
    file,
  };
}

export function loadAppServiceRegistrations(files: string[], _serverName: string): AppServiceRegistration[] {
  const seen = new Map<string, string>();
  return files.map((file) => {
    let raw: unknown;
    try {
      raw = YAML.parse(readFileSync(file, "utf8"));
    } catch (err) {
      throw new ConfigError(`app_service_config_files: ${file}`, (err as Error).message);
    }
    const reg = parseAppServiceRegistration(raw, file);
    for (const key of [`id:${reg.id}`, `as_token:${reg.as_token}`]) {
      if (seen.has(key)) throw new ConfigError(`app_service_config_files: ${file}`, `duplicate ${key.split(":")[0]} (also in ${seen.get(key)})`);
      seen.set(key, file);
    }
    return reg;
  });
}
