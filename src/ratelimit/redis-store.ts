// The rate limiter's shared state in Redis (REDIS_URL): one script per
// reconciliation updates every key's TAT and the set of live instances atomically.
import type { SharedStore } from './limiter.ts';

const PREFIX = 'asset-tracker:ratelimit:';
const LIVE_MS = 3_000;

// ARGV: now, instance, then key/cost pairs. Keys expire once their bucket is full again.
const SCRIPT = `
local now = tonumber(ARGV[1])
local live = '${PREFIX}instances'
redis.call('ZADD', live, now, ARGV[2])
redis.call('ZREMRANGEBYSCORE', live, '-inf', now - ${LIVE_MS})
redis.call('PEXPIRE', live, ${LIVE_MS * 10})
local out = { tostring(redis.call('ZCARD', live)) }
for i = 3, #ARGV, 2 do
  local key = '${PREFIX}' .. ARGV[i]
  local tat = tonumber(redis.call('GET', key) or '0')
  if tat < now then tat = now end
  tat = tat + tonumber(ARGV[i + 1])
  redis.call('SET', key, string.format('%.3f', tat), 'PX', math.floor(tat - now) + 1000)
  out[#out + 1] = ARGV[i]
  out[#out + 1] = string.format('%.3f', tat)
end
return out`;

export async function redisRateLimits(url: string, onError: (e: unknown) => void): Promise<SharedStore> {
  // Loaded only when configured: the client library takes a moment to load, every CLI command would pay it.
  const { createClient } = await import('@redis/client');
  const client = createClient({ url });
  client.on('error', onError);
  await client.connect();
  return {
    async reconcile(instance, consumed, now) {
      const args = [String(now), instance];
      for (const [key, cost] of consumed) args.push(key, String(cost));
      const out = (await client.eval(SCRIPT, { arguments: args })) as string[];
      const tats = new Map<string, number>();
      for (let i = 1; i < out.length; i += 2) tats.set(out[i]!, Number(out[i + 1]));
      return { tats, instances: Number(out[0]) };
    },
    async close() { await client.close(); },
  };
}
