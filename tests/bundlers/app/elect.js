// What the scratch app does in a page or a worker: one Baton, one resource; once this tab
// leads, it asks the leader (itself) through `request`, whose code the package imports on
// first use (a chunk the bundler must emit and load), and reports the answer with the
// core's status, or the load failure's message.
import { createBaton, ready } from 'tab-baton';

export function elect(report) {
  const baton = createBaton({ namespace: `bundler-app-${Math.random()}` });
  const handle = baton.lead('job', { serve: (message) => `${message}-pong` });
  let asked = false;
  const check = () => {
    if (handle.state() !== 'leader' || asked) return;
    asked = true;
    baton.request('job', 'ping', { timeoutMs: 30_000 }).then(
      (answer) => report({ state: 'leader', core: baton.support().core, answer }),
      (error) => report({ error: `request: ${error.message}`, core: baton.support().core }),
    );
  };
  handle.onChange(check);
  ready.then(check, (error) => report({ error: error.message, core: baton.support().core }));
}
