// A check's measurement points: what a point may hold and what is refused, the
// verdict of each reading under guarded acceptance (the guard band is the expanded
// uncertainty U: pass inside the limits by at least U, fail outside them by more than
// U, conditional in between), the check's result from its points, and the stored JSON
// (members in a fixed order, numbers as written). The arithmetic must be exact on the
// decimal text, so inputs are written as JSON text; random checks compare against a
// plain model of the rules in BigInt arithmetic (fast-check).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ApiError } from '../../src/errors.ts';
import { parseJson, stringifyJson, JsonObject } from '../../src/model/json.ts';
import { add, compare, decimalOf, pointsJson, readPoints, resultOf, verdictOf, type Decimal, type Verdict } from '../../src/resources/check-points.ts';

const dec = (text: string): Decimal => {
  const d = decimalOf(text);
  assert.ok(d, `${text} is a decimal`);
  return d;
};
/** One point's members (JSON text without braces) with a name in front. */
const point = (members: string) => `{"name":"p",${members}}`;
const one = (members: string) => {
  const points = readPoints(`[${point(members)}]`);
  assert.equal(points.length, 1);
  return points[0]!;
};
const refusal = (e: unknown) => e instanceof ApiError && e.status === 400 && e.code === 'invalid_value'
  && e.message === 'Field verification failed, invalid value for points';
const refused = (text: string) => assert.throws(() => readPoints(text), refusal, text);
const limits = (lower: string | null, upper: string | null, u: string | null) =>
  [lower === null ? '' : `"lower_limit":${lower},`, upper === null ? '' : `"upper_limit":${upper},`, u === null ? '' : `"uncertainty":${u},`].join('');

// [lower, upper, U, reading, verdict]
const VERDICTS: readonly [string | null, string | null, string | null, string, Verdict][] = [
  // Both limits, no uncertainty: the limits themselves pass.
  ['10', '20', null, '15', 'pass'], ['10', '20', null, '10', 'pass'], ['10', '20', null, '20', 'pass'],
  ['10', '20', null, '9.999', 'fail'], ['10', '20', null, '20.001', 'fail'], ['10', '20', '0', '10', 'pass'], ['10', '20', '0.0', '20', 'pass'],
  ['10', '10', null, '10', 'pass'], ['10', '10', null, '10.0000001', 'fail'],
  // Both limits, U = 0.5: pass from lower+U to upper−U, fail beyond lower−U and upper+U.
  ['10', '20', '0.5', '15', 'pass'], ['10', '20', '0.5', '10.5', 'pass'], ['10', '20', '0.5', '10.49', 'conditional'],
  ['10', '20', '0.5', '10', 'conditional'], ['10', '20', '0.5', '9.5', 'conditional'], ['10', '20', '0.5', '9.49', 'fail'],
  ['10', '20', '0.5', '19.5', 'pass'], ['10', '20', '0.5', '19.51', 'conditional'], ['10', '20', '0.5', '20', 'conditional'],
  ['10', '20', '0.5', '20.5', 'conditional'], ['10', '20', '0.5', '20.51', 'fail'],
  // U wider than half the tolerance: nothing passes, the limits ± U still decide a fail.
  ['10', '11', '1', '10.5', 'conditional'], ['10', '11', '1', '9', 'conditional'], ['10', '11', '1', '8.99', 'fail'], ['10', '11', '1', '12.01', 'fail'],
  // Lower limit only (insulation ≥ 1 MΩ): no bound above.
  ['1', null, null, '1', 'pass'], ['1', null, null, '0.999', 'fail'], ['1', null, null, '1e9', 'pass'],
  ['1', null, '0.05', '1.05', 'pass'], ['1', null, '0.05', '1.04', 'conditional'], ['1', null, '0.05', '0.95', 'conditional'],
  ['1', null, '0.05', '0.94', 'fail'], ['1', null, '0.05', '1e300', 'pass'],
  // Upper limit only (earth bond ≤ 0.1 Ω): no bound below.
  [null, '0.1', null, '0.1', 'pass'], [null, '0.1', null, '0.1000001', 'fail'], [null, '0.1', null, '-5', 'pass'],
  [null, '0.1', '0.02', '0.08', 'pass'], [null, '0.1', '0.02', '0.0801', 'conditional'], [null, '0.1', '0.02', '0.12', 'conditional'],
  [null, '0.1', '0.02', '0.1201', 'fail'], [null, '0.1', '0.02', '-1e300', 'pass'],
  // Floating-point traps: 0.1 + 0.2 is 0.3 here, 0.3 − 0.2 is 0.1.
  ['0.1', null, '0.2', '0.3', 'pass'], ['0.1', null, '0.2', '0.29999999999999999', 'conditional'],
  [null, '0.3', '0.2', '0.1', 'pass'], [null, '0.3', '0.2', '0.10000000000000001', 'conditional'],
  ['0.1', '0.3', '0.2', '0.3', 'conditional'], ['0.1', '0.3', '0.2', '0.5', 'conditional'], ['0.1', '0.3', '0.2', '0.50000000000000001', 'fail'],
  ['0.1', '0.3', '0.2', '-0.1', 'conditional'], ['0.1', '0.3', '0.2', '-0.1000001', 'fail'],
  ['0.1', '0.3', null, '0.30000000000000004', 'fail'], ['0.1', '0.3', null, '0.09999999999999999', 'fail'],
  // Exponents, large and tiny, in either case of e, against plain decimals.
  ['1e-7', null, null, '0.0000001', 'pass'], ['1E-7', null, null, '9.9999e-8', 'fail'], ['0.0000001', null, null, '1e-7', 'pass'],
  [null, '2.5E+3', null, '2500', 'pass'], [null, '2.5E+3', null, '2500.0000001', 'fail'],
  [null, '2.5E+3', '1e-7', '2499.9999999', 'pass'], [null, '2.5E+3', '1e-7', '2500.0000001', 'conditional'],
  [null, '2.5E+3', '1e-7', '2500.00000011', 'fail'], [null, '2.5E+3', '1e-7', '2499.99999989', 'pass'],
  [null, '1e300', null, '1e300', 'pass'], [null, '1e300', null, '1.0000000000000001e300', 'fail'],
  ['1e-300', null, '1e-300', '2e-300', 'pass'], ['1e-300', null, '1e-300', '1.9999999999999999e-300', 'conditional'],
  ['1e-300', null, '1e-300', '0', 'conditional'], ['1e-300', null, '1e-300', '-1e-310', 'fail'],
  ['1.50', '2.500', '0.25', '1.75', 'pass'], ['1.50', '2.500', '0.25', '2.25', 'pass'], ['1.50', '2.500', '0.25', '2.2500001', 'conditional'],
];

