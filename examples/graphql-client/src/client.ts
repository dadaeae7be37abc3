// A typed Weft client over graphql-ws: every operation is one of the typed documents graphql-codegen
// generated (src/gql/graphql.ts), sent the automatic-persisted-queries way — first its SHA-256 alone
// (query "" and extensions.persistedQuery), then, if the server does not know it yet
// (PERSISTED_QUERY_NOT_FOUND), with its text from src/gql/persisted-documents.json once. Results and
// variables are typed by the document.
import { readFileSync } from "node:fs";
import WebSocket from "ws";
import { createClient, type Client, type FormattedExecutionResult } from "graphql-ws";
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";

const texts: Record<string, string> = JSON.parse(readFileSync(new URL("./gql/persisted-documents.json", import.meta.url), "utf8"));

/** The hash (without the "sha256:" prefix) and text of a generated document. */
function persisted(doc: TypedDocumentNode<unknown, unknown>): { hash: string; text: string } {
  const id = (doc as { __meta__?: { hash?: string } }).__meta__?.hash;
  const text = id ? texts[id] : undefined;
  if (!id || !text) throw new Error("not a persisted document: run `npm run codegen`");
  return { hash: id.replace(/^sha256:/, ""), text };
}

type GraphqlErrors = readonly { message: string; extensions?: Record<string, unknown> }[];

export class WeftGraphqlError extends Error {
  readonly errors: GraphqlErrors;
  constructor(errors: GraphqlErrors) {
    super(errors.map((e) => `${e.message} (${String(e.extensions?.errcode ?? e.extensions?.code ?? "?")})`).join("; "));
    this.errors = errors;
  }
  get code(): unknown {
    return this.errors[0]?.extensions?.code;
  }
}

export class WeftClient {
  readonly ws: Client;
  constructor(url: string, token?: string) {
    this.ws = createClient({
      url: url.replace(/^http/, "ws") + "/graphql",
      webSocketImpl: WebSocket,
      connectionParams: token ? { authorization: `Bearer ${token}` } : undefined,
      retryAttempts: 0,
      lazy: true,
    });
  }

  /** Runs a query or mutation; resolves with its typed data, rejects with WeftGraphqlError. */
  async run<TData, TVars>(doc: TypedDocumentNode<TData, TVars>, variables: TVars): Promise<TData> {
    const { hash, text } = persisted(doc as TypedDocumentNode<unknown, unknown>);
    try {
      return await this.once<TData>("", hash, variables);
    } catch (err) {
      if (!(err instanceof WeftGraphqlError) || err.code !== "PERSISTED_QUERY_NOT_FOUND") throw err;
      return this.once<TData>(text, hash, variables);
    }
  }

  private once<TData>(query: string, hash: string, variables: unknown): Promise<TData> {
    return new Promise((resolve, reject) => {
      let result: FormattedExecutionResult<TData, unknown> | undefined;
      this.ws.subscribe<TData>({ query, variables: variables as Record<string, unknown>, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }, {
        next: (r) => { result = r; },
        error: (e) => reject(Array.isArray(e) ? new WeftGraphqlError(e) : e),
        complete: () => {
          if (!result) reject(new Error("no result"));
          else if (result.errors?.length) reject(new WeftGraphqlError(result.errors));
          else resolve(result.data as TData);
        },
      });
    });
  }

  /** Subscribes (the text is sent: a subscription lives long, the hash saves little); calls `onData` per payload. Returns the unsubscribe. */
  subscribe<TData, TVars>(doc: TypedDocumentNode<TData, TVars>, variables: TVars, onData: (data: TData) => void, onError: (err: unknown) => void): () => void {
    const { text } = persisted(doc as TypedDocumentNode<unknown, unknown>);
    return this.ws.subscribe<TData>({ query: text, variables: variables as Record<string, unknown> }, {
      next: (r) => (r.errors?.length ? onError(new WeftGraphqlError(r.errors)) : onData(r.data as TData)),
      error: onError,
      complete: () => {},
    });
  }

  close(): Promise<void> {
    return this.ws.dispose() as Promise<void>;
  }
}
