// The callers' last write positions in Redis (REDIS_URL with DATABASE_READ_URL),
// instead of the primary's read_positions table: a look-up per GET then costs the
// primary nothing. A position only ever moves forward; it expires once any replica
// within the lag allowed has long replayed it.
import type { ReadPositions, ReadPositionsFactory } from './replica.ts';

const PREFIX = 'asset-tracker:readpos:';
const KEEP_MS = 600_000;
// KEYS[1]: the caller's key; ARGV[1]: the position. Kept only when later than the one stored.
const RECORD = `local old = tonumber(redis.call('GET', KEYS[1]) or '0')
local new = tonumber(ARGV[1])
if new > old then redis.call('SET', KEYS[1], ARGV[1], 'PX', ${KEEP_MS}) else redis.call('PEXPIRE', KEYS[1], ${KEEP_MS}) end
return 1`;

export async function redisReadPositions(url: string, onError: (e: unknown) => void): Promise<ReadPositionsFactory> {
  // Loaded only when configured, as the rate limiter's store is.
  const { createClient } = await import('@redis/client');
  const client = createClient({ url });
  client.on('error', onError);
  await client.connect();
  return (primaryPosition): ReadPositions => ({
    async record(principal) {
      const position = await primaryPosition();
      await client.eval(RECORD, { keys: [PREFIX + principal], arguments: [String(position)] });
    },
    async get(principal) {
      const value = await client.get(PREFIX + principal);
      return value === null ? 0 : Number(value);
    },
    async close() { await client.close(); },
  });
}