describe('the verdict of a reading', () => {
  for (const [lower, upper, u, x, verdict] of VERDICTS) {
    it(`${x} against [${lower ?? '−∞'}, ${upper ?? '+∞'}] with U ${u ?? 'null'} → ${verdict}`, () => {
      assert.equal(verdictOf(dec(x), lower === null ? null : dec(lower), upper === null ? null : dec(upper), u === null ? null : dec(u)), verdict);
      const p = one(`${limits(lower, upper, u)}"as_found":${x}`);
      assert.deepEqual([p.found, p.left, p.verdict], [verdict, null, verdict]);
      const q = one(`${limits(lower, upper, u)}"as_found":null,"as_left":${x}`);
      assert.deepEqual([q.found, q.left, q.verdict], [null, verdict, verdict]);
    });
  }

  it('compares and adds decimals exactly, as written', () => {
    assert.equal(compare(add(dec('0.1'), dec('0.2')), dec('0.3')), 0);
    assert.equal(compare(add(dec('0.3'), dec('0.2'), -1n), dec('0.1')), 0);
    assert.equal(compare(dec('1e2'), dec('100.00')), 0);
    assert.equal(compare(dec('2.5E+3'), dec('2500')), 0);
    assert.equal(compare(dec('1e-7'), dec('0.0000001')), 0);
    assert.equal(compare(dec('-1.5'), dec('-1.50')), 0);
    assert.equal(compare(dec('0.30000000000000004'), dec('0.3')), 1);
    assert.equal(compare(dec('1e-300'), dec('0')), 1);
    assert.equal(compare(dec('-2'), dec('-1.9999')), -1);
    assert.equal(decimalOf('1e999'), null);
    assert.equal(decimalOf('-1e999'), null);
  });
});

