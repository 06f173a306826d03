// The run's nonce in its own message stream: `npm run qualify` gives each cucumber run a fresh
// nonce (KVQUAL_RUN_NONCE) and records it; this BeforeAll hook, named after it, carries it into the
// stream (cucumber writes every hook's name there), so a stream copied from another run does not
// carry this run's nonce (src/signoff/shardTrust.ts). Without the variable there is no hook.
import { BeforeAll } from '@cucumber/cucumber';
import { NONCE_HOOK_PREFIX, RUN_NONCE_ENV } from '../../src/signoff/shardTrust';

const nonce = process.env[RUN_NONCE_ENV];
if (nonce !== undefined && nonce !== '') {
  BeforeAll({ name: `${NONCE_HOOK_PREFIX}${nonce}` }, function () {
    // Nothing to do: the hook's name is the record.
  });
}
