// What an app ships for a bare navigator.locks election.
export function requestLeadership(name, onLeader) {
  let release;
  navigator.locks.request(name, () => { onLeader(); return new Promise((resolve) => { release = resolve; }); });
  return () => release?.();
}
