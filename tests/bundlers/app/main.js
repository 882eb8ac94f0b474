// The scratch app: elects with createBaton, then runs the unload check of the
// broadcast-channel drop-in, and reports on the page (window.__result).
import { elect } from './elect.js';
import { unloadKillsLeader } from './unload-check.js';

elect((result) => {
  if (result.error) {
    window.__result = result;
    return;
  }
  unloadKillsLeader().then(
    (unloaded) => (window.__result = { ...result, unloaded }),
    (error) => (window.__result = { ...result, error: `unload check: ${error.message}` }),
  );
});
