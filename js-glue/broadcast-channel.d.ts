export { createLeaderElection } from './index.js';
