/**
 * Calls `get` until `done` holds for its answer or `ms` pass, and returns the last
 * answer: for changes another process makes, which a service hears of a moment later.
 */
export async function eventually<T>(get: () => Promise<T>, done: (value: T) => boolean, ms = 2000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await get();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
    value = await get();
  }
  return value;
}
