// No file of src/ imports from a floor above its own (test/support/floors.ts,
// docs/architecture.md), and the check finds one that does.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { importsOf, upwardImports } from '../support/floors.ts';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../src');

describe('the floors of src/', () => {
  it('no file imports from a floor above its own, and every file has a floor', () => {
    const graph = importsOf(SRC);
    assert.ok(graph.size > 150, `read the sources (${graph.size} files)`);
    assert.deepEqual(upwardImports(graph), []);
  });

  it('an import planted from a lower floor to a higher one is found', () => {
    const graph = new Map(importsOf(SRC));
    graph.set('model/planted.ts', ['engine/write.ts']);
    graph.set('db/planted.ts', ['model/json.ts', 'resources/registry.ts']);
    graph.set('nowhere/file.ts', []);
    assert.deepEqual(upwardImports(graph), [
      'model/planted.ts (model, errors.ts) imports engine/write.ts (engine), a floor above',
      'db/planted.ts (db) imports resources/registry.ts (resources), a floor above',
      'nowhere/file.ts is on no floor',
    ]);
  });
});
