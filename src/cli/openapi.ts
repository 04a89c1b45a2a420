import { tmpdir } from 'node:os';
import { loadConfig } from '../config.ts';
import { DEFAULT_LIMITS } from '../engine/context.ts';
import { openApiDocument } from '../http/openapi.ts';
import { referencePage } from '../http/reference.ts';
import { createEndpoints, createRegistry } from '../resources/registry.ts';
import { BlobStore } from '../storage/blobs.ts';
import type { Command } from './command.ts';

export const openapi: Command = {
  words: ['openapi'],
  usage: 'openapi [--html]',
  summary: 'Prints the OpenAPI document the server serves at /openapi.json (indented; one line with --json), or with --html\n'
    + 'the API reference page it serves at /docs (one HTML file that loads nothing from the network). Needs no database.',
  options: { html: { type: 'boolean' } },
  async run(args) {
    const config = loadConfig();
    // The document describes the endpoints; no file is stored, so the store's place does not matter.
    const endpoints = createEndpoints({ loginFailuresPerHour: config.loginFailuresPerHour, blobs: new BlobStore(tmpdir()),
      uploadMaxBytes: config.uploadMaxBytes });
    // The same arguments as the server's (app.ts), so the same document.
    const document = openApiDocument(createRegistry(), endpoints, config.baseUrl, { ...DEFAULT_LIMITS, pageSize: config.pageSize });
    if (args.values.html === true) process.stdout.write(referencePage(document));
    else process.stdout.write(`${JSON.stringify(document, null, args.json ? undefined : 2)}\n`);
  },
};
