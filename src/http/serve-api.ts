// The API's requests go from node's server straight to the pipeline, past
// Fastify's router, hooks and reply object: the pipeline reads the raw request,
// answers every refusal itself and returns the whole answer, so those would only
// add their cost (about a sixth of a GET by id, measured). Fastify keeps the
// service's own routes, what its router turns away, and the server's lifecycle.
import type { FastifyBaseLogger } from 'fastify';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { merged } from '../model/merged.ts';
import { observe } from './observe.ts';
import { type ApiDeps, type ApiResult, handleApi } from './pipeline.ts';

export interface ApiListener {
  readonly deps: ApiDeps;
  readonly log: FastifyBaseLogger;
  nextId(): string;
}

export function apiListener(o: ApiListener): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const reqId = o.nextId();
    observe(req, res, reqId, o.log);
    handleApi(o.deps, req, o.log, reqId).then((result) => send(res, result, o.log, reqId), (err: unknown) => {
      // (The pipeline answers its own failures; this is a failure to write the answer.)
      o.log.error({ err, reqId }, 'answer not sent');
      res.destroy();
    });
  };
}

/** Writes an answer of the pipeline: JSON text with its length (none for a 304, which has no body), or a stream. */
export function send(res: ServerResponse, r: ApiResult, log: FastifyBaseLogger, reqId: string): void {
  if (typeof r.body === 'string') {
    const headers = r.status === 304 ? r.headers : merged(r.headers, { 'content-length': String(Buffer.byteLength(r.body)) });
    res.writeHead(r.status, headers).end(r.status === 304 ? undefined : r.body);
    return;
  }
  res.writeHead(r.status, r.headers);
  pipeline(r.body, res, (err) => {
    // A client that goes away mid-download is no failure of the service's.
    if (err && err.code !== 'ERR_STREAM_PREMATURE_CLOSE') log.error({ err, reqId }, 'download failed');
  });
}
