// No file of src/ imports from a floor above its own (test/support/floors.ts,
// docs/architecture.md), no import cycle, and the checks find a planted one.
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { importCycles, importsOf, upwardImports } from '../support/floors.ts';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../src');

describe('the floors of src/', () => {
  it('no file imports from a floor above its own, and every file has a floor', () => {
    const graph = importsOf(SRC);
    assert.ok(graph.size > 150, `read the sources (${graph.size} files)`);
    assert.deepEqual(upwardImports(graph), []);
  });

  it('no import cycle, and a planted one is found', () => {
    const graph = importsOf(SRC);
    assert.deepEqual(importCycles(graph), []);
    const planted = new Map(graph);
    planted.set('engine/types.ts', [...graph.get('engine/types.ts')!, 'engine/write.ts']);
    assert.ok(importCycles(planted).some((c) => c.includes('engine/types.ts') && c.includes('engine/write.ts')));
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
