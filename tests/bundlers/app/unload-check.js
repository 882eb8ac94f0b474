// broadcast-channel's test "should resolve when leader-process exits", bundled: the app's
// `import 'unload'` and the drop-in's own import of it must be one module, so that the
// app's runAll() kills the leading elector and the other elector takes over.
import { createLeaderElection } from 'tab-baton/broadcast-channel';
import * as unload from 'unload';

export async function unloadKillsLeader() {
  const name = `bundler-unload-${Math.random()}`;
  const channel = new BroadcastChannel(name);
  const channel2 = new BroadcastChannel(name);
  const elector = createLeaderElection(channel);
  const elector2 = createLeaderElection(channel2);
  await elector.awaitLeadership();
  const secondLeads = elector2.awaitLeadership();
  await unload.runAll();
  await secondLeads;
  const result = { firstDead: elector.isDead, secondLeads: elector2.isLeader };
  channel.close();
  channel2.close();
  return result;
}
