// Unit tests of report text: HTML and Markdown escaping, fenced blocks, slugs, replay commands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replayCommand } from '../../src/report/replayCommand';
import { escapeHtml, escapeMarkdown, markdownCode, markdownFence, slug } from '../../src/signoff/text';

test('HTML: markup becomes text', () => {
  assert.equal(escapeHtml(`<script>alert("x")</script> & 'y'`), '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;');
});

test('Markdown: markup, links, emphasis and table pipes are escaped; lines are joined', () => {
  assert.equal(escapeMarkdown('<b>|*x*|</b>\n[a](b)'), '\\<b\\>\\|\\*x\\*\\|\\</b\\> \\[a\\](b)');
});

test('Markdown code spans and fences cannot be closed from inside', () => {
  assert.equal(markdownCode('a`b'), '``a`b``');
  assert.equal(markdownCode('x|y'), '`x\\|y`');
  assert.equal(markdownCode('a``b'), '```a``b```', 'the fence is longer than the longest run');
  assert.equal(markdownCode('`a'), '`` `a ``', 'a backtick at the start is padded');
  assert.equal(markdownCode('a`'), '`` a` ``', 'a backtick at the end is padded');
  assert.equal(markdownFence('```\nstep', 'gherkin'), '````gherkin\n```\nstep\n````');
});

test('slugs', () => {
  assert.equal(slug('features/router/Lag visibility'), 'features-router-lag-visibility');
});

test('replay commands select exactly one scenario and quote what the shell would split', () => {
  assert.equal(replayCommand(1893, 'features/router/lag.feature', 24), 'KVQUAL_SEED=1893 npx cucumber-js --profile replay features/router/lag.feature:24');
  assert.equal(replayCommand(null, "odd dir/it's.feature", 3), `npx cucumber-js --profile replay 'odd dir/it'\\''s.feature:3'`);
});
