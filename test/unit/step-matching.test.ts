// Unit tests of step matching on the native match indices (steps/support/stepMatching.ts): for
// generated cucumber expressions and regular expressions, with parameter types whose own regular
// expressions nest groups, optional and alternative text, and texts that match or not, the group
// tree (values, starts, ends, children) is the one cucumber-expressions' polyfill gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fc from 'fast-check';
import { CucumberExpression, ParameterType, ParameterTypeRegistry, RegularExpression, type Group } from '@cucumber/cucumber-expressions';
import { nativeMatch, polyfilledMatch } from '../../steps/support/stepMatching';

interface TreeRegexpLike {
  readonly regexp: RegExp;
  readonly groupBuilder: { build(match: RegExpExecArray, nextGroupIndex: () => number): Group };
  match(text: string): Group | null;
}

const registry = new ParameterTypeRegistry();
// Like the suite's own parameter types: alternatives, nested and optional groups, groups that take no part.
registry.defineParameterType(new ParameterType('duration', /(\d+(?:\.(\d+))?) ?(ms|s|µs)|(forever)/, null, (...parts: string[]) => parts.join('|'), true, false));
registry.defineParameterType(new ParameterType('ranks', /(?:rank (\d+))(?:, rank (\d+))?/, null, (...parts: string[]) => parts.join('|'), true, false));

/** A group tree as plain data. */
const tree = (group: Group | null): unknown => (group === null ? null : { value: group.value, start: group.start, end: group.end, children: group.children?.map(tree) });

const treeRegexpOf = (expression: CucumberExpression | RegularExpression) => (expression as unknown as { treeRegexp: TreeRegexpLike }).treeRegexp;

function sameGroups(expression: CucumberExpression | RegularExpression, text: string): void {
  const treeRegexp = treeRegexpOf(expression);
  assert.deepEqual(tree(nativeMatch.call(treeRegexp, text)), tree(polyfilledMatch.call(treeRegexp, text)), `${expression.source} on ${JSON.stringify(text)}`);
}

/** One part of a step: how the expression says it and texts that say it. */
const part: fc.Arbitrary<{ expression: string; text: fc.Arbitrary<string> }> = fc.oneof(
  fc.constantFrom('the', 'router', 'places', 'requests').map((word) => ({ expression: word, text: fc.constant(word) })),
  fc.constant({ expression: '{int}', text: fc.integer({ min: -999, max: 99999 }).map(String) }),
  fc.constant({ expression: '{float}', text: fc.double({ min: -1e4, max: 1e4, noNaN: true }).map((n) => String(Math.round(n * 100) / 100)) }),
  fc.constant({ expression: '{word}', text: fc.constantFrom('kv', 'round_robin', 'G2') }),
  fc.constant({ expression: '{string}', text: fc.constantFrom('"a b"', "'c'", '""') }),
  fc.constant({ expression: '{duration}', text: fc.constantFrom('12 ms', '1.5 s', '3µs', 'forever') }),
  fc.constant({ expression: '{ranks}', text: fc.constantFrom('rank 1', 'rank 2, rank 3') }),
  fc.constant({ expression: 'request(s)', text: fc.constantFrom('request', 'requests') }),
  fc.constant({ expression: 'worker/rank', text: fc.constantFrom('worker', 'rank') }),
);

test('generated cucumber expressions: the native match indices give the polyfill\'s groups, on texts that match and texts that do not', () => {
  fc.assert(
    fc.property(
      fc.array(part, { minLength: 1, maxLength: 6 }).chain((parts) => fc.tuple(fc.constant(parts.map((p) => p.expression).join(' ')), fc.tuple(...parts.map((p) => p.text)).map((texts) => texts.join(' ')), fc.string({ maxLength: 6 }))),
      ([source, text, noise]) => {
        const expression = new CucumberExpression(source, registry);
        sameGroups(expression, text);
        sameGroups(expression, `${text}${noise}`);
        sameGroups(expression, `${noise}${text}`);
      },
    ),
    { numRuns: 500, seed: 7 },
  );
});

test('regular expressions with nested, optional and non-participating groups, and one with the g flag (its lastIndex is state: the polyfill keeps it)', () => {
  const cases: [RegExp, string[]][] = [
    [/^a ((b)|(c)) d(?: (e))?$/, ['a b d', 'a c d e', 'a bc d', 'a d', 'x']],
    [/^(?<name>\w+) waits (\d+) ms(?:, then (\d+))?$/, ['w waits 3 ms', 'w waits 3 ms, then 4', 'waits']],
  ];
  for (const [regexp, texts] of cases) {
    for (const text of texts) sameGroups(new RegularExpression(regexp, registry), text);
  }
  // Each side its own RegExp: a match moves the lastIndex of the one it ran on.
  const [mine, theirs] = [treeRegexpOf(new RegularExpression(/(\d+)/g, registry)), treeRegexpOf(new RegularExpression(/(\d+)/g, registry))];
  for (let time = 0; time < 4; time++) assert.deepEqual(tree(nativeMatch.call(mine, '1 2 3')), tree(polyfilledMatch.call(theirs, '1 2 3')));
});

test('a step definition matches through the native indices once the steps are loaded', () => {
  const expression = new CucumberExpression('the router waits {duration}', registry);
  assert.equal(treeRegexpOf(expression).match, nativeMatch);
  assert.deepEqual(expression.match('the router waits 1.5 s')!.map((argument) => argument.getValue(null)), ['1.5|s|']);
});

test("the cucumber-expressions that cucumber itself loads is the copy the steps patch (an upgrade that nests its own copy would silently match through the polyfill again)", () => {
  const cucumbers = path.dirname(require.resolve('@cucumber/cucumber'));
  assert.equal(require.resolve('@cucumber/cucumber-expressions', { paths: [cucumbers] }), require.resolve('@cucumber/cucumber-expressions'));
});

test('a group repeated by a quantifier: the same values, and the indices of its last repetition, where the engine puts them (the polyfill puts them at an earlier one)', () => {
  const treeRegexp = treeRegexpOf(new RegularExpression(/^a ((b)|(c))+ d$/, registry));
  const native = nativeMatch.call(treeRegexp, 'a bc d')!;
  const polyfilled = polyfilledMatch.call(treeRegexp, 'a bc d')!;
  const values = (group: Group): unknown => [group.value, group.children?.map(values)];
  assert.deepEqual(values(native), values(polyfilled));
  assert.deepEqual([native.children![0].value, native.children![0].start, native.children![0].end], ['c', 3, 4]);
});
