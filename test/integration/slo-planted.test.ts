// The SLO scenarios of features/slo/ can fail: the same claims, planted with objectives clearly
// stricter than what the runs measure, fail in a real cucumber run, each with one plain sentence
// naming the metric, the limit and the measured value; each card's chart still comes with it and
// says the claim missed. (Needs the published traces; see src/traceFolder.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../support/paths';
import { traceFolder } from '../../src/traceFolder';
import { EVIDENCE_MEDIA_TYPE, parseEvidence } from '../../src/report/evidence';

const haveTrace = fs.existsSync(path.join(traceFolder(ROOT), 'conversation_trace.jsonl'));

const PLANTED = `Feature: planted stricter objectives

  @SLO-1
  Scenario: p99 planted
    Given the Mooncake conversation trace, first 500 requests, on 8 aggregated workers with the reference serving profile
    When the trace is replayed with KV-aware routing
    Then p99 time to first token is at most 1.5 s

  @SLO-2
  Scenario: goodput planted
    Given the Mooncake conversation trace, first 500 requests, on 8 aggregated workers with the reference serving profile
    When the trace is replayed with KV-aware routing
    Then goodput with time to first token at most 2 s and inter-token latency at most 100 ms is at least 99.5 %

  @SLO-3
  Scenario: ratio planted
    Given the Mooncake conversation trace, first 500 requests, on 2 aggregated workers with the reference serving profile
    When the trace is replayed with KV-aware routing
    Then KV-aware routing beats round robin on p99 time to first token by at least 2 times

  @SLO-4
  Scenario: ceiling planted
    Given the Mooncake conversation trace, first 500 requests, on 8 aggregated workers with the reference serving profile
    When the trace is replayed with KV-aware routing
    Then prefix reuse is at least 90 % of the infinite-cache ceiling
`;

test('each SLO claim made clearly stricter fails, its message naming the metric, the limit and the measured value', { skip: !haveTrace && `no published traces at ${traceFolder(ROOT)} (set KVQUAL_TRACES)` }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvqual-slo-'));
  try {
    const feature = path.join(dir, 'planted.feature');
    fs.writeFileSync(feature, PLANTED);
    const cucumber = path.join(ROOT, 'node_modules', '@cucumber', 'cucumber', 'bin', 'cucumber.js');
    const messages = path.join(dir, 'messages.ndjson');
    const result = spawnSync(process.execPath, [cucumber, '--profile', 'replay', feature, '--format', 'summary', '--format', `message:${messages}`], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    const output = `${result.stdout}${result.stderr}`;
    assert.equal(result.status, 1, output);
    assert.match(output, /^4 scenarios \(4 failed\)$/m);
    assert.match(output, /p99 time to first token \(SLO: at most 1500 ms\): expected at most 1500 ms, measured 1822\.16202 ms\./);
    assert.match(output, /goodput \(time to first token at most 2000 ms, inter-token latency at most 100 ms\) \(SLO: at least 99\.5 %\): expected at least 99\.5 %, measured 98\.8 %\./);
    assert.match(output, /round robin's p99 time to first token ÷ KV-aware routing's \(SLO: at least 2×\): expected at least 2 ×, measured 1\.6574 ×\./);
    assert.match(output, /prefix reuse as a share of the infinite-cache ceiling \(block-weighted\) \(SLO: at least 90 %\): expected at least 90 %, measured 80\.158 %\./);
    // A failed claim's card still draws its chart, and says it missed.
    const claims = fs
      .readFileSync(messages, 'utf8')
      .split('\n')
      .filter((line) => line.includes(EVIDENCE_MEDIA_TYPE))
      .flatMap((line) => parseEvidence(JSON.parse(line).attachment.body).slo ?? []);
    assert.deepEqual(
      claims.map((claim) => [claim.sentence, claim.met, claim.panels.length]),
      [
        ['p99 time to first token 1.822 s > SLO 1.5 s', false, 1],
        ['goodput 98.8 % < SLO 99.5 %', false, 2],
        ['p99 time to first token: round robin 5.266 s ÷ KV-aware routing 3.178 s = 1.6574× < SLO 2×', false, 1],
        ['prefix reuse 80.16 % of the infinite-cache ceiling (block-weighted) < SLO 90 %', false, 0],
      ],
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
