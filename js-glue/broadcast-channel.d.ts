export { createLeaderElection } from './index.js';
export type { DuplicateLeaderEvent, LeaderElectionOptions, LeaderElector } from './index.js';
