import { test } from 'node:test';
import { createBaton } from 'tab-baton';
import { createIndexedDB } from '/work/main/tests/node/helpers/fake-indexeddb.js';
import { leaderIndexes, openTabs, waitFor, sleep } from '/work/main/tests/node/helpers/tabs.js';
const FAST = { heartbeatMs: 40, suspectMs: 150, leaseMs: 300 };
test('dbg', async () => {
  for (let round = 0; round < 6; round++) {
    const idb = createIndexedDB();
    const { tabs } = openTabs(3, { indexedDB: idb.indexedDB });
    const batons = tabs.map((tab) => createBaton({ namespace: 'modes', id: tab.id, env: tab.env, ...FAST, authority: 'lease' }));
    const handles = batons.map((b) => b.lead('ws'));
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [first] = leaderIndexes(handles);
    batons[first].dispose();
    await waitFor(() => leaderIndexes(handles).length === 1);
    const [second] = leaderIndexes(handles);
    const ok = batons[second].log().some((t) => t.to === 'candidate' && t.reason === 'leader-goodbye');
    if (!ok) { for (const i of [0,1,2]) if (i !== first) console.log(i, i===second?'LEADER':'', JSON.stringify(batons[i].log().map(t=>[t.at%100000,t.from,t.to,t.reason]))); }
    console.log('round', round, ok);
    batons.forEach((b) => b.dispose());
  }
});
