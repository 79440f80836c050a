/** Polls `read` until it gives a value, or fails after `timeoutMs`, naming what it waited for. */
export async function until<T>(what: string, read: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const found = await read();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
