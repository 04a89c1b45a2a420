// Answers given before the request's body has arrived — 413 for a body declared
// or found too large, and any refusal that comes before the body is read (401,
// 404, 405, 403, 429, a refused upload), and the HTTP parser's own 414/431 — must
// reach a client that is still sending. Node closes a connection whose answer
// says `Connection: close` as soon as the answer is written; whatever the client
// sends after that, the kernel answers with a reset, which can destroy the answer
// before the client has read it. So such a connection lingers instead: the answer
// is written, the write side is closed (TLS close_notify, then FIN), and what
// still arrives is read and dropped until the client closes its side — then the
// connection is closed, with nothing unread, so without a reset. The drain is
// bounded: past LINGER_BYTES the server stops reading (the client's writes stall,
// so it turns to reading the answer), and at LINGER_MS after the answer the
// connection is destroyed whatever the client does.
//
// An answer that keeps the connection alive (no `Connection: close`) leaves the
// body to the HTTP parser, which drains it before the next request, within the
// same bounds.
//
// `Expect: 100-continue`: Node answers `100 Continue` before the application has
// seen the request unless a `checkContinue` listener takes over. Here the interim
// answer is sent when something first reads the body, so a request refused before
// its body is needed (Content-Length over the limit, 401 …) gets its final answer
// instead, and the client need not send the body at all.
import type http from 'node:http';
import type { Socket } from 'node:net';

/** Bytes of request read and dropped after an early answer before the server stops reading. */
export const LINGER_BYTES = 8 * 1024 * 1024;
/** How long after an early answer its connection may stay open at most. */
export const LINGER_MS = 5000;

export interface LingerBounds {
  readonly bytes: number;
  readonly ms: number;
}

const DEFAULT_BOUNDS: LingerBounds = { bytes: LINGER_BYTES, ms: LINGER_MS };

/** A connection being drained after an early answer, at most one per socket. */
class Linger {
  private drained = 0;
  private closing = false;
  private refused = false;
  private stopped = false;
  private readonly deadline: NodeJS.Timeout;
  /** The requests whose bodies are being dropped (the refused one, then any that follow on the connection). */
  private readonly requests = new Set<http.IncomingMessage>();

  static of(socket: Socket, bounds: LingerBounds): Linger {
    return LINGERS.get(socket) ?? new Linger(socket, bounds);
  }

  private constructor(private readonly socket: Socket, private readonly bounds: LingerBounds) {
    LINGERS.set(socket, this);
    this.deadline = setTimeout(() => socket.destroy(), bounds.ms);
    this.deadline.unref();
    socket.once('close', this.release);
    // Node ends the connection after an answer that closes it with destroySoon(), which
    // destroys the socket as soon as the answer is written: it lingers instead.
    socket.destroySoon = () => this.close();
  }

  /** The connection has given its last answer: requests that follow are dropped, not served. */
  get closed(): boolean {
    return this.closing;
  }

  /** Claims the connection's last answer for a parser refusal; false when it is given or claimed already. */
  refuse(): boolean {
    if (this.closing || this.refused) return false;
    this.refused = true;
    return true;
  }

  /** Counts `n` more bytes read and dropped; past the bound, reading stops. */
  take(n: number): void {
    this.drained += n;
    if (this.drained > this.bounds.bytes) this.stop();
  }

  /** Reads what is left of `req`'s body and drops it. */
  drain(req: http.IncomingMessage): void {
    this.requests.add(req);
    req.removeAllListeners('data');
    req.on('data', (chunk: Buffer) => this.take(chunk.length));
    req.once('end', () => {
      this.requests.delete(req);
      // A connection kept alive goes on as usual once the body is through.
      if (!this.closing && this.requests.size === 0) this.release();
    });
    if (this.stopped) req.pause();
    else req.resume();
  }

  /** The linger-close proper: the write side closes after the answer, reading goes on until the client's end. */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    // The client closed its side: nothing more can come, and nothing is left unread.
    this.socket.once('end', () => this.socket.destroy());
    this.socket.end();
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const req of this.requests) req.pause();
    this.socket.pause();
    // A connection with a body half read cannot serve another request (a parser
    // refusal still being worked out closes it once written).
    if (!this.refused) this.close();
  }

  /** Done: the connection closed, or it goes on (kept alive) with the body drained. */
  private readonly release = (): void => {
    clearTimeout(this.deadline);
    this.socket.off('close', this.release);
    if (LINGERS.get(this.socket) === this) LINGERS.delete(this.socket);
    delete (this.socket as { destroySoon?: unknown }).destroySoon;
  };
}

/** Connections draining after an early answer. */
const LINGERS = new WeakMap<Socket, Linger>();

/**
 * The HTTP parser refused what arrived on `socket` (414, 431, 400). The first time,
 * returns a function that writes the answer (now, or once it is known) and lingers;
 * after that — and on a connection that has already given its last answer — the
 * parser only reports more bytes, which are dropped: null.
 */
export function parserRefusal(socket: Socket, rawLength: number, bounds: LingerBounds = DEFAULT_BOUNDS): ((answer: string | null) => void) | null {
  const linger = Linger.of(socket, bounds);
  if (!linger.refuse()) {
    linger.take(rawLength);
    return null;
  }
  return (answer) => {
    if (answer !== null && socket.writable) socket.write(answer);
    linger.close();
  };
}

/**
 * The request listener `handler`, made to linger after an answer given before the
 * request's body has all arrived (and to drop requests that follow a connection's
 * last answer).
 */
export function answerEarly(handler: http.RequestListener, bounds: LingerBounds = DEFAULT_BOUNDS): http.RequestListener {
  return (req, res) => {
    const lingering = LINGERS.get(req.socket);
    if (lingering?.closed) {
      lingering.drain(req);
      return;
    }
    res.once('prefinish', () => {
      if (!req.complete && !req.socket.destroyed) Linger.of(req.socket, bounds).drain(req);
    });
    handler(req, res);
  };
}

/**
 * A `checkContinue` listener: `100 Continue` is sent when something first reads the
 * body (Readable calls `_read` for it) and the final answer has not begun, so a
 * request refused before its body is needed gets the refusal instead.
 */
export function continueOnRead(listener: http.RequestListener): http.RequestListener {
  return (req, res) => {
    req._read = function (this: http.IncomingMessage, size: number) {
      delete (this as { _read?: unknown })._read;
      if (!res.headersSent && !res.destroyed) res.writeContinue();
      this._read(size);
    };
    listener(req, res);
  };
}
