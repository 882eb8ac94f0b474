export { leaderElection } from './index.js';
