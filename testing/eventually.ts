/**
 * Polls `probe` until it gives a value (anything but undefined or false), or throws after
 * `timeoutMs` naming `what`. The one polling helper of the tests.
 */
export async function eventually<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, what = "condition", timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(25);
  }
}
