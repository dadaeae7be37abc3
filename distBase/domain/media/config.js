export function mediaConfig(s) {
    return { "m.upload.size": s.config.max_upload_size };
}
