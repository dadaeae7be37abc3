export function matrixErrorExtensions(err) {
    const { error: _message, errcode, ...extra } = err.toJSON();
    return { ...extra, errcode: typeof errcode === "string" ? errcode : err.errcode };
}
