// Step matching with the engine's own match indices. cucumber-expressions (19.0.0, which cucumber
// 12.9 pins; 20.1 still does it) finds where each parameter of a step's text starts with the package
// regexp-match-indices, which never takes the native indices: it checks for them on a RegExp without
// the `d` flag, which has none, and so takes its polyfill, which parses the expression's regular
// expression again and compiles a new one for every match. Cucumber matches every step of every
// scenario against every step definition when it assembles a run, and again when a step runs: about
// a sixth of a suite run's CPU went there. Installed when the steps load (any profile, in any
// process), TreeRegexp.match here asks a copy of the expression's RegExp with the `d` flag, made
// once per RegExp, for the same groups with the same values, starts and ends (the one difference:
// a group repeated by a quantifier, which the polyfill places at an earlier repetition, is where the
// engine puts it, at its last; its value was the last one's either way). A RegExp with the `g` or
// `y` flag (whose lastIndex is state) keeps the polyfill. test/unit/step-matching.test.ts compares
// the two on generated expressions and texts; every scenario of the suite runs through it.
import { CucumberExpression, ParameterTypeRegistry, type Group } from '@cucumber/cucumber-expressions';

/** What cucumber-expressions' TreeRegexp holds (the class is not exported; its prototype is reached through an expression). */
interface TreeRegexpLike {
  readonly regexp: RegExp;
  readonly groupBuilder: { build(match: RegExpExecArray, nextGroupIndex: () => number): Group };
  match(text: string): Group | null;
}

const INSTALLED = Symbol.for('kvqual.stepMatching.installed');

const treeRegexpPrototype = Object.getPrototypeOf((new CucumberExpression('kvqual', new ParameterTypeRegistry()) as unknown as { treeRegexp: TreeRegexpLike }).treeRegexp) as TreeRegexpLike & { [INSTALLED]?: true };

/** cucumber-expressions' own TreeRegexp.match (through the polyfill), as the package ships it. */
export const polyfilledMatch: (this: TreeRegexpLike, text: string) => Group | null = treeRegexpPrototype[INSTALLED] ? (treeRegexpPrototype as unknown as { polyfilledMatch: TreeRegexpLike['match'] }).polyfilledMatch : treeRegexpPrototype.match;

/** Each expression's RegExp with the `d` flag, made on its first match. */
const withIndices = new WeakMap<RegExp, RegExp>();

/** TreeRegexp.match on the native match indices: the same group tree as polyfilledMatch. */
export function nativeMatch(this: TreeRegexpLike, text: string): Group | null {
  const regexp = this.regexp;
  if (regexp.global || regexp.sticky) return polyfilledMatch.call(this, text);
  let indexed = withIndices.get(regexp);
  if (indexed === undefined) withIndices.set(regexp, (indexed = new RegExp(regexp.source, `${regexp.flags}d`)));
  const match = indexed.exec(text);
  if (match === null) return null;
  let groupIndex = 0;
  return this.groupBuilder.build(match, () => groupIndex++);
}

if (!treeRegexpPrototype[INSTALLED]) {
  Object.assign(treeRegexpPrototype, { polyfilledMatch, [INSTALLED]: true });
  treeRegexpPrototype.match = nativeMatch;
}
