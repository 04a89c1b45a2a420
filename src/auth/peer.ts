// The address a connection comes from: its peer's, or — on a connection from a
// balancer that speaks the PROXY protocol — the client's address its header gave
// (http/proxy-listener.ts records it before TLS begins). Audit entries, the login
// throttle and the per-address connection limit all read it here.
import type { Socket } from 'node:net';
import { plainAddress } from './forwarded.ts';

/** Client addresses given by PROXY headers, by the TCP socket they arrived on. */
const given = new WeakMap<Socket, string>();
/** Addresses worked out once per connection (keep-alive connections carry many requests). */
const known = new WeakMap<Socket, string | null>();

/** Records the client's address a PROXY header gave for the connection (before TLS wraps the socket). */
export function giveAddress(socket: Socket, address: string): void {
  given.set(socket, address);
}

/** Node's TLS socket keeps the TCP socket it wraps as `_parent` (it has done so since TLS sockets wrap sockets). */
interface Wrapping { readonly _parent?: unknown }

function addressOf(socket: Socket): string | null {
  const parent = (socket as Wrapping)._parent;
  const proxied = given.get(socket) ?? (parent && typeof parent === 'object' ? given.get(parent as Socket) : undefined);
  if (proxied !== undefined) return proxied;
  return socket.remoteAddress ? plainAddress(socket.remoteAddress) : null;
}

/** The client's plain address for this connection (its TCP socket, or the TLS socket over it), or null when unknown. */
export function connectionAddress(socket: Socket): string | null {
  let address = known.get(socket);
  if (address === undefined) known.set(socket, (address = addressOf(socket)));
  return address;
}
