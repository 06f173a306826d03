// The names of what qualify publishes in its --out folder: a sign-off's set and a shard's set
// (prepare.ts refuses a folder holding anything else; publish.ts publishes them as one set).
import { ASSETS_DIR } from './markdown';
import { RERUN_MESSAGES } from './model';
import { SHARD_MANIFEST } from './shards';

/** The names a reader opens in the output folder; each is one file (or folder) of the run's set. */
export const SET_NAMES = ['signoff.md', 'signoff.html', 'signoff.json', ASSETS_DIR, 'cucumber.html', 'junit.xml', 'messages.ndjson', RERUN_MESSAGES];
/** What a shard run publishes: its manifest and cucumber's reports of its share (no sign-off). */
export const SHARD_SET_NAMES = [SHARD_MANIFEST, 'cucumber.html', 'junit.xml', 'messages.ndjson', RERUN_MESSAGES];
