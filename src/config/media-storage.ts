// Where media bytes live: `media_store` (Weft's own option: the primary store, local disk under
// media_store_path by default, or an S3-compatible bucket) and `media_storage_providers` (Synapse's
// option, in the shape operators know from synapse-s3-storage-provider: more stores written after the
// primary one and read from when the primary one lacks a file).
//
//   media_store: {backend: s3, bucket, region, endpoint_url, access_key_id, secret_access_key,
//                 session_token, prefix, storage_class, force_path_style}
//   media_storage_providers:
//     - module: s3_storage_provider.S3StorageProviderBackend
//       store_local: true        # upload this server's own media to it (Synapse's default: false)
//       store_remote: true       # also the cache of other servers' media (default: false)
//       store_synchronous: true  # upload before the client is answered (default: false: in the background)
//       config: {bucket, region_name, endpoint_url, access_key_id, secret_access_key, session_token,
//                prefix, storage_class, force_path_style}
import { ConfigError } from "./errors.ts";
import type { Reader } from "./config.ts";

/** One S3-compatible bucket. Credentials left out come from the AWS SDK's usual chain (AWS_* env, profiles). */
export interface S3Options {
  bucket: string;
  region: string;
  /** An S3-compatible server's URL (MinIO, Ceph, Garage, R2 ...); AWS itself when absent. */
  endpoint_url?: string;
  access_key_id?: string;
  secret_access_key?: string;
  session_token?: string;
  /** Prepended to every object key as given (end it with "/" for a folder). */
  prefix: string;
  storage_class?: string;
  /** bucket in the path rather than the host name (default: true when endpoint_url is set). */
  force_path_style: boolean;
}

export type MediaStoreConfig = { backend: "local" } | { backend: "s3"; s3: S3Options };

export interface MediaStorageProviderConfig {
  s3: S3Options;
  store_local: boolean;
  store_remote: boolean;
  store_synchronous: boolean;
}

export interface MediaStorageConfig {
  /** The primary store. With s3, media_store_path only holds scratch files (uploads being received, renders). */
  media_store: MediaStoreConfig;
  media_storage_providers: MediaStorageProviderConfig[];
}

/** synapse-s3-storage-provider's module path, and the short names accepted beside it. */
const S3_MODULES: readonly string[] = ["s3_storage_provider.S3StorageProviderBackend", "s3"];

function s3Options(r: Reader, name: string, regionKey: "region" | "region_name"): S3Options {
  const bucket = r.string("bucket");
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new ConfigError(`${name}.bucket`, "must be a valid S3 bucket name (3-63 lower-case letters, digits, dots and hyphens)");
  const endpoint = r.optString("endpoint_url");
  if (endpoint !== undefined && !/^https?:\/\//.test(endpoint)) throw new ConfigError(`${name}.endpoint_url`, "must be an http:// or https:// URL");
  if (endpoint !== undefined && !URL.canParse(endpoint)) throw new ConfigError(`${name}.endpoint_url`, "must be a URL");
  const accessKey = r.optString("access_key_id");
  const secret = r.optString("secret_access_key");
  if ((accessKey === undefined) !== (secret === undefined))
    throw new ConfigError(`${name}.${accessKey === undefined ? "access_key_id" : "secret_access_key"}`, "is required with the other half of the key pair");
  const prefix = r.has("prefix") ? r.string("prefix") : "";
  const storageClass = r.optString("storage_class");
  const sessionToken = r.optString("session_token");
  return {
    bucket,
    region: r.string(regionKey, "us-east-1"),
    prefix,
    force_path_style: r.bool("force_path_style", endpoint !== undefined),
    ...(endpoint !== undefined ? { endpoint_url: endpoint } : {}),
    ...(accessKey !== undefined ? { access_key_id: accessKey, secret_access_key: secret! } : {}),
    ...(sessionToken !== undefined ? { session_token: sessionToken } : {}),
    ...(storageClass !== undefined ? { storage_class: storageClass } : {}),
  };
}

function mediaStore(r: Reader): MediaStoreConfig {
  if (!r.has("media_store")) return { backend: "local" };
  const m = r.section("media_store");
  const backend = m.string("backend", "local");
  if (backend === "local") return { backend: "local" };
  if (backend !== "s3") throw new ConfigError("media_store.backend", `must be "local" or "s3", not "${backend}"`);
  return { backend: "s3", s3: s3Options(m, "media_store", "region") };
}

function providers(r: Reader): MediaStorageProviderConfig[] {
  return r.list("media_storage_providers").map((item, i) => {
    const name = `media_storage_providers[${i}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw new ConfigError(name, "must be a mapping with module and config");
    const p = r.child(item as Record<string, unknown>, `${name}.`);
    const module = p.string("module");
    if (!S3_MODULES.includes(module))
      throw new ConfigError(`${name}.module`, `${JSON.stringify(module)} is not supported (use s3_storage_provider.S3StorageProviderBackend)`);
    const c = p.section("config");
    return {
      s3: s3Options(c, `${name}.config`, "region_name"),
      store_local: p.bool("store_local", false),
      store_remote: p.bool("store_remote", false),
      store_synchronous: p.bool("store_synchronous", false),
    };
  });
}

export function readMediaStorageConfig(r: Reader): MediaStorageConfig {
  return { media_store: mediaStore(r), media_storage_providers: providers(r) };
}
