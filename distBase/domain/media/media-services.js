// The media repository's shared machinery, one per server (on Services.media): the repository and the
// file layout, who waits for which pending upload, ids being uploaded right now, in-flight remote fetches
// and thumbnail renders (each done once however many ask), and the two outside seams: the federation
// fetcher of remote media and the DNS resolver URL previews use.
import { lookup } from "node:dns/promises";
import { MediaStore } from "../store/media.js";
import { MediaFiles } from "./files.js";
export const systemResolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
/** Wakes downloads waiting for the content of a created-but-not-yet-uploaded mxc URI. */
export class UploadSignals {
    waiters = new Map();
    /** Resolves when `key` is signalled or after `ms` (true if signalled). */
    wait(key, ms, signal) {
        return new Promise((resolve) => {
            const set = this.waiters.get(key) ?? new Set();
            this.waiters.set(key, set);
            const done = (ok) => {
                clearTimeout(timer);
                set.delete(wake);
                if (set.size === 0)
                    this.waiters.delete(key);
                signal?.removeEventListener("abort", abort);
                resolve(ok);
            };
            const wake = () => done(true);
            const abort = () => done(false);
            const timer = setTimeout(() => done(false), ms);
            set.add(wake);
            signal?.addEventListener("abort", abort);
        });
    }
    notify(key) {
        for (const wake of [...(this.waiters.get(key) ?? [])])
            wake();
    }
    /** Wakes everyone (shutdown). */
    wakeAll() {
        for (const key of [...this.waiters.keys()])
            this.notify(key);
    }
}
/** Runs one job per key at a time; callers asking for a key already running share its result. */
export class OncePerKey {
    running = new Map();
    run(key, fn) {
        let p = this.running.get(key);
        if (!p) {
            p = fn().finally(() => this.running.delete(key));
            this.running.set(key, p);
        }
        return p;
    }
}
export class MediaServices {
    store;
    files;
    uploads = new UploadSignals();
    /** Media ids whose content is being uploaded right now (PUT /upload/{serverName}/{mediaId}). */
    uploading = new Set();
    remoteFetches = new OncePerKey();
    renders = new OncePerKey();
    previews = new OncePerKey();
    /** Set once federation exists; without it, remote media answers as an unreachable origin does. */
    remoteFetcher;
    /** DNS for URL previews (tests map names to loopback addresses here). */
    resolver = systemResolver;
    constructor(db, sql, mediaStorePath, serverName) {
        this.store = new MediaStore(db, sql);
        this.files = new MediaFiles(mediaStorePath, serverName);
    }
}