const P = {
  pass: '{"name":"a","lower_limit":10,"upper_limit":20,"as_found":15}',
  passBoth: '{"name":"a","lower_limit":10,"upper_limit":20,"as_found":12,"as_left":15}',
  adjusted: '{"name":"b","lower_limit":10,"upper_limit":20,"as_found":25,"as_left":15}',
  adjustedConditional: '{"name":"c","lower_limit":10,"upper_limit":20,"uncertainty":0.5,"as_found":10.2,"as_left":15}',
  leftConditional: '{"name":"d","lower_limit":10,"upper_limit":20,"uncertainty":0.5,"as_found":15,"as_left":10.2}',
  leftFail: '{"name":"e","lower_limit":10,"upper_limit":20,"as_found":15,"as_left":25}',
  foundConditional: '{"name":"f","lower_limit":10,"upper_limit":20,"uncertainty":0.5,"as_found":19.9}',
  foundFail: '{"name":"g","upper_limit":0.1,"as_found":0.2}',
  leftOnlyFail: '{"name":"h","lower_limit":1,"as_left":0.5}',
};

describe('as found and as left', () => {
  // [point, found_verdict, left_verdict, verdict, result of a check with this point alone]
  const CASES: readonly [keyof typeof P, Verdict | null, Verdict | null, Verdict, string][] = [
    ['pass', 'pass', null, 'pass', 'pass'],
    ['passBoth', 'pass', 'pass', 'pass', 'pass'],
    ['adjusted', 'fail', 'pass', 'pass', 'adjusted'],
    ['adjustedConditional', 'conditional', 'pass', 'pass', 'adjusted'],
    ['leftConditional', 'pass', 'conditional', 'conditional', 'conditional'],
    ['leftFail', 'pass', 'fail', 'fail', 'fail'],
    ['foundConditional', 'conditional', null, 'conditional', 'conditional'],
    ['foundFail', 'fail', null, 'fail', 'fail'],
    ['leftOnlyFail', null, 'fail', 'fail', 'fail'],
  ];
  for (const [key, found, left, verdict, result] of CASES) {
    it(`${key}: found ${found}, left ${left} → verdict ${verdict}, result ${result}`, () => {
      const points = readPoints(`[${P[key]}]`);
      assert.deepEqual(points.map((p) => [p.found, p.left, p.verdict]), [[found, left, verdict]]);
      assert.equal(resultOf(points), result);
    });
  }
});

describe('the result of a check', () => {
  const CASES: readonly [(keyof typeof P)[], string][] = [
    [['pass', 'passBoth', 'pass'], 'pass'],
    [['pass', 'adjusted'], 'adjusted'],
    [['adjustedConditional', 'adjusted', 'pass'], 'adjusted'],
    [['adjusted', 'leftConditional'], 'conditional'],
    [['foundConditional', 'pass'], 'conditional'],
    [['leftConditional', 'leftFail', 'pass'], 'fail'],
    [['adjusted', 'foundFail'], 'fail'],
    [['pass', 'leftOnlyFail', 'foundConditional'], 'fail'],
  ];
  for (const [keys, result] of CASES) {
    it(`${keys.join(' + ')} → ${result}`, () => assert.equal(resultOf(readPoints(`[${keys.map((k) => P[k]).join(',')}]`)), result));
  }

  it('no points: no result (the body must give one)', () => {
    assert.deepEqual(readPoints('[]'), []);
    assert.equal(resultOf([]), null);
  });
});

