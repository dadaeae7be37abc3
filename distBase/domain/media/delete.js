export async function deleteMedia(s, ref) {
    await s.media.store.delete(ref);
    await s.media.files.remove(ref);
}
