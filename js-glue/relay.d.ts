export { createRelay, eventSourceSource, webSocketSource } from './index.js';