describe('what a point may not be', () => {
  const ok = '"lower_limit":1,"as_found":2';
  const CASES: readonly [string, string][] = [
    ['an object, not an array', `${point(ok)}`], ['a string', '"points"'], ['null', 'null'], ['a number', '5'],
    ['501 points', `[${Array.from({ length: 501 }, () => point(ok)).join(',')}]`],
    ['a number as a point', '[1]'], ['null as a point', '[null]'], ['an array as a point', `[[${point(ok)}]]`], ['a string as a point', '["p"]'],
    ['an unknown member', `[${point(`${ok},"comment":"x"`)}]`], ['a verdict that is not the readings\' one', `[${point(`${ok},"verdict":"fail"`)}]`],
    ['a found_verdict that is no verdict', `[${point(`${ok},"found_verdict":"x"`)}]`],
    ['no name', `[{${ok}}]`], ['an empty name', `[{"name":"",${ok}}]`], ['a 201-character name', `[{"name":"${'n'.repeat(201)}",${ok}}]`],
    ['a number as name', `[{"name":5,${ok}}]`], ['a null name', `[{"name":null,${ok}}]`],
    ['a number as unit', `[${point(`"unit":5,${ok}`)}]`], ['a boolean as unit', `[${point(`"unit":true,${ok}`)}]`],
    ['a reading as a string', `[${point('"lower_limit":1,"as_found":"1"')}]`], ['a limit as a string', `[${point('"lower_limit":"1","as_found":2')}]`],
    ['an uncertainty as a string', `[${point(`${ok},"uncertainty":"0.1"`)}]`], ['a nominal as a string', `[${point(`${ok},"nominal":"2"`)}]`],
    ['a reading of 1e999', `[${point('"lower_limit":1,"as_found":1e999')}]`], ['a limit of -1e999', `[${point('"lower_limit":-1e999,"as_found":2')}]`],
    ['an upper limit of 1e999', `[${point('"upper_limit":1e999,"as_found":2')}]`], ['an uncertainty of 1e999', `[${point(`${ok},"uncertainty":1e999`)}]`],
    ['lower above upper', `[${point('"lower_limit":20,"upper_limit":10,"as_found":15')}]`],
    ['lower above upper by 1e-9', `[${point('"lower_limit":0.300000001,"upper_limit":0.3,"as_found":0.3')}]`],
    ['nominal below lower', `[${point('"lower_limit":10,"upper_limit":20,"nominal":9.99,"as_found":15')}]`],
    ['nominal above upper', `[${point('"lower_limit":10,"upper_limit":20,"nominal":20.01,"as_found":15')}]`],
    ['nominal below a lower limit alone', `[${point('"lower_limit":1,"nominal":0.5,"as_found":15')}]`],
    ['nominal above an upper limit alone', `[${point('"upper_limit":0.1,"nominal":0.2,"as_found":0')}]`],
    ['no limits', `[${point('"as_found":1')}]`], ['null limits', `[${point('"lower_limit":null,"upper_limit":null,"nominal":1,"as_found":1')}]`],
    ['no readings', `[${point('"lower_limit":1')}]`], ['null readings', `[${point('"lower_limit":1,"as_found":null,"as_left":null')}]`],
    ['a negative uncertainty', `[${point(`${ok},"uncertainty":-0.1`)}]`], ['a tiny negative uncertainty', `[${point(`${ok},"uncertainty":-1e-30`)}]`],
    ['a boolean reading', `[${point('"lower_limit":1,"as_found":true')}]`], ['a boolean as left', `[${point('"lower_limit":1,"as_found":2,"as_left":false')}]`],
    ['an object reading', `[${point('"lower_limit":1,"as_found":{"v":2}')}]`], ['one bad point among good ones', `[${point(ok)},${point('"as_found":1')}]`],
  ];
  for (const [what, text] of CASES) it(`refuses ${what} with 400 invalid_value for points`, () => refused(text));

  it('accepts 500 points, a 200-character name, limits equal to each other, nominal on a limit, U of 0, a unit given', () => {
    const many = readPoints(`[${Array.from({ length: 500 }, () => point('"lower_limit":1,"as_found":2')).join(',')}]`);
    assert.equal(many.length, 500);
    assert.equal(resultOf(many), 'pass');
    assert.equal(one('"lower_limit":1,"as_found":2').unit, '');
    const p = readPoints(`[{"name":"${'Ω'.repeat(200)}","unit":"MΩ","lower_limit":5,"upper_limit":5,"nominal":5,"as_found":5,"uncertainty":0}]`)[0]!;
    assert.deepEqual([p.name.length, p.unit, p.verdict], [200, 'MΩ', 'pass']);
    assert.equal(one('"lower_limit":1,"nominal":1,"as_found":2,"uncertainty":null').verdict, 'pass');
  });
});

describe('the stored points', () => {
  it('hold every member in order, numbers as written, and the verdicts', () => {
    const text = '[{"as_found":1.50,"uncertainty":0.010,"upper_limit":1e2,"name":"V \\"dc\\"","lower_limit":-2.5E-3,"unit":"V"},'
      + '{"name":"R","upper_limit":0.1,"as_left":0.100,"as_found":2.5E+3,"nominal":0.05}]';
    assert.equal(pointsJson(readPoints(text)), '[{"name":"V \\"dc\\"","unit":"V","nominal":null,"lower_limit":-2.5E-3,"upper_limit":1e2,'
      + '"as_found":1.50,"as_left":null,"uncertainty":0.010,"found_verdict":"pass","left_verdict":null,"verdict":"pass"},'
      + '{"name":"R","unit":"","nominal":0.05,"lower_limit":null,"upper_limit":0.1,"as_found":2.5E+3,"as_left":0.100,"uncertainty":null,'
      + '"found_verdict":"fail","left_verdict":"pass","verdict":"pass"}]');
    assert.equal(pointsJson([]), '[]');
  });
});

