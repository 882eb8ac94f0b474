// `tab-baton/relay`: one tab owns a server stream and relays it to the others.
export { createRelay } from '../relay.js';
export { eventSourceSource, webSocketSource } from '../relay-sources.js';
