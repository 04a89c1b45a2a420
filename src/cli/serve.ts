import { loadConfig } from '../config.ts';
import { closeOnSignals, startServer } from '../server.ts';
import type { Command } from './command.ts';

export const serve: Command = {
  words: ['serve'],
  usage: 'serve',
  summary: 'Migrates, then serves the API over mutual TLS on HOST:PORT (and METRICS_PORT, when set), until SIGTERM (which drains first, SHUTDOWN_DRAIN_MS) or SIGINT.',
  async run() {
    const config = loadConfig();
    const running = await startServer(config);
    closeOnSignals(running, config.shutdownDrainMs);
    if (running.tls.created) process.stderr.write(`created a self-signed server certificate: ${running.tls.certFile}\n`);
  },
};