// ---- Random checks against a plain model of the rules --------------------------

/** Every generated number is an integer count of 10^-6, written as decimal text in one of several styles. */
const SCALE = 6;
function textOf(v: bigint, style: number, pad: number): string {
  let m = v;
  let k = SCALE;
  while (k > 0 && m % 10n === 0n) { m /= 10n; k--; }
  m *= 10n ** BigInt(pad);
  k += pad;
  const sign = m < 0n ? '-' : '';
  const digits = (m < 0n ? -m : m).toString();
  if (style === 1) return `${m}e-${k}`;
  if (style === 2) return `${m}E-${k}`;
  if (style === 3) {
    const exp = digits.length - 1 - k;
    return `${sign}${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}e${exp >= 0 ? '+' : ''}${exp}`;
  }
  const padded = digits.padStart(k + 1, '0');
  const whole = padded.slice(0, padded.length - k);
  return `${sign}${whole}${k > 0 ? `.${padded.slice(padded.length - k)}` : ''}`;
}

const value = fc.tuple(fc.integer({ min: -3000, max: 3000 }), fc.integer({ min: 0, max: 3 })).map(([n, k]) => BigInt(n) * 10n ** BigInt(SCALE - k));
const style = fc.tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 2 }));
const abs = (v: bigint) => (v < 0n ? -v : v);

interface Spec { lower: bigint | null; upper: bigint | null; nominal: bigint | null; u: bigint | null; found: bigint | null; left: bigint | null }
const MEMBERS = ['nominal', 'lower_limit', 'upper_limit', 'as_found', 'as_left', 'uncertainty'] as const;
const specValues = (s: Spec) => [s.nominal, s.lower, s.upper, s.found, s.left, s.u];

/** A reading: anywhere, or on a limit ± U, give or take a little. */
const reading = fc.oneof(
  value.map((v) => ({ edge: false as const, v })),
  fc.record({ edge: fc.constant(true as const), upperSide: fc.boolean(), sign: fc.integer({ min: -1, max: 1 }), delta: fc.integer({ min: -1, max: 1 }), step: value }),
);
type Reading = typeof reading extends fc.Arbitrary<infer R> ? R : never;

const spec = fc.record({
  a: value, b: value, sides: fc.constantFrom('both', 'lower', 'upper'), u: fc.option(value), nominal: fc.option(value),
  found: reading, left: reading, readings: fc.constantFrom('found', 'left', 'both'),
}).map(({ a, b, sides, u, nominal, found, left, readings }): Spec => {
  const lower = sides === 'upper' ? null : (a < b ? a : b);
  const upper = sides === 'lower' ? null : (a < b ? b : a);
  const band = u === null ? null : abs(u);
  const at = (r: Reading) => {
    if (!r.edge) return r.v;
    const base = (r.upperSide ? upper : lower) ?? lower ?? upper ?? 0n;
    return base + BigInt(r.sign) * (band ?? 0n) + BigInt(r.delta) * (abs(r.step) % 1000n + 1n);
  };
  let nom = nominal;
  if (nom !== null && lower !== null && nom < lower) nom = lower;
  if (nom !== null && upper !== null && nom > upper) nom = upper;
  return { lower, upper, nominal: nom, u: band, found: readings === 'left' ? null : at(found), left: readings === 'found' ? null : at(left) };
});

/** The rule, in integers at the common scale. */
function modelVerdict(x: bigint, lower: bigint | null, upper: bigint | null, u: bigint | null): Verdict {
  const g = u ?? 0n;
  if ((lower !== null && x < lower - g) || (upper !== null && x > upper + g)) return 'fail';
  return (lower === null || x >= lower + g) && (upper === null || x <= upper - g) ? 'pass' : 'conditional';
}

