// The Prometheus scrape endpoint: plain HTTP on a listener of its own
// (METRICS_HOST:METRICS_PORT, loopback by default), never on the mTLS port — a
// scraper holds no client certificate, and what the metrics tell (endpoint
// traffic, pool pressure) is for the operator's network only. It answers the
// liveness and readiness probes too (/healthz, /readyz), for a balancer or an
// orchestrator that checks on the operator's network.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics } from 'prom-client';
import { registry } from '../metrics.ts';
import type { ProbeAnswer, Probes } from './probes.ts';

export interface MetricsListener {
  readonly address: AddressInfo;
  close(): Promise<void>;
}

let processMetrics = false;

const answer = (res: http.ServerResponse, { code, body }: ProbeAnswer) => {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' })
    .end(text);
};

export async function startMetricsListener(host: string, port: number, probes: Probes, onError: (err: unknown) => void): Promise<MetricsListener> {
  // Process metrics (CPU, memory, event loop lag, GC) only where they are served: they install observers.
  if (!processMetrics) {
    collectDefaultMetrics({ register: registry });
    processMetrics = true;
  }
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const known = path === '/metrics' || path === '/healthz' || path === '/readyz';
    if (!known || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(known ? 405 : 404, { 'content-type': 'text/plain; charset=utf-8' }).end('this listener serves GET /metrics, /healthz and /readyz only\n');
      return;
    }
    if (path === '/healthz') return answer(res, probes.live());
    if (path === '/readyz') {
      probes.ready().then((a) => answer(res, a), (err: unknown) => {
        onError(err);
        answer(res, { code: 503, body: { status: 'unavailable', reason: 'readiness could not be checked' } });
      });
      return;
    }
    registry.metrics().then((text) => {
      res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text);
    }, (err: unknown) => {
      onError(err);
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics could not be collected\n');
    });
  });
  // Scrapes are small and periodic: idle keep-alive connections need not linger.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
  return {
    address: server.address() as AddressInfo,
    close: () => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }),
  };
}
