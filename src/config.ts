// The environment, read once into a frozen, typed Config. Every problem is
// reported at once. The only module that reads process.env.
import { resolve } from 'node:path';
import { createSecureContext } from 'node:tls';
import ipaddr from 'ipaddr.js';
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS } from './http/connections.ts';
import { type MailSettings, mailSettings } from './mail/settings.ts';

export interface Config {
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  /** A streaming replica for GET requests (PostgreSQL only), and how far behind it may be before reads go to the primary. */
  readonly readReplica: { readonly url: string; readonly maxLagMs: number } | null;
  readonly host: string;
  readonly port: number;
  readonly baseUrl: string;
  readonly tlsCertFile: string | undefined;
  readonly tlsKeyFile: string | undefined;
  /** Plain-HTTP listener for a TLS-terminating proxy; null unless both proxy settings are given. */
  readonly proxy: { readonly trusted: readonly string[]; readonly header: string; readonly port: number } | null;
  readonly bodyMaxBytes: number;
  /** Largest CSV import (PUT with Content-Type text/csv). */
  readonly importMaxBytes: number;
  readonly uploadMaxBytes: number;
  readonly pageSize: number;
  readonly logLevel: string;
  readonly dbPoolSize: number;
  readonly reminderIntervalMs: number;
  /** Days the change feed keeps; older changes are pruned by the background jobs. */
  readonly changesRetentionDays: number;
  readonly loginFailuresPerHour: number;
  /** Requests per second per certificate and the burst; null when RATE_LIMIT=0. */
  readonly rateLimit: { readonly rate: number; readonly burst: number } | null;
  /** Redis for the rate limiter's shared counters (instead of PostgreSQL). */
  readonly redisUrl: string | undefined;
  /** How long a shutdown waits for requests under way before cutting their connections. */
  readonly shutdownGraceMs: number;
  /** On SIGTERM, how long the listener keeps accepting (readiness already failing) before it closes. */
  readonly shutdownDrainMs: number;
  /** Addresses and CIDRs of balancers whose connections begin with a PROXY protocol header; empty: none is read. */
  readonly proxyProtocolFrom: readonly string[];
  /** OpenSSL cipher list replacing the default TLS profile's. */
  readonly tlsCiphers: string | undefined;
  readonly connections: ConnectionLimits;
  /** The company portal's HTTPS port (no client certificate); null when PORTAL_PORT=0. */
  readonly portalPort: number | null;
  /** Plain-HTTP Prometheus listener (GET /metrics); null unless METRICS_PORT is set. */
  readonly metrics: { readonly host: string; readonly port: number } | null;
  /** Webhook deliveries: the address rule lifted (tests, on-premises receivers), and each attempt's timeout. */
  readonly webhooks: { readonly allowPrivate: boolean; readonly timeoutMs: number };
  /** E-mail (SMTP_URL, MAIL_FROM, SMTP_CA_FILE); null when it is off. */
  readonly mail: MailSettings | null;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const DURATION = /^(\d+)(ms|s|m|h|d)?$/;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/**
 * The longest a timer can wait (2^31 − 1 ms, 24.8 days): Node runs a setTimeout or
 * setInterval given more after 1 ms, so a job set to wait longer would spin.
 */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** An address or CIDR in its usual form ("0x7f.1" and "2130706433" are none here). */
const addressOrCidr = (t: string) => ipaddr.IPv4.isValidFourPartDecimal(t) || ipaddr.IPv4.isValidCIDRFourPartDecimal(t)
  || (!t.includes('%') && (ipaddr.IPv6.isValid(t) || ipaddr.IPv6.isValidCIDR(t)));

/** `defaultHost`: the listen address when HOST is not set (the demo listens on the loopback only). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, defaultHost = '0.0.0.0'): Config {
  const problems: string[] = [];
  const str = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const int = (name: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number => {
    const v = str(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < min || n > max) { problems.push(`${name} must be an integer from ${min} to ${max} (got "${v}")`); return fallback; }
    return n;
  };
  const duration = (name: string, fallback: number): number => {
    const v = str(name);
    if (v === undefined) return fallback;
    const m = DURATION.exec(v);
    if (!m || Number(m[1]) <= 0) { problems.push(`${name} must be a duration such as 30s, 15m, 1h or 7d (got "${v}")`); return fallback; }
    const ms = Number(m[1]) * UNIT_MS[m[2] ?? 's']!;
    if (ms > LONGEST_TIMER_MS) { problems.push(`${name} must be at most 24d (${LONGEST_TIMER_MS} ms, the longest a timer can wait; got "${v}")`); return fallback; }
    return ms;
  };

  const flagValue = (name: string): boolean => {
    const v = str(name);
    if (v === undefined || v === 'false' || v === '0') return false;
    if (v === 'true' || v === '1') return true;
    problems.push(`${name} must be true or false (got "${v}")`);
    return false;
  };

  const port = int('PORT', 8443, 0, 65535);
  const databaseUrl = str('DATABASE_URL');
  if (databaseUrl && !/^(postgres(ql)?:\/\/|sqlite:)/.test(databaseUrl)) problems.push('DATABASE_URL must start with postgres:// (or sqlite:<file>)');
  const readUrl = str('DATABASE_READ_URL');
  if (readUrl && !/^postgres(ql)?:\/\//.test(readUrl)) problems.push('DATABASE_READ_URL must start with postgres://');
  else if (readUrl && !/^postgres(ql)?:\/\//.test(databaseUrl ?? '')) {
    problems.push('DATABASE_READ_URL needs DATABASE_URL to be a postgres:// URL: the embedded SQLite database has no read replicas');
  }
  const readMaxLagMs = duration('READ_MAX_LAG', 5000);
  const tlsCertFile = str('TLS_CERT_FILE');
  const tlsKeyFile = str('TLS_KEY_FILE');
  if (!tlsCertFile !== !tlsKeyFile) problems.push('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  const trusted = (str('TRUSTED_PROXIES') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const t of trusted) if (!/^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(t)) problems.push(`TRUSTED_PROXIES entry "${t}" is not an IP address or CIDR`);
  const proxyProtocolFrom = (str('PROXY_PROTOCOL_FROM') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const t of proxyProtocolFrom) {
    if (!addressOrCidr(t)) problems.push(`PROXY_PROTOCOL_FROM entry "${t}" is not an IP address or CIDR`);
  }
  const header = str('CLIENT_CERT_HEADER');
  if ((trusted.length > 0) !== !!header) problems.push('TRUSTED_PROXIES and CLIENT_CERT_HEADER must be set together');
  const proxyPort = int('HTTP_PORT', 8080, 0, 65535);
  const logLevel = str('LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const rate = int('RATE_LIMIT', 100, 0, 1_000_000_000);
  const burst = int('RATE_LIMIT_BURST', Math.max(1, 2 * rate), 1, 2_000_000_000);
  const redisUrl = str('REDIS_URL');
  const tlsCiphers = str('TLS_CIPHERS');
  if (tlsCiphers) {
    try {
      createSecureContext({ ciphers: tlsCiphers });
    } catch {
      problems.push(`TLS_CIPHERS names no cipher OpenSSL knows (got "${tlsCiphers}")`);
    }
  }
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) problems.push('REDIS_URL must start with redis:// or rediss://');
  const metricsPort = str('METRICS_PORT') === undefined ? null : int('METRICS_PORT', 0, 0, 65535);
  if (metricsPort !== null && metricsPort !== 0 && (metricsPort === port || (trusted.length > 0 && metricsPort === proxyPort))) {
    problems.push(`METRICS_PORT must differ from PORT and HTTP_PORT (got ${metricsPort})`);
  }
  const portalPort = int('PORTAL_PORT', 8444, 0, 65535);
  if (portalPort !== 0 && (portalPort === port || (trusted.length > 0 && portalPort === proxyPort) || portalPort === metricsPort)) {
    problems.push(`PORTAL_PORT must differ from PORT, HTTP_PORT and METRICS_PORT (got ${portalPort})`);
  }
  const baseUrl = (str('BASE_URL') ?? `https://localhost:${port}`).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(baseUrl)) problems.push('BASE_URL must be an absolute http(s) URL');
  const portalBaseUrl = (str('PORTAL_BASE_URL') ?? `https://localhost:${portalPort}`).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(portalBaseUrl)) problems.push('PORTAL_BASE_URL must be an absolute http(s) URL');
  const mail = mailSettings({ smtpUrl: str('SMTP_URL'), from: str('MAIL_FROM'), caFile: str('SMTP_CA_FILE'), baseUrl,
    portalBaseUrl: portalPort === 0 ? null : portalBaseUrl, timeoutMs: duration('SMTP_TIMEOUT', 30_000) }, problems);

  const config: Config = {
    dataDir: resolve(str('DATA_DIR') ?? './data'),
    databaseUrl,
    readReplica: readUrl ? { url: readUrl, maxLagMs: readMaxLagMs } : null,
    host: str('HOST') ?? defaultHost,
    port,
    baseUrl,
    tlsCertFile,
    tlsKeyFile,
    proxy: trusted.length > 0 && header ? { trusted, header: header.toLowerCase(), port: proxyPort } : null,
    bodyMaxBytes: int('BODY_MAX_BYTES', 1024 * 1024),
    importMaxBytes: int('IMPORT_MAX_BYTES', 100 * 1024 * 1024),
    uploadMaxBytes: int('UPLOAD_MAX_BYTES', 25 * 1024 * 1024),
    pageSize: int('PAGE_SIZE', 30, 1, 10_000),
    logLevel,
    dbPoolSize: int('DB_POOL_SIZE', 10, 1, 1000),
    reminderIntervalMs: duration('REMINDER_INTERVAL', 3_600_000),
    changesRetentionDays: int('CHANGES_RETENTION_DAYS', 30, 1, 36_500),
    loginFailuresPerHour: int('LOGIN_FAILURES_PER_HOUR', 100),
    rateLimit: rate === 0 ? null : { rate, burst },
    redisUrl,
    shutdownGraceMs: int('SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    shutdownDrainMs: int('SHUTDOWN_DRAIN_MS', 5_000, 0, 600_000),
    proxyProtocolFrom,
    tlsCiphers,
    webhooks: {
      allowPrivate: flagValue('WEBHOOK_ALLOW_PRIVATE'),
      timeoutMs: duration('WEBHOOK_TIMEOUT', 10_000),
    },
    portalPort: portalPort === 0 ? null : portalPort,
    mail,
    metrics: metricsPort === null ? null : { host: str('METRICS_HOST') ?? '127.0.0.1', port: metricsPort },
    connections: {
      handshakeTimeoutMs: duration('TLS_HANDSHAKE_TIMEOUT', DEFAULT_CONNECTION_LIMITS.handshakeTimeoutMs),
      headersTimeoutMs: duration('HEADERS_TIMEOUT', DEFAULT_CONNECTION_LIMITS.headersTimeoutMs),
      maxConnections: int('MAX_CONNECTIONS', DEFAULT_CONNECTION_LIMITS.maxConnections),
      maxPerAddress: int('MAX_CONNECTIONS_PER_ADDRESS', DEFAULT_CONNECTION_LIMITS.maxPerAddress),
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
