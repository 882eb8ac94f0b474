export { requestLeadership } from './index.js';
export type { RequestLeadershipOptions } from './index.js';
