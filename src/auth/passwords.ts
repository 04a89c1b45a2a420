// Passwords are stored as scrypt hashes (memory-hard, node:crypto), never returned.
import { randomBytes, randomInt, scrypt, timingSafeEqual } from 'node:crypto';

const N = 16384;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { N: n, r, p, maxmem: 256 * n * r }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$hash` (base64). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

// Checked when the username is unknown, so that both failures take the same work; made
// the first time it is needed (not by every process that loads this module, such as each CLI command).
let dummy: Promise<string> | null = null;

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? (await (dummy ??= hashPassword(randomBytes(16).toString('hex'))))).split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const expected = Buffer.from(parts[5]!, 'base64');
  const actual = await derive(password, Buffer.from(parts[4]!, 'base64'), n, r, p);
  return actual.length === expected.length && timingSafeEqual(actual, expected) && stored !== null;
}

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789!#%+-=?@';

/** 16 characters from a CSPRNG (`randompassword`). */
export function randomPassword(length = 16): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 1024;
