// The repository's root, for the test runner and the tests (a module of its own: the
// runner must not load node:test, as stage.ts does, or it prints an empty report).
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
