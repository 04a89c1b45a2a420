// SQLite's connections as the metrics see them. Kysely lends its one writer
// connection to one caller at a time (reads run on a connection of their own and
// never wait), so the pool's pressure there is the queue for the writer: how many
// callers wait, and how long. This wraps a dialect's driver to count exactly that.
import type { DatabaseConnection, Dialect, Driver } from 'kysely';
import { dbPoolWait, type PoolStats } from '../metrics.ts';

export interface MeasuredDialect {
  readonly dialect: Dialect;
  readonly stats: () => PoolStats;
}

export function measuredDialect(inner: Dialect, engine: string, max: number): MeasuredDialect {
  let waiting = 0;
  let inUse = 0;
  const measure = (driver: Driver): Driver => {
    async function acquireConnection(): Promise<DatabaseConnection> {
      const started = performance.now();
      waiting++;
      try {
        const connection = await driver.acquireConnection();
        inUse++;
        return connection;
      } finally {
        waiting--;
        dbPoolWait.observe({ engine }, (performance.now() - started) / 1000);
      }
    }
    async function releaseConnection(connection: DatabaseConnection): Promise<void> {
      inUse--;
      await driver.releaseConnection(connection);
    }
    // Everything else goes to the driver as it is (bound: drivers keep private fields).
    return new Proxy(driver, {
      get(target, key) {
        if (key === 'acquireConnection') return acquireConnection;
        if (key === 'releaseConnection') return releaseConnection;
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value.bind(target) as unknown) : value;
      },
    });
  };
  return {
    dialect: {
      createAdapter: () => inner.createAdapter(),
      createDriver: () => measure(inner.createDriver()),
      createIntrospector: (db) => inner.createIntrospector(db),
      createQueryCompiler: () => inner.createQueryCompiler(),
    },
    stats: () => ({ engine, size: max, idle: Math.max(0, max - inUse), max, waiting }),
  };
}
