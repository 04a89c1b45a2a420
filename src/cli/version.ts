import { readFileSync } from 'node:fs';

/** The package's version: package.json is two levels up from src/cli/ and from dist/cli/ alike. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string };
  return `${pkg.name} ${pkg.version}`;
}