const written = fc.record({ styles: fc.array(style, { minLength: 6, maxLength: 6 }), reversed: fc.boolean(), explicitNulls: fc.boolean() });
/** A point's JSON text; its numbers' texts beside it (null where not given). */
function pointText(s: Spec, i: number, w: { styles: [number, number][]; reversed: boolean; explicitNulls: boolean }) {
  const texts = specValues(s).map((v, j) => (v === null ? null : textOf(v, ...w.styles[j]!)));
  const members = [`"name":"p${i}"`, ...MEMBERS.flatMap((m, j) => (texts[j] === null ? (w.explicitNulls ? [`"${m}":null`] : []) : [`"${m}":${texts[j]}`]))];
  return { text: `{${(w.reversed ? members.reverse() : members).join(',')}}`, texts };
}

const check = fc.array(fc.tuple(spec, written), { minLength: 1, maxLength: 8 });

describe('random points', () => {
  it('every verdict and the result are the rules applied to the readings, exactly', () => {
    fc.assert(fc.property(check, (specs) => {
      const points = readPoints(`[${specs.map(([s, w], i) => pointText(s, i, w).text).join(',')}]`);
      const expected = specs.map(([s]) => {
        const found = s.found === null ? null : modelVerdict(s.found, s.lower, s.upper, s.u);
        const left = s.left === null ? null : modelVerdict(s.left, s.lower, s.upper, s.u);
        return { found, left, verdict: left ?? found };
      });
      assert.deepEqual(points.map((p) => ({ found: p.found, left: p.left, verdict: p.verdict })), expected);
      const result = expected.some((e) => e.verdict === 'fail') ? 'fail'
        : expected.some((e) => e.verdict === 'conditional') ? 'conditional'
          : expected.some((e) => e.found === 'fail' || e.found === 'conditional') ? 'adjusted' : 'pass';
      assert.equal(resultOf(points), result);
    }), { numRuns: 1000 });
  });

  it('the stored points keep every number as written, and read back to the same stored points', () => {
    fc.assert(fc.property(check, (specs) => {
      const made = specs.map(([s, w], i) => pointText(s, i, w));
      const stored = pointsJson(readPoints(`[${made.map((m) => m.text).join(',')}]`));
      const tree = parseJson(stored);
      assert.ok(Array.isArray(tree));
      const back = tree.map((p, i) => {
        assert.ok(p instanceof JsonObject);
        assert.deepEqual([...p.entries.keys()], ['name', 'unit', ...MEMBERS, 'found_verdict', 'left_verdict', 'verdict']);
        assert.deepEqual(MEMBERS.map((m) => { const v = p.entries.get(m); return v === null || v === undefined ? null : stringifyJson(v); }), made[i]!.texts);
        for (const k of ['found_verdict', 'left_verdict', 'verdict']) p.entries.delete(k);
        return stringifyJson(p);
      });
      assert.equal(pointsJson(readPoints(`[${back.join(',')}]`)), stored);
    }), { numRuns: 300 });
  });

  it('moving a reading toward the centre of its limits never worsens its verdict', () => {
    const rank: Record<Verdict, number> = { pass: 0, conditional: 1, fail: 2 };
    fc.assert(fc.property(spec, value, fc.nat(5_000_000), style, style, (s, x, d, sx, sy) => {
      const { lower, upper, u } = s;
      let y: bigint;
      if (lower !== null && upper !== null) {
        const twice = lower + upper;
        const floorHalf = twice >= 0n ? twice / 2n : -((-twice + 1n) / 2n);
        if (2n * x < twice) y = x + BigInt(d) < floorHalf ? x + BigInt(d) : floorHalf;
        else if (2n * x > twice) y = x - BigInt(d) > twice - floorHalf ? x - BigInt(d) : twice - floorHalf;
        else y = x;
      } else y = lower !== null ? x + BigInt(d) : x - BigInt(d);
      const at = (v: bigint | null, w: [number, number]) => (v === null ? null : dec(textOf(v, ...w)));
      const before = verdictOf(dec(textOf(x, ...sx)), at(lower, sx), at(upper, sy), at(u, sy));
      const after = verdictOf(dec(textOf(y, ...sy)), at(lower, sy), at(upper, sx), at(u, sx));
      assert.ok(rank[after] <= rank[before], `${x} → ${y}: ${before} → ${after}`);
      assert.equal(before, modelVerdict(x, lower, upper, u));
    }), { numRuns: 1000 });
  });
});
