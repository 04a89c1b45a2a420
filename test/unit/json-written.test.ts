// writtenText: an object read from minified JSON without escapes is written back as
// the very text it was read from, and otherwise (whitespace, escapes, a duplicate key,
// a change after parsing) not at all — whatever it gives is what stringifyJson writes.
// Checked on chosen texts and on random JSON, written minified and indented (fast-check).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { JsonNumber, JsonObject, type JsonValue, parseJson, stringifyJson, writtenText } from '../../src/model/json.ts';

const object = (text: string) => {
  const v = parseJson(text);
  assert.ok(v instanceof JsonObject);
  return v;
};

/** writtenText never differs from stringifyJson; it answers for every object nested in `v` too. */
function agrees(v: JsonValue): void {
  if (Array.isArray(v)) { v.forEach(agrees); return; }
  if (!(v instanceof JsonObject)) return;
  const written = writtenText(v);
  if (written !== null) assert.equal(written, stringifyJson(v));
  for (const x of v.entries.values()) agrees(x);
}

describe('writtenText', () => {
  it('gives the text of a minified object without escapes, nested ones included', () => {
    for (const text of ['{}', '{"a":1}', '{"costcode":"P-12","room":"B1-120"}', '{"n":-0.50e+3,"b":true,"f":false,"z":null}',
      '{"list":[1,"two",[],{},[{"x":[null]}]],"o":{"p":{"q":"r"}}}', '{"9":1,"1":2}', '{"é":"ü €"}']) {
      assert.equal(writtenText(object(text)), text);
    }
    const nested = object('{"a":{"b":[{"c":"d"}]}}').entries.get('a');
    assert.ok(nested instanceof JsonObject);
    assert.equal(writtenText(nested), '{"b":[{"c":"d"}]}');
  });

  it('gives nothing for whitespace, escapes, surrogates or a duplicate key', () => {
    for (const text of ['{ "a":1}', '{"a": 1}', '{"a":[1, 2]}', '{"a":"\\n"}', '{"a":"\\u0041"}', '{"a":"\\/"}', '{"\\"":1}',
      '{"a":"\\u0000"}', '{"a":"😀"}', '{"a":"\\ud83d\\ude00"}', '{"a":1,"a":2}', '{"a":{"b":1,"b":1}}']) {
      const o = object(text);
      assert.equal(writtenText(o), null, text);
      agrees(o);
    }
  });

  it('gives nothing once the object or anything in it changed', () => {
    const changes: ((o: JsonObject) => void)[] = [
      (o) => o.entries.set('a', 'changed'),
      (o) => o.entries.set('z', null),
      (o) => o.entries.delete('b'),
      (o) => (o.entries.get('b') as JsonValue[]).push(new JsonNumber('3')),
      (o) => ((o.entries.get('b') as JsonValue[])[1] as JsonObject).entries.set('c', 'e'),
      (o) => o.entries.set('a', 'x","y'),
      (o) => { o.entries.delete('a'); o.entries.set('a', 'x'); },
    ];
    for (const change of changes) {
      const o = object('{"a":"x","b":[1,{"c":"d"}]}');
      change(o);
      assert.equal(writtenText(o), null, String(change));
      agrees(o);
    }
    // A change that writes the same text again keeps it.
    const same = object('{"a":"x","b":[1,{"c":"d"}]}');
    same.entries.set('a', 'x');
    assert.equal(writtenText(same), '{"a":"x","b":[1,{"c":"d"}]}');
  });

  it('an object made by code has no written text', () => {
    const o = new JsonObject();
    o.entries.set('a', 'b');
    assert.equal(writtenText(o), null);
  });

  it('random JSON, minified or indented: never a text stringifyJson would not write, and minified plain objects are their text', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.boolean(), (value, indent) => {
      const text = JSON.stringify({ v: value }, null, indent ? 2 : undefined);
      const o = object(text);
      agrees(o);
      // Minified, without anything JSON.stringify escapes: its own text.
      if (!indent && !/[\\\ud800-\udfff]/.test(text)) assert.equal(writtenText(o), stringifyJson(o));
    }), { numRuns: 2000 });
  });
});
