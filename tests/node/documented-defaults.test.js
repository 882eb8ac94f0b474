// The timing defaults have one source, the core's Config (wasm/core/election.h), from which
// constants.js is generated; the glue and the compatibility layers take theirs from it. The
// declarations and the package README restate them for readers: this checks that they
// still say what the code does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DEFAULT_HEARTBEAT_MS, DEFAULT_LEASE_MS, DEFAULT_SUSPECT_MS, SUSPECT_HEARTBEATS } from '../../js-glue/src/constants.js';

const read = (file) => readFileSync(new URL(`../../js-glue/${file}`, import.meta.url), 'utf8');

test('index.d.ts and the README state the defaults the code uses', () => {
  const types = read('index.d.ts');
  const readme = read('README.md');
  const said = [
    [types, `Leader heartbeat and presence cadence. Default ${DEFAULT_HEARTBEAT_MS} ms.`],
    [types, `Default ${SUSPECT_HEARTBEATS} × heartbeatMs; must exceed it.`],
    [types, `IndexedDB lease duration. Default ${DEFAULT_LEASE_MS} ms.`],
    // awaforge's takeoverMs and broadcast-channel's fallbackInterval.
    [types, `Default ${DEFAULT_SUSPECT_MS}, or ${SUSPECT_HEARTBEATS} × \`heartbeatMs\` when longer.`],
    [types, `/** Default ${DEFAULT_HEARTBEAT_MS}. */\n  heartbeatMs?: number;`],
    [types, `Default ${DEFAULT_HEARTBEAT_MS}, or a third of \`fallbackInterval\` when shorter.`],
    [readme, `\`takeoverMs\` defaults to ${DEFAULT_SUSPECT_MS} ms, or to ${SUSPECT_HEARTBEATS} × \`heartbeatMs\``],
    [readme, `(default ${DEFAULT_SUSPECT_MS} ms, or\n  ${SUSPECT_HEARTBEATS} × \`heartbeatMs\` when that is longer)`],
    [readme, `\`heartbeatMs\` (default ${DEFAULT_HEARTBEAT_MS} ms, or a third of \`fallbackInterval\``],
  ];
  for (const [text, sentence] of said) assert.ok(text.includes(sentence), `not found: ${sentence}`);
  // "a third" above is one heartbeat of SUSPECT_HEARTBEATS.
  assert.equal(SUSPECT_HEARTBEATS, 3);
});
