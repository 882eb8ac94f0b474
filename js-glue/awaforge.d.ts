export { leaderElection } from './index.js';
export type { CreateOpts, Election, SupportInfo } from './index.js';
