// The part of autocannon@8 the benchmark uses (the package ships no types).
declare module 'autocannon' {
  import type { ConnectionOptions } from 'node:tls';

  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    requests?: { method?: string; path?: string; headers?: Record<string, string> }[];
    /** Passed to tls.connect (autocannon forces rejectUnauthorized:false). */
    tlsOptions?: ConnectionOptions;
    servername?: string;
    /** Called with every response body; false counts a mismatch. */
    verifyBody?: (body: string) => boolean;
  }

  export interface Histogram { average: number; mean: number; stddev: number; min: number; max: number; p50: number; p90: number; p99: number }

  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { total: number; sent: number };
    throughput: Histogram & { total: number };
  }

  export default function autocannon(options: Options): Promise<Result>;
}
