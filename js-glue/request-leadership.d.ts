export { requestLeadership } from './index.js';
