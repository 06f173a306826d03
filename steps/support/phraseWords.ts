// A step's phrase in words, for people: each parameter of a cucumber expression becomes a placeholder
// named by what it stands for (`worker {int} leaves the cluster at {duration}` → `worker <worker>
// leaves the cluster at <time>`), from its type and the words around it. docs/steps.md and the
// "did you mean" message of an undefined step both show phrases this way. Pure: no cucumber here.

/** Each parameter type's placeholder when the words around it name nothing better. */
export const TYPE_PLACEHOLDERS: Record<string, string> = {
  duration: '<time>',
  count: '<number>',
  tokens: '<n tokens>',
  blocks: '<n blocks>',
  bandwidth: '<n GB/s>',
  tier: '<tier>',
  weight: '<decimal>',
  int: '<number>',
  float: '<decimal>',
  word: '<word>',
  string: '"<text>"',
  '': '<text>',
};

/** Placeholders named by the words before or after them, more telling than the type's own (first match wins). */
const NAMED_PLACEHOLDERS: { before?: RegExp; after?: RegExp; type: string; placeholder: string }[] = [
  { before: /\bdp rank $/, type: 'int', placeholder: '<dp rank>' },
  { before: /\bworkers? (?:\{int\} and )?$/, type: 'int', placeholder: '<worker>' },
  { before: /\bevent $/, type: 'int', placeholder: '<event id>' },
  { before: /\bblocks? (?:\{int\} to )?$/, type: 'int', placeholder: '<block number>' },
  { before: /\bseeds 1 to $/, type: 'int', placeholder: '<last seed>' },
  { before: /\brequests? $/, type: 'word', placeholder: '<request id>' },
  { before: /\bthe $/, after: /^ rank profile/, type: 'word', placeholder: '<profile>' },
  { before: /\bpage $/, type: 'word', placeholder: '<file>' },
  { before: /\btier $/, type: 'word', placeholder: '<tier>' },
  { before: /\bset to $/, type: 'word', placeholder: '<value>' },
  { before: /\bconversation $/, type: 'string', placeholder: '"<conversation>"' },
  { before: /\beach of $/, type: 'string', placeholder: '"<section, section, …>"' },
  { before: /\b(?:starting with|start with|prefix|storing|removes|of|prompts) $/, type: 'string', placeholder: '"<prefix>"' },
  { before: /\bthen $/, type: 'string', placeholder: '"<prefix>"' },
  { before: /\band $/, after: /^ then /, type: 'string', placeholder: '"<prefix>"' },
  { before: /\bplay $/, type: 'string', placeholder: '"<play>"' },
  { before: /(?:\brequest|\beach|\{int\}) $/, type: 'string', placeholder: '"<request name>"' },
  { before: /\bon workers $/, type: 'string', placeholder: '"<worker, worker, …>"' },
  { before: /\bhash ids (?:\{string\} and )?$/, type: 'string', placeholder: '"<id, id, …>"' },
  { before: /\brefused at $/, type: 'string', placeholder: '"<place in the config>"' },
  { before: /\bat \{string\}: $/, type: 'string', placeholder: '"<message>"' },
  { before: /\bits $/, type: 'string', placeholder: '"<contract term>"' },
  { before: /\bsays $/, type: 'string', placeholder: '"<reason>"' },
  { before: /so that $/, type: '', placeholder: '<change>' },
];

/** A phrase with its placeholders in words: `worker {int} leaves the cluster at {duration}` → `worker <worker> leaves the cluster at <time>`. */
export function wordsOf(pattern: string): string {
  let out = '';
  let rest = pattern.replace(/\\(.)/g, '$1');
  for (let match = /\{(\w*)\}/.exec(rest); match !== null; match = /\{(\w*)\}/.exec(rest)) {
    const before = out + rest.slice(0, match.index);
    const after = rest.slice(match.index + match[0].length);
    const type = match[1];
    const named = NAMED_PLACEHOLDERS.find((n) => n.type === type && (!n.before || n.before.test(before.replace(/<[^>]*>|"<[^>]*>"/g, (p) => (p.startsWith('"') ? '{string}' : '{int}')))) && (!n.after || n.after.test(after)));
    let placeholder = named?.placeholder ?? TYPE_PLACEHOLDERS[type] ?? `<${type}>`;
    if (type === 'tokens') placeholder = /^ (?:trace )?(?:blocks|prompt|request)/.test(after) ? '<n>-token' : '<n> tokens';
    out = before + placeholder;
    rest = after;
  }
  return out + rest;
}
