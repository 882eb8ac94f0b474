// What the scratch app does in a page or a worker: one Baton, one resource; reports once
// this tab leads (with the core's status), or the load failure's message.
import { createBaton, ready } from 'tab-baton';

export function elect(report) {
  const baton = createBaton({ namespace: `bundler-app-${Math.random()}` });
  const handle = baton.lead('job');
  const check = () => {
    if (handle.state() === 'leader') report({ state: 'leader', core: baton.support().core });
  };
  handle.onChange(check);
  ready.then(check, (error) => report({ error: error.message, core: baton.support().core }));
}
