export { createRelay, eventSourceSource, webSocketSource } from './index.js';
export type { EventSourceSourceOptions, Relay, RelayEmit, RelayEvent, RelayOptions, RelaySource, RelaySourceEvent, RelayStats, WebSocketSourceOptions } from './index.js';
